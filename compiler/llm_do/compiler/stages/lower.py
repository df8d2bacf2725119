"""Stage 6, lower: build the bundle document (`render` gives it the instructions).

Builds plain dicts typed as the TypedDicts of `llm_do.bundle.model`, the bundle's one declaration
(tests validate the output against it with `llm_do.bundle.schema`); each node gets its hash here.
"""

from __future__ import annotations

import os
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar, cast

from llm_do.bundle.approval import MCP_TOOL_DEFAULT, PYTHON_TOOL_DEFAULT, Approval
from llm_do.bundle.canonical import node_hash
from llm_do.bundle.flow import INERT
from llm_do.bundle.format import BUNDLE_FORMAT, GENERATED_KEY, GENERATED_NOTICE
from llm_do.bundle.mcp_config import config_hash, connection
from llm_do.bundle.mcp_sources import server_files
from llm_do.bundle.model import (
    Bundle,
    CodeNode,
    CostNode,
    DefaultsNode,
    EntryFunctionNode,
    EntryNode,
    FlowsNode,
    SchemaNode,
    ToolNode,
    ToolsetNode,
    UsageLimitsNode,
    WorkerNode,
    WorkerTool,
    WorkerToolset,
)
from llm_do.bundle.names import SERVICE_KIND
from llm_do.bundle.version import VERSION
from llm_do.stdlib.registry import STDLIB_TOOLSETS

from ..analysis.capability_grants import (
    OPAQUE,
    mcp_capability,
    python_tool_capabilities,
    tool_destinations,
    worker_grants,
)
from ..analysis.flows.declassifying import declassifies
from ..syntax.sources import NotText, OutsideRoot, Unreadable
from .check.capabilities import project_inert_acceptances
from .resolved import PythonTool, ResolvedProject, ResolvedTool, ResolvedWorker

if TYPE_CHECKING:
    from ..facts.answers import ClassFact
    from .mcp_servers import McpServerInfo

Hashed = TypeVar("Hashed", ToolNode, ToolsetNode, WorkerNode, EntryFunctionNode)


def _hashed(node: Hashed) -> Hashed:
    node["hash"] = node_hash(node)
    return node


@lru_cache(maxsize=1)
def _prompt_input_schema() -> SchemaNode:
    from llm_do.runtime.args import PromptInput  # the run's input models: only a build lowers a prompt worker

    return {"ref": None, "module": PromptInput.__module__, "qualname": PromptInput.__qualname__,
            "json_schema": PromptInput.model_json_schema()}


def _schema_node(ref: str, fact: ClassFact) -> SchemaNode:
    return {"ref": ref, "module": fact.module, "qualname": fact.qualname, "json_schema": fact.json_schema or {}}


@cache
def _stdlib_node(name: str) -> ToolsetNode:
    descriptor = STDLIB_TOOLSETS[name]
    tools: dict[str, ToolNode] = {
        t.name: _hashed(ToolNode(hash="", name=t.name, description=t.description, parameters=t.parameters,
                                 approval=t.approval, capabilities=list(t.capabilities)))
        for t in descriptor.tools
    }
    return _hashed(ToolsetNode(hash="", name=name, kind="stdlib", tools=tools, capabilities=list(descriptor.capabilities)))


def _python_tool_node(name: str, description: str | None, parameters: dict[str, object] | None, declared: list[str] | None,
                      code: CodeNode | None = None) -> ToolNode:
    node = ToolNode(hash="", name=name, description=description, parameters=parameters or {"type": "object", "properties": {}},
                    approval=PYTHON_TOOL_DEFAULT, capabilities=python_tool_capabilities(name, declared))
    if code is not None:
        node["code"] = code
    return _hashed(node)


def _mcp_node(project: ResolvedProject, server: McpServerInfo) -> ToolsetNode:
    """An MCP server's node: its connection as written (`${VAR}`s unexpanded), the hash of it,
    the tools it exposes as listed at build (the schema the model sees and the run checks), and
    the project files it runs (`mcp_sources`), which become sources of the bundle, with their
    code as `diff` compares a Python tool's (`files_code`)."""
    sources = project.loaded.sources
    settings = server.settings
    written = connection(settings.model_dump())
    files: dict[str, str] = {}
    for rel in server_files(sources.root, written):
        try:
            files[rel] = sources.read(rel, "python" if rel.endswith(".py") else "file").sha256
        except (OSError, OutsideRoot, NotText, Unreadable):
            continue
    tools = {name: _hashed(ToolNode(hash="", name=name, description=t.description, parameters=t.input_schema,
                                    approval=MCP_TOOL_DEFAULT, capabilities=[mcp_capability(server.name, t.name)]))
             for name, t in (server.tools or {}).items()}
    node = ToolsetNode(hash="", name=server.name, kind="mcp", server=written,  # type: ignore[typeddict-item]
                       config_hash=config_hash(written), prefix=settings.prefix, required=settings.required,
                       opaque=settings.opaque, tools=tools, capabilities=_union(tools) if not settings.opaque else [OPAQUE])
    if files:  # absent for a server that runs no project file (a launcher, a remote server)
        from ..code.fingerprint import files_code  # the code index: only for a server that runs project files
        from ..code.project_index import project_code_index

        node["sources"] = files
        code = files_code(project_code_index(project), sorted(files))
        if code is not None:
            node["code"] = code
    return _hashed(node)


def _union(tools: dict[str, ToolNode]) -> list[str]:
    return sorted({c for t in tools.values() for c in t["capabilities"]})


def _toolset_nodes(project: ResolvedProject) -> dict[str, ToolsetNode]:
    nodes: dict[str, ToolsetNode] = {}
    module_tools: dict[str, dict[str, PythonTool]] = {}
    for worker in project.workers.values():
        for use in worker.toolsets:
            if use.kind == "stdlib":
                nodes[use.name] = _stdlib_node(use.name)
            elif use.kind == "mcp" and use.name not in nodes:
                nodes[use.name] = _mcp_node(project, project.mcp_servers[use.name])
            elif use.kind == "python" and use.name not in nodes:
                nodes[use.name] = _python_toolset_node(project, use.name)
        for tool in worker.tools.values():
            if tool.kind == "python_tool":
                py = project.python_tool(worker.name, tool.name)
                assert py is not None, "resolve keeps only tools it found"
                module_tools.setdefault(py.toolset_key, {})[py.fact.name] = py  # once, however many workers list it
    if module_tools:
        nodes.update(_python_tool_nodes(project, module_tools))
    return nodes


def _python_toolset_node(project: ResolvedProject, name: str) -> ToolsetNode:
    """A toolset of a module's `TOOLSETS`."""
    from ..code.fingerprint import toolset_code  # the code index: only for a project with Python
    from ..code.project_index import project_code_index

    ts = project.python_toolsets[name]
    declared = ts.module.capabilities
    tools = {t.name: _python_tool_node(t.name, t.description, t.parameters,
                                       sorted({*declared.get(t.name, ()), *declared.get(ts.fact.name, ())}))
             for t in ts.fact.tools or []}
    node = ToolsetNode(
        hash="", name=name, kind="python", module=ts.module.module, export="TOOLSETS", key=ts.fact.name,
        opaque=ts.fact.tools is None, tools=tools,
        capabilities=_union(tools) if ts.fact.tools is not None else sorted({OPAQUE, *declared.get(ts.fact.name, ())}))
    code = toolset_code(project_code_index(project), ts.module.file, ts.fact.name)
    if code is not None:
        node["code"] = code
    return _hashed(node)


def _python_tool_nodes(project: ResolvedProject, module_tools: dict[str, dict[str, PythonTool]]) -> dict[str, ToolsetNode]:
    """The toolset of each module whose `TOOLS` workers list, with the tools they list."""
    from ..code.fingerprint import tool_code  # the code index: only for a project with Python
    from ..code.project_index import project_code_index

    index = project_code_index(project)
    nodes: dict[str, ToolsetNode] = {}
    for key, py_tools in module_tools.items():
        module = next(iter(py_tools.values())).module
        nodes_of = {t.fact.name: _python_tool_node(t.fact.name, t.fact.description, t.fact.parameters,
                                                   module.capabilities.get(t.fact.name),
                                                   tool_code(index, module.file, t.fact.name))
                    for _, t in sorted(py_tools.items())}
        nodes[key] = _hashed(ToolsetNode(hash="", name=key, kind="python", module=module.module,
                                         export=module.tools_export or "TOOLS", tools=nodes_of, capabilities=_union(nodes_of)))
    return nodes


def _worker_tool(tool: ResolvedTool, destinations: tuple[str, ...] = ()) -> WorkerTool:
    """A worker's `tools[NAME]`: where the tool comes from and its approval; with `rules` and the
    tool's `default` when a conditional rule targets it, and the rules that confine where it sends
    (`destinations`: its `to:` parameters) (see `model.WorkerTool`)."""
    approval = cast(Approval, tool.approval)
    entry = WorkerTool(worker=tool.worker, approval=approval) if tool.kind == "worker" \
        else WorkerTool(toolset=tool.toolset, approval=approval)
    if tool.rules:
        from ..approvals.lower import rule_entry  # here: few projects have conditional rules

        entry["rules"] = [rule_entry(r) for r in tool.rules]
        entry["default"] = cast(Approval, tool.default_approval)
        if destinations:
            from ..analysis.flows.rule_confinement import confining_rules

            if confined_by := confining_rules(tool.rules, destinations):
                entry["confined_by"] = confined_by
    return entry


def _worker_node(project: ResolvedProject, worker: ResolvedWorker, instructions: str) -> WorkerNode:
    front = worker.parsed.front
    toolsets: list[WorkerToolset] = []
    for use in worker.toolsets:
        if use.kind == "worker":
            toolsets.append(WorkerToolset(worker=use.name))
        else:
            entry = WorkerToolset(toolset=use.name, settings=use.settings)
            if use.opaque_approval is not None:
                entry["opaque_approval"] = use.opaque_approval  # type: ignore[typeddict-item]
            toolsets.append(entry)
    for key in dict.fromkeys(t.toolset for t in worker.tools.values() if t.kind == "python_tool"):
        toolsets.append(WorkerToolset(toolset=key, settings={}))
    return _hashed(WorkerNode(
        hash="",
        name=worker.name,
        source=worker.parsed.file,
        description=front.description,
        model=front.model,
        compatible_models=front.compatible_models,
        model_settings=front.model_settings,
        instructions=instructions,
        input=_schema_node(worker.input_ref.text, worker.input_class) if worker.input_class and worker.input_ref
        else _prompt_input_schema(),
        output=_schema_node(worker.output_ref.text, worker.output_class) if worker.output_class and worker.output_ref
        else None,
        toolsets=toolsets,
        tools={name: _worker_tool(t, tool_destinations(project, worker, t) if t.rules else ())
               for name, t in sorted(worker.tools.items())},
        calls=list(worker.calls),
        recursive=front.recursive,
        attachments=front.attachments.model_dump() if front.attachments else None,  # type: ignore[typeddict-item]
        server_side_tools=[t.model_dump() for t in front.server_side_tools],
        capabilities=worker_grants(project, worker),  # type: ignore[typeddict-item]
        **({"declassifies": True} if declassifies(worker) else {}),  # type: ignore[typeddict-item]
        **({"quarantined": True} if front.quarantined else {}),  # type: ignore[typeddict-item]  # absent when false
    ))


def _entry_node(project: ResolvedProject) -> EntryNode:
    """`entry`: the entry worker, or the entry function's node."""
    args = project.manifest.entry.args if project.manifest.entry else None
    fn = project.entry_function
    if fn is None or fn.ref is None:
        return EntryNode(worker=project.entry, args=args)
    fact = fn.fact
    node = EntryFunctionNode(
        hash="",
        name=fn.label,
        source=fn.ref.file,
        module=fn.ref.module,
        qualname=fn.ref.qualname,
        calls=list(fn.calls),
        calls_declared=fn.calls_declared,
        input=_schema_node(fact.input.ref, fact.input) if fact is not None and fact.input is not None
        else _prompt_input_schema(),
    )
    if fn.ref.file is None:
        return EntryNode(function=_hashed(node), args=args)
    from ..code.fingerprint import entry_code  # the code index: only for an entry function
    from ..code.project_index import project_code_index

    code = entry_code(project_code_index(project), fn.ref.file, fn.ref.qualname)
    if code is not None:
        node["code"] = code
    return EntryNode(function=_hashed(node), args=args)


def lower(project: ResolvedProject, instructions: dict[str, str], lock_dir: Path) -> Bundle:
    """The bundle document; `lock_dir` is where the lock will be, for the relative `root`."""
    manifest = project.manifest
    sources = project.loaded.sources
    for rel in project.facts.loaded_files:
        try:
            sources.read(rel, "python")
        except (OSError, OutsideRoot, NotText, Unreadable):
            continue
    function = project.entry_function
    if function is not None and function.ref is not None and function.ref.file is not None:
        try:
            sources.read(function.ref.file, "python")  # imported at run time: verified like every Python source
        except (OSError, OutsideRoot, NotText, Unreadable):
            pass
    limits = manifest.runtime.usage_limits
    toolsets = _toolset_nodes(project)  # before `sources`: an MCP server's files are sources too
    doc: Bundle = {
        GENERATED_KEY: GENERATED_NOTICE,
        "bundle_format": BUNDLE_FORMAT,
        "compiler": {"name": "llm-do", "version": VERSION},
        "digest": "",
        "root": Path(os.path.relpath(project.loaded.root, lock_dir)).as_posix(),
        "name": manifest.name,
        "entry": _entry_node(project),
        "runtime": {
            "max_depth": manifest.runtime.max_depth,
            "approval_mode": manifest.runtime.approval_mode,
            "usage_limits": cast(UsageLimitsNode, limits.model_dump(exclude_none=True)) if limits else None,
        },
        "defaults": cast(DefaultsNode, manifest.defaults.model_dump()),
        "sources": {rel: {"sha256": s.sha256, "kind": s.kind} for rel, s in sorted(sources.files.items())},
        "packages": dict(sorted(project.facts.packages.items())),
        "toolsets": toolsets,
        "workers": {name: _worker_node(project, w, instructions[name]) for name, w in sorted(project.workers.items())},
    }
    services = _services(doc["workers"])
    if services:
        doc["services"] = services
    flows = manifest.flows
    if flows.inputs != "untrusted" or flows.paths or flows.accept:
        inert = project_inert_acceptances(project)
        doc["flows"] = cast(FlowsNode, {"inputs": flows.inputs, "paths": dict(sorted(flows.paths.items())),
                                        "accept": [{**a.model_dump(), **({INERT: True} if i in inert else {})}
                                                   for i, a in enumerate(flows.accept)]})
    cost = manifest.cost.model_dump(exclude_defaults=True)
    if cost:
        if "prices" in cost:
            cost["prices"] = {model: {k: v for k, v in price.items() if v is not None} for model, price in sorted(cost["prices"].items())}
        doc["cost"] = cast(CostNode, cost)
    if project.facts.model_factories:
        modules = project.facts.modules
        doc["model_factories"] = {prefix: modules[rel].module for prefix, rel in sorted(project.facts.model_factories.items())}
    return doc


def _services(workers: dict[str, WorkerNode]) -> dict[str, list[str]]:
    """Service name -> the workers declaring it: the run's check needs no worker node when every
    service is given."""
    out: dict[str, set[str]] = {}
    for name, node in workers.items():
        for grant in node.get("capabilities") or ():
            kind, _, service = grant["capability"].partition(":")
            if kind == SERVICE_KIND:
                out.setdefault(service, set()).add(name)
    return {service: sorted(names) for service, names in sorted(out.items())}

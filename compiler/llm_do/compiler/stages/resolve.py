"""Stage 4, resolve: one symbol table of toolsets, tools and workers; every reference becomes an
edge or a diagnostic, every tool of every worker gets its approval.

The records it produces are in `resolved`; a worker's `toolsets:` and `tools:` are read in
`resolve_toolsets`, an entry function in `resolve_entry`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import partial
from typing import TYPE_CHECKING

from llm_do.stdlib.descriptor import sub_directory
from llm_do.stdlib.registry import STDLIB_TOOLSETS

from .. import codes
from ..approvals.apply import apply_rules
from ..diagnostics import Diagnostic, Location, Related, diagnostic
from ..suggest import did_you_mean, did_you_mean_file
from ..syntax.schema_refs import SchemaRef
from ..syntax.sources import OutsideRoot
from .introspect import SchemaRefs
from .load import LoadedProject, files_beside
from .parse import ParsedWorker
from .resolve_toolsets import listed_once, resolve_tools, resolve_toolsets
from .resolved import PythonScope, PythonTool, PythonToolset, ResolvedProject, ResolvedTool, ResolvedWorker, Unknowns
from .worker_names import name_clash

if TYPE_CHECKING:
    from ..approvals.params import ToolParams
    from ..facts.answers import McpFacts, ModuleFact
    from ..facts.no_python import ProjectFacts
    from .mcp_servers import McpServerInfo


def _python_symbols(modules: list[ModuleFact], diagnostics: list[Diagnostic], *, project: PythonScope | None = None,
                    ) -> tuple[dict[str, PythonToolset], dict[str, PythonTool]]:
    """Every toolset and tool the modules export, by name; a name exported twice is N009 (also a
    directory worker's name that the project's Python, `project`, exports too)."""
    toolsets: dict[str, PythonToolset] = {}
    tools: dict[str, PythonTool] = {}

    def first_export(table: Mapping[str, PythonToolset | PythonTool], outer: Mapping[str, PythonToolset | PythonTool], kind: str, name: str, module: ModuleFact, line: int | None) -> bool:
        first = table.get(name) or outer.get(name)
        if first is None:
            return True
        diagnostics.append(diagnostic(codes.DUPLICATE_PYTHON_NAME,
                                      f"{kind} '{name}' is exported by '{first.module.file}' and '{module.file}'",
                                      Location(file=module.file, line=line)))
        return False

    for module in modules:
        for ts in module.toolsets:
            if first_export(toolsets, project.toolsets if project else {}, "toolset", ts.name, module, ts.line):
                key = ts.name if project is None else f"{module.module}.{ts.name}"
                toolsets[ts.name] = PythonToolset(key=key, module=module, fact=ts)
        for tool in module.tools:
            if first_export(tools, project.tools if project else {}, "tool", tool.name, module, tool.line):
                tools[tool.name] = PythonTool(module=module, fact=tool)
    return toolsets, tools


def _own_python(loaded: LoadedProject, facts: ProjectFacts, project: PythonScope,
                diagnostics: list[Diagnostic]) -> dict[str, PythonScope]:
    """Each directory worker's own tools and toolsets (its `tools.py`), by worker file."""
    out: dict[str, PythonScope] = {}
    for rel, worker_file in loaded.directory_python.items():
        module = facts.modules.get(rel)
        if module is not None:
            toolsets, tools = _python_symbols([module], diagnostics, project=project)
            out[worker_file] = PythonScope(toolsets=toolsets, tools=tools)
    return out


def resolve(
    loaded: LoadedProject, parsed: list[ParsedWorker], refs: SchemaRefs, facts: ProjectFacts, unknowns: Unknowns = Unknowns(),
    function_ref: SchemaRef | None = None,
    mcp_facts: McpFacts | None = None, *, import_python: bool = True,
) -> tuple[ResolvedProject, list[Diagnostic]]:
    diagnostics: list[Diagnostic] = []
    manifest = loaded.manifest
    assert manifest is not None
    project_modules = [m for rel, m in facts.modules.items() if rel not in loaded.directory_python]
    python_toolsets, python_tools = _python_symbols(project_modules, diagnostics)
    own_python = _own_python(loaded, facts, PythonScope(python_toolsets, python_tools), diagnostics)
    reserved = {**{n: "a Python toolset" for n in python_toolsets}, **{n: "a stdlib toolset" for n in STDLIB_TOOLSETS}}
    mcp_servers: dict[str, McpServerInfo] = {}
    if manifest.mcp_servers:
        from .mcp_servers import check_servers  # a project without MCP servers does not load them

        mcp_servers, found = check_servers(loaded, mcp_facts, import_python=import_python, reserved=reserved)
        diagnostics.extend(found)
    python_known = (all(m.error is None and m.complete for m in facts.modules.values()) and facts.failure is None
                    and not unknowns.python)

    workers: dict[str, ResolvedWorker] = {}
    files: dict[str, str] = {}
    for worker in parsed:
        clash = name_clash(worker.name, files, python_toolsets, manifest.mcp_servers)
        if clash is not None:
            first = workers.get(worker.name)
            diagnostics.append(diagnostic(
                clash.code, clash.message, worker.name_location,
                hint=None if first else "rename the worker",
                related=[Related.at(first.parsed.name_location, "first defined here")] if first else [],
            ))
            continue
        workers[worker.name] = ResolvedWorker(parsed=worker)
        files[worker.name] = worker.file

    all_toolsets = {**python_toolsets, **{ts.key: ts for scope in own_python.values() for ts in scope.toolsets.values()}}
    project = ResolvedProject(loaded=loaded, manifest=manifest, workers=workers, facts=facts, python_toolsets=all_toolsets,
                              python_tools=python_tools, entry=manifest.entry_worker, mcp_servers=mcp_servers,
                              own_python={w.name: own_python[w.parsed.file] for w in workers.values() if w.parsed.file in own_python})
    # What a toolsets entry may name, in order of preference for a did-you-mean.
    names = [*STDLIB_TOOLSETS, *sorted(set(python_toolsets) - set(STDLIB_TOOLSETS)), *sorted(mcp_servers), *sorted(workers)]
    for resolved in workers.values():
        incomplete = resolved.parsed.incomplete
        resolved.tools_unknown = bool({"toolsets", "tools"} & incomplete)
        resolved.calls_unknown = bool({"toolsets", "calls"} & incomplete)
        resolve_toolsets(project, resolved, names, python_known, unknowns, diagnostics)
        _resolve_declared_calls(project, resolved, unknowns, diagnostics)
        resolve_tools(project, resolved, python_known, diagnostics)
        _resolve_schemas(project, resolved, refs, diagnostics)
    for resolved in workers.values():  # after every worker's schemas: a rule may test a callee's input
        source = loaded.sources.files.get(resolved.parsed.file)
        apply_rules(resolved, source.text if source else None, partial(_tool_params, project, resolved), diagnostics,
                    always_asked=_always_asked)
    if manifest.entry_function is not None:
        from .resolve_entry import resolve_entry_function  # only for a project with an entry function

        fn = resolve_entry_function(loaded, function_ref, facts.entry_function, project.workers, unknowns.workers,
                                    unknowns.any_worker, diagnostics)
        project.entry_function, project.entry = fn, fn.label
        return project, diagnostics
    if manifest.entry is not None and manifest.entry.calls is not None:
        diagnostics.append(diagnostic(codes.ENTRY_CONFLICT,
                                      "entry.calls is given without entry.function; an entry worker's calls are its toolsets",
                                      loaded.at("entry", "calls"), hint="remove entry.calls, or give entry.function"))
    entry_unknown = unknowns.entry or unknowns.any_worker or manifest.entry_worker in unknowns.workers
    if manifest.entry_worker not in workers and not entry_unknown:
        where = loaded.at("entry", "worker", key=False) if manifest.entry and manifest.entry.worker else loaded.at()
        if workers:
            hint = did_you_mean(manifest.entry_worker, workers)
        elif manifest.worker_files:
            hint = "no worker_files entry matches a worker file (F003 says which), so there is no worker at all"
        else:
            hint = 'worker_files lists no worker file: add them, e.g. "worker_files": ["**/*.worker"]'
        diagnostics.append(diagnostic(codes.UNKNOWN_ENTRY,
                                      f"the entry worker '{manifest.entry_worker}' is not defined", where, hint=hint))
    return project, diagnostics

def _resolve_declared_calls(project: ResolvedProject, worker: ResolvedWorker, unknowns: Unknowns,
                            diagnostics: list[Diagnostic]) -> None:
    """Front matter `calls:`: workers its Python tools call, edges of the graph (not tools)."""
    for _, name, at in listed_once(worker.parsed, "calls", worker.parsed.front.calls, diagnostics):
        if name in project.workers:
            worker.calls.setdefault(name, at)
        elif name in unknowns.workers or unknowns.any_worker:
            worker.calls_unknown = True
        else:
            diagnostics.append(diagnostic(codes.UNKNOWN_CALLED_WORKER, f"calls names '{name}', which is not a worker", at,
                                          hint=did_you_mean(name, project.workers)))


def _resolve_schemas(project: ResolvedProject, worker: ResolvedWorker, refs: SchemaRefs, diagnostics: list[Diagnostic]) -> None:
    parsed = worker.parsed
    facts = project.facts
    for key in ("schema_in_ref", "schema_out_ref"):
        ref = refs.get(parsed, key)
        if ref is None:
            continue
        at = parsed.at(key)
        if key == "schema_in_ref":
            worker.input_ref = ref
        else:
            worker.output_ref = ref
        if ref.file is not None:
            if not os.path.isfile(os.path.join(project.loaded.root, ref.file)):  # False, not OSError, for a name too long
                diagnostics.append(diagnostic(codes.REF_FILE_NOT_FOUND, f"'{ref.file}' in {key} does not exist", at,
                                              hint=did_you_mean_file(ref.file, files_beside(project.loaded.root, ref.file))))
                continue
            try:
                project.loaded.sources.confined(ref.file)
            except OutsideRoot as exc:
                diagnostics.append(diagnostic(codes.PATH_OUTSIDE_ROOT, f"{key} {exc}", at))
                continue
        fact = facts.classes.get(ref.text)
        if fact is None or fact.error is not None:
            continue  # not introspected, or the module failed to import (reported once, as Y001)
        if key == "schema_in_ref":
            worker.input_class = fact
        else:
            worker.output_class = fact
        if (ref.file is None and not facts.imported) or not fact.certain:
            continue
        if not fact.found:
            diagnostics.append(diagnostic(codes.CLASS_NOT_FOUND, f"'{ref.module}' defines no class '{ref.qualname}'", at,
                                          hint=did_you_mean(ref.qualname, fact.candidates)))
        elif key == "schema_in_ref" and not fact.is_worker_args:
            diagnostics.append(diagnostic(codes.NOT_WORKER_ARGS, f"'{ref.qualname}' does not subclass WorkerArgs", at,
                                          hint="derive it from llm_do.runtime.WorkerArgs and implement prompt_messages()"))
        elif key == "schema_in_ref" and fact.abstract:
            diagnostics.append(diagnostic(codes.PROMPT_MESSAGES_MISSING, f"'{ref.qualname}' does not implement prompt_messages()", at,
                                          hint="def prompt_messages(self) -> list[str | Attachment]: ..."))
        elif key == "schema_out_ref" and not fact.is_model:
            diagnostics.append(diagnostic(codes.NOT_A_MODEL, f"'{ref.qualname}' is not a pydantic model", at))
        elif fact.schema_error:
            diagnostics.append(diagnostic(codes.NOT_A_MODEL, f"'{ref.qualname}' has no JSON Schema: {fact.schema_error}", at))


def _always_asked(tool: ResolvedTool) -> bool:
    """A stdlib tool asked on every call, whatever the rules say (`worker_create`)."""
    if tool.kind != "stdlib":
        return False
    descriptor = STDLIB_TOOLSETS[tool.group].tool(tool.name)
    return descriptor is not None and descriptor.always_ask


def _tool_params(project: ResolvedProject, worker: ResolvedWorker, tool: ResolvedTool) -> ToolParams | None:
    """The parameters approval rules may test on this tool (its schema, plus derived fields), and
    for a stdlib tool which of them are paths and the root they are relative to (called for
    conditional rules only: `approvals` is imported when a project has them)."""
    from ..approvals.params import ToolParams

    if tool.kind == "stdlib":
        descriptor = STDLIB_TOOLSETS[tool.group].tool(tool.name)
        if descriptor is None:
            return None
        settings = next((u.settings for u in worker.toolsets if u.kind == "stdlib" and u.name == tool.group), {})
        paths = (*descriptor.path_params, *(("argv",) if "argv" in descriptor.derived else ()))
        return ToolParams(schema=descriptor.parameters, derived=descriptor.derived, normalized=True, path_params=paths,
                          root=sub_directory(settings))
    if tool.kind == "worker":
        callee = project.workers.get(tool.worker or "")
        if callee is None:
            return None
        if callee.input_class:
            schema = callee.input_class.json_schema
        else:
            from llm_do.runtime.args import PromptInput  # the run's input models: only for a call of a prompt worker

            schema = PromptInput.model_json_schema()
        return ToolParams(schema=schema or {}, derived={}, normalized=False)
    if tool.kind == "mcp":
        server = project.mcp_servers[tool.group]
        listed = (server.tools or {}).get(tool.name)
        return ToolParams(schema=listed.input_schema, derived={}, normalized=False) if listed else None
    if tool.kind == "python_tool":
        python_tool = project.python_tool(worker.name, tool.name)
        if python_tool is None:
            return None
        fact = python_tool.fact
        return ToolParams(schema=fact.parameters or {}, derived={}, normalized=False)
    python = project.python_toolset(worker.name, tool.group)
    found = next((t for t in (python.fact.tools or []) if t.name == tool.name), None) if python else None
    return ToolParams(schema=found.parameters or {}, derived={}, normalized=False) if found else None

"""Stage 4, resolve: one symbol table of toolsets, tools and workers; every reference becomes an
edge or a diagnostic, every tool of every worker gets its approval."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Literal

from llm_do.runtime.approval_policy import MCP_TOOL_DEFAULT, PYTHON_TOOL_DEFAULT, WORKER_CALL_DEFAULT
from llm_do.runtime.args import PromptInput
from llm_do.runtime.created_workers import CREATING_TOOLSETS
from llm_do.stdlib.registry import STDLIB_TOOLSETS

from ..approvals.apply import apply_rules
from ..approvals.nodes import ApprovalRule
from ..approvals.params import ToolParams
from ..diagnostics import Diagnostic, Location, Related, diagnostic
from ..facts.records import ClassFact, Facts, McpFacts, ModuleFact, ToolFact, ToolsetFact
from ..suggest import closest_name, did_you_mean
from ..syntax.manifest import ProjectManifest
from ..syntax.positions import PositionTable
from ..syntax.schema_refs import SchemaRef
from ..syntax.sources import OutsideRoot, lexically_confined
from ..syntax.validation import validate
from .introspect import SchemaRefs
from .load import LoadedProject
from .mcp_servers import McpServerInfo, check_servers
from .parse import ParsedWorker
from .resolve_entry import ResolvedEntryFunction, resolve_entry_function

ToolsetKind = Literal["stdlib", "python", "worker", "mcp"]


@dataclass(frozen=True)
class Unknowns:
    """What earlier errors left unknown. A reference into it is a follow-on of an error already
    reported, not a problem of its own, so resolve reports nothing for it (the cascade rule)."""

    workers: frozenset[str] = frozenset()
    """Names (file stems) of worker files that failed to load or parse."""
    python: bool = False
    """A python_files entry could not be read, so the project's tools and toolsets are not all known."""
    any_worker: bool = False
    """worker_files lost an entry to an error, so any unknown name may be a worker."""
    entry: bool = False
    """`entry` lost its value to an error, so the entry worker's name is not known."""


@dataclass(frozen=True)
class PythonToolset:
    key: str
    module: ModuleFact
    fact: ToolsetFact


@dataclass(frozen=True)
class PythonTool:
    module: ModuleFact
    fact: ToolFact

    @property
    def toolset_key(self) -> str:
        """Tools of one module's TOOLS form one toolset node in the bundle."""
        return f"{self.module.module}.{self.module.tools_export or 'TOOLS'}"


@dataclass
class ToolsetUse:
    kind: ToolsetKind
    name: str
    settings: dict[str, Any]
    at: Location
    opaque_approval: str | None = None
    """For an opaque Python toolset: the approval of the tools it turns out to have."""


@dataclass
class ResolvedTool:
    name: str
    kind: Literal["stdlib", "python_toolset", "python_tool", "worker", "mcp"]
    toolset: str | None
    """Bundle key of the toolset node providing it (None for a worker call)."""
    group: str
    """The name approvals can target it by as a group: its toolset, or the worker."""
    default_approval: str
    at: Location
    approval: str = ""
    worker: str | None = None
    rules: list[ApprovalRule] = field(default_factory=list)
    """When a conditional rule targets it: every rule of the worker that applies to it, in order."""


@dataclass
class ResolvedWorker:
    parsed: ParsedWorker
    toolsets: list[ToolsetUse] = field(default_factory=list)
    tools: dict[str, ResolvedTool] = field(default_factory=dict)
    calls: dict[str, Location] = field(default_factory=dict)
    """Workers this one may call, with the `toolsets` item that says so."""
    input_ref: SchemaRef | None = None
    output_ref: SchemaRef | None = None
    input_class: ClassFact | None = None
    output_class: ClassFact | None = None
    rules: list[ApprovalRule] = field(default_factory=list)
    unknown_names: set[str] = field(default_factory=set)
    """Names its tools may have that are unknown because of an error already reported: references
    that did not resolve, the tools of a stdlib toolset whose settings are invalid."""
    tools_unknown: bool = False
    """Its tool list may lack tools whose names nobody knows (a `toolsets`/`tools` value dropped
    by an error, or a reference held back because the project's Python is not all known)."""
    calls_unknown: bool = False
    """It may call workers the graph does not show (its `toolsets` value dropped by an error, or
    a call to a worker whose file failed to parse)."""
    maybe_calls: set[str] = field(default_factory=set)
    """Workers an unknown reference probably means (its did-you-mean)."""
    grants: list[dict[str, Any]] | None = field(default=None, repr=False, compare=False)
    """Its own capabilities as the bundle records them, once `capability_grants.worker_grants`
    has computed them: the check stage's R rules and lower share one computation."""

    @property
    def name(self) -> str:
        return self.parsed.name


@dataclass
class ResolvedProject:
    loaded: LoadedProject
    manifest: ProjectManifest
    workers: dict[str, ResolvedWorker]
    facts: Facts
    python_toolsets: dict[str, PythonToolset]
    python_tools: dict[str, PythonTool]
    entry: str
    """The entry worker's name, or the entry function's label."""
    entry_function: ResolvedEntryFunction | None = None
    mcp_servers: dict[str, McpServerInfo] = field(default_factory=dict)

    def worker_location(self, name: str) -> Location:
        return self.workers[name].parsed.name_location


def _python_symbols(facts: Facts, diagnostics: list[Diagnostic]) -> tuple[dict[str, PythonToolset], dict[str, PythonTool]]:
    """Every toolset and tool the project's Python exports; a name exported twice is N009."""
    toolsets: dict[str, PythonToolset] = {}
    tools: dict[str, PythonTool] = {}

    def first_export(table: dict, kind: str, name: str, module: ModuleFact, line: int | None) -> bool:
        if name not in table:
            return True
        diagnostics.append(diagnostic("N009", f"{kind} '{name}' is exported by '{table[name].module.file}' and '{module.file}'",
                                      Location(file=module.file, line=line)))
        return False

    for module in facts.modules.values():
        for ts in module.toolsets:
            if first_export(toolsets, "toolset", ts.name, module, ts.line):
                toolsets[ts.name] = PythonToolset(ts.name, module, ts)
        for tool in module.tools:
            if first_export(tools, "tool", tool.name, module, tool.line):
                tools[tool.name] = PythonTool(module, tool)
    return toolsets, tools


def resolve(
    loaded: LoadedProject, parsed: list[ParsedWorker], refs: SchemaRefs, facts: Facts, unknowns: Unknowns = Unknowns(),
    function_ref: SchemaRef | None = None,
    mcp_facts: McpFacts | None = None, *, import_python: bool = True,
) -> tuple[ResolvedProject, list[Diagnostic]]:
    diagnostics: list[Diagnostic] = []
    manifest = loaded.manifest
    assert manifest is not None
    python_toolsets, python_tools = _python_symbols(facts, diagnostics)
    reserved = {**{n: "a Python toolset" for n in python_toolsets}, **{n: "a stdlib toolset" for n in STDLIB_TOOLSETS}}
    mcp_servers, found = check_servers(loaded, mcp_facts, import_python=import_python, reserved=reserved)
    diagnostics.extend(found)
    python_known = (all(m.error is None and m.complete for m in facts.modules.values()) and facts.failure is None
                    and not unknowns.python)

    workers: dict[str, ResolvedWorker] = {}
    for worker in parsed:
        first = workers.get(worker.name)
        if first is not None:
            diagnostics.append(diagnostic(
                "N001", f"a worker named '{worker.name}' is already defined in '{first.parsed.file}'",
                worker.name_location,
                related=[Related(**first.parsed.name_location.model_dump(), message="first defined here")],
            ))
            continue
        if worker.name in STDLIB_TOOLSETS or worker.name in python_toolsets or worker.name in manifest.mcp_servers:
            kind = ("a stdlib toolset" if worker.name in STDLIB_TOOLSETS else "a Python toolset" if worker.name in python_toolsets
                    else "an MCP server")
            diagnostics.append(diagnostic("N002", f"worker '{worker.name}' has the name of {kind}",
                                          worker.name_location, hint="rename the worker"))
            continue
        workers[worker.name] = ResolvedWorker(worker)

    project = ResolvedProject(loaded, manifest, workers, facts, python_toolsets, python_tools, manifest.entry_worker,
                              mcp_servers=mcp_servers)
    # What a toolsets entry may name, in order of preference for a did-you-mean.
    names = [*STDLIB_TOOLSETS, *sorted(set(python_toolsets) - set(STDLIB_TOOLSETS)), *sorted(mcp_servers), *sorted(workers)]
    for worker in workers.values():
        incomplete = worker.parsed.incomplete
        worker.tools_unknown = bool({"toolsets", "tools"} & incomplete)
        worker.calls_unknown = bool({"toolsets", "calls"} & incomplete)
        _resolve_toolsets(project, worker, names, python_known, unknowns, diagnostics)
        _resolve_declared_calls(project, worker, unknowns, diagnostics)
        _resolve_tools(project, worker, python_known, diagnostics)
        _resolve_schemas(project, worker, refs, diagnostics)
    for worker in workers.values():  # after every worker's schemas: a rule may test a callee's input
        source = loaded.sources.files.get(worker.parsed.file)
        apply_rules(worker, source.text if source else None, lambda tool: _tool_params(project, tool), diagnostics,
                    always_asked=_always_asked)
    if manifest.entry_function is not None:
        fn = resolve_entry_function(loaded, function_ref, facts.entry_function, project.workers, unknowns.workers,
                                    unknowns.any_worker, diagnostics)
        project.entry_function, project.entry = fn, fn.label
        return project, diagnostics
    if manifest.entry is not None and manifest.entry.calls is not None:
        diagnostics.append(diagnostic("N010", "entry.calls is given without entry.function; an entry worker's calls are its toolsets",
                                      loaded.at("entry", "calls"), hint="remove entry.calls, or give entry.function"))
    entry_unknown = unknowns.entry or unknowns.any_worker or manifest.entry_worker in unknowns.workers
    if manifest.entry_worker not in workers and not entry_unknown:
        where = loaded.at("entry", "worker", key=False) if manifest.entry and manifest.entry.worker else loaded.at()
        diagnostics.append(diagnostic("N006", f"the entry worker '{manifest.entry_worker}' is not defined", where,
                                      hint=did_you_mean(manifest.entry_worker, workers)))
    return project, diagnostics


def _resolve_declared_calls(project: ResolvedProject, worker: ResolvedWorker, unknowns: Unknowns,
                            diagnostics: list[Diagnostic]) -> None:
    """Front matter `calls:`: workers its Python tools call, edges of the graph (not tools)."""
    parsed = worker.parsed
    seen: set[str] = set()
    for i, name in enumerate(parsed.front.calls):
        at = parsed.at("calls", i)
        if name in seen:
            diagnostics.append(diagnostic("N007", f"'{name}' is listed twice in calls", at))
            continue
        seen.add(name)
        if name in project.workers:
            worker.calls.setdefault(name, at)
        elif name in unknowns.workers or unknowns.any_worker:
            worker.calls_unknown = True
        else:
            diagnostics.append(diagnostic("N012", f"calls names '{name}', which is not a worker", at,
                                          hint=did_you_mean(name, project.workers)))


def _add_tool(worker: ResolvedWorker, tool: ResolvedTool, diagnostics: list[Diagnostic]) -> None:
    existing = worker.tools.get(tool.name)
    if existing is not None:
        diagnostics.append(diagnostic(
            "N005",
            f"tool '{tool.name}' from '{tool.group}' conflicts with '{tool.name}' from '{existing.group}'",
            tool.at,
            hint="list only one of them, or rename the tool",
            related=[Related(**existing.at.model_dump(), message=f"'{tool.name}' comes from '{existing.group}' here")],
        ))
        return
    worker.tools[tool.name] = tool


def _resolve_toolsets(
    project: ResolvedProject, worker: ResolvedWorker, names: list[str], python_known: bool, unknowns: Unknowns,
    diagnostics: list[Diagnostic],
) -> None:
    parsed = worker.parsed
    seen: set[str] = set()
    for i, ref in enumerate(parsed.front.toolsets):
        at = parsed.at("toolsets", i)
        if ref.name in seen:
            diagnostics.append(diagnostic("N007", f"'{ref.name}' is listed twice in toolsets", at))
            continue
        seen.add(ref.name)
        settings = ref.settings or {}
        descriptor = STDLIB_TOOLSETS.get(ref.name)
        if ref.name in CREATING_TOOLSETS and "path" not in settings and project.manifest.generated_agents_dir is not None:
            settings = {**settings, "path": project.manifest.generated_agents_dir}  # the .agent era's folder
        if descriptor is not None:
            checked, found = validate(descriptor.settings_model, settings, parsed.file,
                                      _sub_positions(parsed.positions, ("toolsets", i, ref.name)),
                                      where=f"settings of {ref.name}")
            diagnostics.extend(found)
            if checked is None:
                worker.unknown_names |= {ref.name, *(t.name for t in descriptor.tools)}
                continue
            if found:  # settings repaired: what the toolset may touch is not what was meant
                worker.unknown_names.add(ref.name)
            sub_root = getattr(checked, "path", ".")
            try:
                lexically_confined(sub_root)
            except OutsideRoot as exc:
                where = parsed.at("toolsets", i, ref.name, "path")
                if "path" not in (ref.settings or {}):  # the .agent era's generated_agents_dir
                    where = project.loaded.at("generated_agents_dir", key=False)
                diagnostics.append(diagnostic("F002", f"the path of {ref.name}: {exc}", where))
                worker.unknown_names |= {ref.name, *(t.name for t in descriptor.tools)}
                continue
            use = ToolsetUse("stdlib", ref.name, checked.model_dump(exclude_defaults=True), at)
            worker.toolsets.append(use)
            for tool in descriptor.tools:
                _add_tool(worker, ResolvedTool(tool.name, "stdlib", ref.name, ref.name, tool.approval, at), diagnostics)
            continue
        known = ref.name in project.workers or ref.name in project.python_toolsets or ref.name in project.mcp_servers
        if settings and known:
            diagnostics.append(diagnostic("N008", f"'{ref.name}' takes no settings; only stdlib toolsets do",
                                          parsed.at("toolsets", i, ref.name)))
        if ref.name in project.workers:
            worker.toolsets.append(ToolsetUse("worker", ref.name, {}, at))
            worker.calls[ref.name] = at
            _add_tool(worker, ResolvedTool(ref.name, "worker", None, ref.name, WORKER_CALL_DEFAULT, at, worker=ref.name),
                      diagnostics)
            continue
        server = project.mcp_servers.get(ref.name)
        if server is not None:
            _use_mcp_server(worker, server, at, diagnostics)
            continue
        if ref.name in project.manifest.mcp_servers:  # a server whose settings are in error (reported)
            worker.unknown_names.add(ref.name)
            worker.tools_unknown = True
            continue
        python = project.python_toolsets.get(ref.name)
        if python is not None:
            use = ToolsetUse("python", ref.name, {}, at)
            worker.toolsets.append(use)
            if python.fact.tools is None:
                use.opaque_approval = PYTHON_TOOL_DEFAULT
            else:
                for tool in python.fact.tools:
                    _add_tool(worker, ResolvedTool(tool.name, "python_toolset", ref.name, ref.name, PYTHON_TOOL_DEFAULT, at),
                              diagnostics)
            continue
        worker.unknown_names.add(ref.name)
        if ref.name in unknowns.workers or unknowns.any_worker:
            worker.calls_unknown = True
            continue  # a worker whose file failed to parse, or was not listed because of an error
        if not python_known and ref.name not in project.python_tools:
            worker.tools_unknown = True
            continue  # perhaps a toolset of the Python that failed, which is reported
        near = closest_name(ref.name, names)
        if near in project.workers:
            worker.maybe_calls.add(near)
        hint = f"did you mean '{near}'?" if near else None
        if ref.name in project.python_tools:
            hint = f"'{ref.name}' is a Python tool: list it under `tools:`"
        diagnostics.append(diagnostic("N003", f"unknown toolset or worker '{ref.name}'", at, hint=hint))


def _use_mcp_server(worker: ResolvedWorker, server: McpServerInfo, at: Location, diagnostics: list[Diagnostic]) -> None:
    use = ToolsetUse("mcp", server.name, {}, at)
    worker.toolsets.append(use)
    if server.opaque:
        use.opaque_approval = MCP_TOOL_DEFAULT
    elif server.tools is None:  # not started (--no-import) or not listable (reported): its tools are unknown
        worker.unknown_names.add(server.name)
        worker.tools_unknown = True
    else:
        for name in server.tools:
            _add_tool(worker, ResolvedTool(name, "mcp", server.name, server.name, MCP_TOOL_DEFAULT, at), diagnostics)


def _sub_positions(positions: PositionTable, prefix: tuple) -> PositionTable:
    n = len(prefix)
    return PositionTable(
        {p[n:]: v for p, v in positions.values.items() if p[:n] == prefix},
        {p[n:]: v for p, v in positions.keys.items() if p[:n] == prefix},
    )


def _resolve_tools(project: ResolvedProject, worker: ResolvedWorker, python_known: bool, diagnostics: list[Diagnostic]) -> None:
    parsed = worker.parsed
    seen: set[str] = set()
    for i, name in enumerate(parsed.front.tools):
        at = parsed.at("tools", i)
        if name in seen:
            diagnostics.append(diagnostic("N007", f"'{name}' is listed twice in tools", at))
            continue
        seen.add(name)
        tool = project.python_tools.get(name)
        if tool is None:
            worker.unknown_names.add(name)
            if python_known:
                hint = did_you_mean(name, project.python_tools)
                if name in project.python_toolsets or name in STDLIB_TOOLSETS or name in project.workers:
                    hint = f"'{name}' is a toolset or worker: list it under `toolsets:`"
                elif not project.python_tools:
                    hint = "tools come from the TOOLS of files listed in python_files"
                diagnostics.append(diagnostic("N004", f"unknown tool '{name}'", at, hint=hint))
            continue
        _add_tool(worker, ResolvedTool(name, "python_tool", tool.toolset_key, name, PYTHON_TOOL_DEFAULT, at), diagnostics)


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
                diagnostics.append(diagnostic("S002", f"'{ref.file}' in {key} does not exist", at))
                continue
            try:
                project.loaded.sources.confined(ref.file)
            except OutsideRoot as exc:
                diagnostics.append(diagnostic("F002", f"{key} {exc}", at))
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
            diagnostics.append(diagnostic("S003", f"'{ref.module}' defines no class '{ref.qualname}'", at,
                                          hint=did_you_mean(ref.qualname, fact.candidates)))
        elif key == "schema_in_ref" and not fact.is_worker_args:
            diagnostics.append(diagnostic("S004", f"'{ref.qualname}' does not subclass WorkerArgs", at,
                                          hint="derive it from llm_do.runtime.WorkerArgs and implement prompt_messages()"))
        elif key == "schema_in_ref" and fact.abstract:
            diagnostics.append(diagnostic("S005", f"'{ref.qualname}' does not implement prompt_messages()", at,
                                          hint="def prompt_messages(self) -> list[str | Attachment]: ..."))
        elif key == "schema_out_ref" and not fact.is_model:
            diagnostics.append(diagnostic("S006", f"'{ref.qualname}' is not a pydantic model", at))
        elif fact.schema_error:
            diagnostics.append(diagnostic("S006", f"'{ref.qualname}' has no JSON Schema: {fact.schema_error}", at))


def _always_asked(tool: ResolvedTool) -> bool:
    """A stdlib tool asked on every call, whatever the rules say (`worker_create`)."""
    if tool.kind != "stdlib":
        return False
    descriptor = STDLIB_TOOLSETS[tool.group].tool(tool.name)
    return descriptor is not None and descriptor.always_ask


def _tool_params(project: ResolvedProject, tool: ResolvedTool) -> ToolParams | None:
    """The parameters approval rules may test on this tool (its schema, plus derived fields)."""
    if tool.kind == "stdlib":
        descriptor = STDLIB_TOOLSETS[tool.group].tool(tool.name)
        return ToolParams(schema=descriptor.parameters, derived=descriptor.derived, normalized=True) if descriptor else None
    if tool.kind == "worker":
        callee = project.workers.get(tool.worker or "")
        if callee is None:
            return None
        schema = callee.input_class.json_schema if callee.input_class else PromptInput.model_json_schema()
        return ToolParams(schema=schema or {}, derived={}, normalized=False)
    if tool.kind == "mcp":
        server = project.mcp_servers[tool.group]
        listed = (server.tools or {}).get(tool.name)
        return ToolParams(schema=listed.input_schema, derived={}, normalized=False) if listed else None
    if tool.kind == "python_tool":
        fact = project.python_tools[tool.name].fact
        return ToolParams(schema=fact.parameters or {}, derived={}, normalized=False)
    python = project.python_toolsets.get(tool.group)
    found = next((t for t in (python.fact.tools or []) if t.name == tool.name), None) if python else None
    return ToolParams(schema=found.parameters or {}, derived={}, normalized=False) if found else None

"""The resolve stage's reading of a worker's `toolsets:` and `tools:`: each entry becomes a toolset
use with its tools, or a diagnostic; a name listed twice in a front matter list is N007."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from llm_do.bundle.approval import MCP_TOOL_DEFAULT, PYTHON_TOOL_DEFAULT, WORKER_CALL_DEFAULT
from llm_do.stdlib.registry import STDLIB_TOOLSETS
from llm_do.stdlib.worker_create.names import CREATING_TOOLSETS

from .. import codes
from ..diagnostics import Diagnostic, Location, Related, diagnostic
from ..suggest import did_you_mean
from ..syntax.positions import Path, PositionTable
from ..syntax.sources import OutsideRoot, lexically_confined
from ..syntax.validation import validate
from .parse import ParsedWorker
from .resolved import ResolvedProject, ResolvedTool, ResolvedToolsetUse, ResolvedWorker, Unknowns
from .toolset_hint import tool_homes, unknown_toolset_hint

if TYPE_CHECKING:
    from .mcp_servers import McpServerInfo


def listed_once(parsed: ParsedWorker, key: str, names: Sequence[str],
                diagnostics: list[Diagnostic]) -> Iterator[tuple[int, str, Location]]:
    """Index, name and place of each item of the front matter list `key` (`names`), but the
    repetitions: a name listed twice is N007 and skipped."""
    seen: set[str] = set()
    for i, name in enumerate(names):
        at = parsed.at(key, i)
        if name in seen:
            diagnostics.append(diagnostic(codes.DUPLICATE_REFERENCE, f"'{name}' is listed twice in {key}", at))
            continue
        seen.add(name)
        yield i, name, at


def _add_tool(worker: ResolvedWorker, tool: ResolvedTool, diagnostics: list[Diagnostic]) -> None:
    existing = worker.tools.get(tool.name)
    if existing is not None:
        diagnostics.append(diagnostic(
            codes.TOOL_NAME_CONFLICT,
            f"tool '{tool.name}' from '{tool.group}' conflicts with '{tool.name}' from '{existing.group}'",
            tool.at,
            hint=_conflict_hint(tool, existing),
            related=[Related.at(existing.at, f"'{tool.name}' comes from '{existing.group}' here")],
        ))
        return
    worker.tools[tool.name] = tool


def _conflict_hint(tool: ResolvedTool, existing: ResolvedTool) -> str:
    """A stdlib tool cannot be renamed: the hint names what can change."""
    renamable = [t for t in (tool, existing) if t.kind != "stdlib"]
    if not renamable:
        return f"list only one of '{existing.group}' and '{tool.group}' (stdlib tools cannot be renamed)"
    kind = {"python_toolset": "Python tool", "python_tool": "Python tool", "mcp": "MCP server's tool",
            "worker": "worker"}[renamable[0].kind]
    return f"list only one of them, or rename the {kind} in '{renamable[0].group}'"


def resolve_toolsets(
    project: ResolvedProject, worker: ResolvedWorker, names: list[str], python_known: bool, unknowns: Unknowns,
    diagnostics: list[Diagnostic],
) -> None:
    parsed = worker.parsed
    refs = parsed.front.toolsets
    for i, _, at in listed_once(parsed, "toolsets", [ref.name for ref in refs], diagnostics):
        ref = refs[i]
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
            try:  # a folder of the project: also through symbolic links, as the toolset will resolve it
                real = project.loaded.sources.confined(sub_root) if descriptor.root == "project" else lexically_confined(sub_root)
                if ref.name in CREATING_TOOLSETS and _in_git_dir(sub_root, real, project):
                    raise OutsideRoot(f"'{sub_root}' is in the project's .git directory, where no worker file may be written")
            except OutsideRoot as exc:
                where = parsed.at("toolsets", i, ref.name, "path")
                if "path" not in (ref.settings or {}):  # the .agent era's generated_agents_dir
                    where = project.loaded.at("generated_agents_dir", key=False)
                diagnostics.append(diagnostic(codes.PATH_OUTSIDE_ROOT, f"the path of {ref.name}: {exc}", where))
                worker.unknown_names |= {ref.name, *(t.name for t in descriptor.tools)}
                continue
            if ref.name in CREATING_TOOLSETS:
                _check_created_workers_collected(project, ref.name, sub_root, at, diagnostics)
            use = ResolvedToolsetUse(kind="stdlib", name=ref.name, settings=checked.model_dump(exclude_defaults=True), at=at)
            worker.toolsets.append(use)
            for tool in descriptor.tools:
                _add_tool(worker, ResolvedTool(name=tool.name, kind="stdlib", toolset=ref.name, group=ref.name,
                                               default_approval=tool.approval, at=at), diagnostics)
            continue
        python = project.python_toolset(worker.name, ref.name)
        known = ref.name in project.workers or python is not None or ref.name in project.mcp_servers
        if settings and known:
            diagnostics.append(diagnostic(codes.SETTINGS_NOT_ACCEPTED, f"'{ref.name}' takes no settings; only stdlib toolsets do",
                                          parsed.at("toolsets", i, ref.name)))
        if ref.name in project.workers:
            worker.toolsets.append(ResolvedToolsetUse(kind="worker", name=ref.name, settings={}, at=at))
            worker.calls[ref.name] = at
            _add_tool(worker, ResolvedTool(name=ref.name, kind="worker", toolset=None, group=ref.name,
                                           default_approval=WORKER_CALL_DEFAULT, at=at, worker=ref.name),
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
        if python is not None:
            use = ResolvedToolsetUse(kind="python", name=python.key, settings={}, at=at,
                                     listed_as=ref.name if python.key != ref.name else "")
            worker.toolsets.append(use)
            if python.fact.tools is None:
                from ..facts.static_reader import NOT_IMPORTED  # loaded already: the project has Python

                use.opaque_approval = PYTHON_TOOL_DEFAULT
                if python.fact.opaque_reason == NOT_IMPORTED:  # made when the module runs: listed with import
                    worker.unlisted.append(ref.name)
            else:
                for tool_fact in python.fact.tools:
                    _add_tool(worker, ResolvedTool(name=tool_fact.name, kind="python_toolset", toolset=python.key, group=ref.name,
                                                   default_approval=PYTHON_TOOL_DEFAULT, at=at),
                              diagnostics)
            continue
        worker.unknown_names.add(ref.name)
        if ref.name in unknowns.workers or unknowns.any_worker:
            worker.calls_unknown = True
            continue  # a worker whose file failed to parse, or was not listed because of an error
        own = project.own_python.get(worker.name)
        python_tool = project.python_tool(worker.name, ref.name)
        if not python_known and python_tool is None:
            worker.tools_unknown = True
            continue  # perhaps a toolset of the Python that failed, which is reported
        suggested = unknown_toolset_hint(ref.name, [*names, *(sorted(own.toolsets) if own else ())],
                                         tool_homes(project, worker.name))
        worker.maybe_calls |= {name for name in suggested.names if name in project.workers}
        hint = suggested.text
        if python_tool is not None:
            hint = f"'{ref.name}' is a Python tool: list it under `tools:`"
        diagnostics.append(diagnostic(codes.UNKNOWN_TOOLSET, f"unknown toolset or worker '{ref.name}'", at, hint=hint))


def _use_mcp_server(worker: ResolvedWorker, server: McpServerInfo, at: Location, diagnostics: list[Diagnostic]) -> None:
    use = ResolvedToolsetUse(kind="mcp", name=server.name, settings={}, at=at)
    worker.toolsets.append(use)
    if server.opaque:
        use.opaque_approval = MCP_TOOL_DEFAULT
    elif server.tools is None:  # not started (--no-import) or not listable (reported): its tools are unknown
        worker.unknown_names.add(server.name)
        worker.tools_unknown = True
    else:
        for name in server.tools:
            _add_tool(worker, ResolvedTool(name=name, kind="mcp", toolset=server.name, group=server.name,
                                       default_approval=MCP_TOOL_DEFAULT, at=at), diagnostics)


def _sub_positions(positions: PositionTable, prefix: Path) -> PositionTable:
    n = len(prefix)
    return PositionTable(
        {p[n:]: v for p, v in positions.values.items() if p[:n] == prefix},
        {p[n:]: v for p, v in positions.keys.items() if p[:n] == prefix},
    )


def resolve_tools(project: ResolvedProject, worker: ResolvedWorker, python_known: bool, diagnostics: list[Diagnostic]) -> None:
    parsed = worker.parsed
    for _, name, at in listed_once(parsed, "tools", parsed.front.tools, diagnostics):
        tool = project.python_tool(worker.name, name)
        if tool is None:
            worker.unknown_names.add(name)
            if python_known:
                own = project.own_python.get(worker.name)
                hint = did_you_mean(name, [*project.python_tools, *(own.tools if own else ())])
                if project.python_toolset(worker.name, name) or name in STDLIB_TOOLSETS or name in project.workers:
                    hint = f"'{name}' is a toolset or worker: list it under `toolsets:`"
                elif not project.python_tools and not own:
                    hint = "tools come from the TOOLS of files listed in python_files, or of a directory worker's tools.py"
                diagnostics.append(diagnostic(codes.UNKNOWN_TOOL, f"unknown tool '{name}'", at, hint=hint))
            continue
        _add_tool(worker, ResolvedTool(name=name, kind="python_tool", toolset=tool.toolset_key, group=name,
                                   default_approval=PYTHON_TOOL_DEFAULT, at=at), diagnostics)


def _in_git_dir(rel: str, real: str, project: ResolvedProject) -> bool:
    """Whether a folder for created workers is (or is inside) a `.git` directory, as written or
    once symbolic links are resolved."""
    import os

    root = os.path.realpath(project.loaded.root)
    parts = [*lexically_confined(rel).split("/"), *os.path.relpath(os.path.realpath(real), root).split(os.sep)]
    return any(part.lower() == ".git" for part in parts)


def _check_created_workers_collected(project: ResolvedProject, toolset: str, folder: str, at: Location,
                                     diagnostics: list[Diagnostic]) -> None:
    """F007 when no `worker_files` pattern covers the folder a creating toolset writes to: the
    next build would leave the created workers out, silently."""
    folder = lexically_confined(folder)
    sample = f"{folder}/new_worker.worker" if folder != "." else "new_worker.worker"
    if project.loaded.collects(sample):
        return
    diagnostics.append(diagnostic(
        codes.CREATED_WORKERS_NOT_COLLECTED,
        f"{toolset} writes workers to '{folder}', which no worker_files entry covers: the next build leaves "
        "them out", at, hint=f"add '{sample.replace('new_worker', '*')}' (or '**/*.worker') to worker_files"))

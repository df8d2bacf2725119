"""G005 / L004: a worker called from Python that the caller does not declare.

The Python tools a worker uses and the entry function are read with `ast` (`facts.python_calls`);
each literal call must name a worker of the caller's edges (a worker's `calls`, its toolsets'
workers included; the entry's `entry.calls`), so the call graph holds every call. An `.agent`
worker, whose format had no `calls:`, gets the warning L004 instead of the error.
"""

from __future__ import annotations

from ... import codes
from ...analysis.call_graph import CallGraph
from ...diagnostics import Diagnostic, Location, diagnostic
from ...facts.python_calls import PythonCall, literal_calls
from ...syntax.sources import NotText, OutsideRoot, Unreadable
from ..resolved import ResolvedProject, ResolvedWorker


def check_python_calls(project: ResolvedProject, graph: CallGraph) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    read: dict[tuple[str, str, int | None], list[PythonCall]] = {}
    """A tool's calls by its module, name and line: read once however many workers list it (3,000
    workers sharing ten modules parsed a module per worker: half of a build's time)."""
    for name in sorted(project.workers):
        worker = project.workers[name]
        if worker.calls_unknown:
            continue  # its edges are unknown because of an error already reported
        for tool in worker.tools.values():
            python = project.python_tool(name, tool.name) if tool.kind == "python_tool" else None
            if python is None:
                continue
            key = (python.module.file, python.fact.name, python.fact.line)
            if key not in read:
                read[key] = _calls(project, *key)
            for call in read[key]:
                if call.worker not in worker.calls:
                    out.append(_undeclared_in_tool(project, worker, tool.name, python.module.file, call))
    function = project.entry_function
    if function is not None and function.ref is not None and function.ref.file and function.calls_declared \
            and not function.calls_unknown:
        for call in _calls(project, function.ref.file, function.ref.qualname, None):
            if call.worker not in function.calls:
                out.append(diagnostic(
                    codes.UNDECLARED_PYTHON_CALL,
                    f"the entry function '{function.label}' calls worker '{call.worker}', which entry.calls "
                    "does not declare", Location(file=function.ref.file, line=call.line, column=call.column),
                    hint=f"add '{call.worker}' to entry.calls in project.json"))
    return out


def _calls(project: ResolvedProject, file: str, name: str, line: int | None) -> list[PythonCall]:
    try:
        source = project.loaded.sources.read(file, "python")
    except (OSError, OutsideRoot, NotText, Unreadable):
        return []  # reported where the file is read
    return literal_calls(source.text, name, line)


def _undeclared_in_tool(project: ResolvedProject, worker: ResolvedWorker, tool: str, file: str,
                        call: PythonCall) -> Diagnostic:
    what = "" if call.worker in project.workers else " (no worker of the project has that name)"
    return diagnostic(
        codes.LEGACY_PYTHON_CALL if worker.parsed.legacy else codes.UNDECLARED_PYTHON_CALL,
        f"tool '{tool}' of worker '{worker.name}' calls worker '{call.worker}'{what}, which '{worker.name}' "
        "does not declare", Location(file=file, line=call.line, column=call.column),
        hint=f"add '{call.worker}' to `calls:` in the front matter of {worker.parsed.file}"
             + (" (after `llm-do migrate`)" if worker.parsed.legacy else ""))

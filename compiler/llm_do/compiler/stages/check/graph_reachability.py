"""G003: a worker the entry can never reach is dead code or a missing `toolsets` entry."""

from __future__ import annotations

from ... import codes
from ...analysis.call_graph import CallGraph
from ...diagnostics import Diagnostic, diagnostic
from ..resolved import ResolvedProject


def check_reachability(project: ResolvedProject, graph: CallGraph) -> list[Diagnostic]:
    reached = possibly_reached(project, graph)
    if reached is None:
        return []
    return [
        diagnostic(codes.UNREACHABLE_WORKER, f"worker '{name}' is not reachable from the entry '{project.entry}'",
                   project.worker_location(name),
                   hint=f"list '{name}' in {'entry.calls or ' if project.entry_function else ''}the toolsets of a worker "
                        "that should call it, or remove it")
        for name in sorted(project.workers)
        if name not in reached
    ]


def possibly_reached(project: ResolvedProject, graph: CallGraph) -> set[str] | None:
    """The workers the entry reaches, counting the worker an unknown reference probably means (its
    did-you-mean) as called; None when a reached worker's calls are unknown because of an error
    already reported (then "unreachable" would be that error's follow-on)."""
    if project.entry not in graph.calls:
        return None
    reached: set[str] = set()
    todo = [project.entry]
    while todo:
        name = todo.pop()
        if name in reached:
            continue
        reached.add(name)
        worker = project.workers.get(name)
        if worker is None:  # the entry function
            assert project.entry_function is not None
            if project.entry_function.calls_unknown:
                return None
            todo.extend(graph.calls[name])
            continue
        if worker.calls_unknown:
            return None
        todo.extend(graph.calls[name])
        todo.extend(w for w in worker.maybe_calls if w in project.workers)
    return reached

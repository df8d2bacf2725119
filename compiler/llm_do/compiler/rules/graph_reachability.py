"""G003: a worker the entry can never reach is dead code or a missing `toolsets` entry."""

from __future__ import annotations

from ..call_graph import CallGraph
from ..diagnostics import Diagnostic, diagnostic
from ..stages.resolve import ResolvedProject


def check_reachability(project: ResolvedProject, graph: CallGraph) -> list[Diagnostic]:
    if project.entry not in graph.calls:
        return []
    reached = graph.depths(project.entry)
    return [
        diagnostic("G003", f"worker '{name}' is not reachable from the entry '{project.entry}'",
                   project.worker_location(name),
                   hint=f"list '{name}' in the toolsets of a worker that should call it, or remove it")
        for name in sorted(project.workers)
        if name not in reached
    ]

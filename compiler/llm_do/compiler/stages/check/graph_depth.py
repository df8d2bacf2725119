"""G002: a call U -> V with depth(U) >= max_depth can never run."""

from __future__ import annotations

from ... import codes
from ...analysis.call_graph import CallGraph
from ...diagnostics import Diagnostic, diagnostic
from ..resolved import ResolvedProject


def check_depth(project: ResolvedProject, graph: CallGraph) -> list[Diagnostic]:
    max_depth = project.manifest.runtime.max_depth
    function = project.entry_function
    depth = graph.depths(project.entry, start=0 if function is not None else 1)
    if (function is not None and function.calls_unknown) or any(
            project.workers[w].calls_unknown for w in depth if w in project.workers):
        return []  # an edge an earlier error hid may be a shorter path: depths are not known
    out: list[Diagnostic] = []
    for caller, callee, _ in graph.edges():
        d = depth.get(caller)
        if d is not None and d >= max_depth:
            out.append(diagnostic(
                codes.CALL_EXCEEDS_MAX_DEPTH,
                f"'{caller}' runs at depth {d} at the earliest, so its call to '{callee}' would run at depth {d + 1},"
                f" past max_depth {max_depth}",
                graph.position(caller, callee),
                hint="raise runtime.max_depth in project.json or shorten the chain",
            ))
    return out

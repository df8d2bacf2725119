"""G001 / L002: a call cycle needs every worker on it declared `recursive: true`."""

from __future__ import annotations

from ... import codes
from ...analysis.call_graph import CallGraph
from ...diagnostics import Diagnostic, diagnostic
from ..resolved import ResolvedProject


def check_cycles(project: ResolvedProject, graph: CallGraph) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for group in graph.cycles():
        cycle = graph.a_cycle(group)
        shown = " -> ".join(cycle + [cycle[0]])
        for name in sorted(group):
            worker = project.workers[name]
            if worker.parsed.front.recursive:
                continue
            callee = min(v for v in graph.calls[name] if v in group)
            at = graph.position(name, callee)
            if worker.parsed.legacy:
                out.append(diagnostic(codes.LEGACY_RECURSION, f"'{name}' takes part in the call cycle {shown}", at,
                                      hint="the .agent format cannot declare recursion; migrate to .worker and add `recursive: true`"))
            else:
                out.append(diagnostic(codes.UNDECLARED_RECURSION,
                                      f"'{name}' takes part in the call cycle {shown} but is not declared recursive",
                                      at, hint="add `recursive: true` to its front matter if the recursion is intended"))
    return out

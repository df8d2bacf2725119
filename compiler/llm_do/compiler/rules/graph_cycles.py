"""G001 / L002: a call cycle needs every worker on it declared `recursive: true`."""

from __future__ import annotations

import networkx as nx

from ..diagnostics import Diagnostic, diagnostic
from ..stages.resolve import ResolvedProject


def check_cycles(project: ResolvedProject, graph: nx.DiGraph) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for component in nx.strongly_connected_components(graph):
        members = sorted(component)
        if len(members) == 1 and not graph.has_edge(members[0], members[0]):
            continue
        cycle = _a_cycle(graph, members)
        shown = " -> ".join(cycle + [cycle[0]])
        for name in members:
            worker = project.workers[name]
            if worker.parsed.front.recursive:
                continue
            callee = next(v for v in sorted(graph.successors(name)) if v in component)
            at = graph.edges[name, callee]["at"]
            if worker.parsed.legacy:
                out.append(diagnostic("L002", f"'{name}' takes part in the call cycle {shown}", at,
                                      hint="the .agent format cannot declare recursion; migrate to .worker and add `recursive: true`"))
            else:
                out.append(diagnostic("G001", f"'{name}' takes part in the call cycle {shown} but is not declared recursive",
                                      at, hint="add `recursive: true` to its front matter if the recursion is intended"))
    return out


def _a_cycle(graph: nx.DiGraph, members: list[str]) -> list[str]:
    """One cycle through the component's first member, for the message."""
    start = members[0]
    if graph.has_edge(start, start):
        return [start]
    sub = graph.subgraph(members)
    for target in sorted(sub.predecessors(start)):
        path = nx.shortest_path(sub, start, target)
        return path
    return members

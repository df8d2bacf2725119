"""The worker call graph of a resolved project, as a networkx DiGraph, and call depths."""

from __future__ import annotations

import networkx as nx

from .stages.resolve import ResolvedProject


def call_graph(project: ResolvedProject) -> nx.DiGraph:
    """Nodes are worker names; an edge U -> V carries `at`, the toolsets item of U naming V."""
    graph = nx.DiGraph()
    graph.add_nodes_from(sorted(project.workers))
    for name in sorted(project.workers):
        for callee, at in project.workers[name].calls.items():
            graph.add_edge(name, callee, at=at)
    return graph


def depths(graph: nx.DiGraph, entry: str) -> dict[str, int]:
    """depth(W): the entry is at 1, a worker at one more than the shortest call path to it."""
    if entry not in graph:
        return {}
    return {w: d + 1 for w, d in nx.single_source_shortest_path_length(graph, entry).items()}

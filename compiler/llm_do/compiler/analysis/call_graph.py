"""The worker call graph of a resolved project: who may call whom, call depths, call cycles.

Most projects have no cycle, and the standard library's `graphlib` proves that without importing
networkx (about a tenth of a second of every build); networkx analyses the cycles when there are.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from graphlib import CycleError, TopologicalSorter
from typing import TYPE_CHECKING, Any

from llm_do.bundle.views import call_edges

from ..diagnostics import Location

if TYPE_CHECKING:
    from ..stages.resolved import ResolvedProject


@dataclass
class CallGraph:
    calls: dict[str, dict[str, Location | None]] = field(default_factory=dict)
    """caller -> callee -> the `toolsets` item of the caller that names the callee (None for a
    graph read back from a bundle, which keeps no positions)."""

    @classmethod
    def of_bundle(cls, doc: Mapping[str, Any]) -> CallGraph:
        """The workers' graph of a bundle document (`views.call_edges`, the entry function's left out)."""
        calls: dict[str, dict[str, Location | None]] = {name: {} for name in doc["workers"]}
        for edge in call_edges(doc["workers"], doc.get("entry")):
            if edge.kind != "entry":
                calls[edge.caller][edge.callee] = None
        return cls(calls)

    def position(self, caller: str, callee: str) -> Location:
        """Where `caller` names `callee`: only a graph built from the sources has positions."""
        at = self.calls[caller][callee]
        if at is None:
            raise ValueError(f"the call graph read from a bundle has no position for '{caller}' -> '{callee}'")
        return at

    def edges(self) -> list[tuple[str, str, Location | None]]:
        return [(u, v, at) for u in sorted(self.calls) for v, at in sorted(self.calls[u].items())]

    def depths(self, entry: str, start: int = 1) -> dict[str, int]:
        """depth(W): the entry is at `start` (1; 0 for an entry function, whose calls run at 1), a
        worker at one more than the shortest call path to it."""
        if entry not in self.calls:
            return {}
        depth = {entry: start}
        queue = deque([entry])
        while queue:
            caller = queue.popleft()
            for callee in self.calls[caller]:
                if callee not in depth:
                    depth[callee] = depth[caller] + 1
                    queue.append(callee)
        return depth

    def cycles(self) -> list[set[str]]:
        """The groups of workers that can call each other again (self-calls included), sorted."""
        try:
            TopologicalSorter({u: set(vs) for u, vs in self.calls.items()}).prepare()
            return []
        except CycleError:
            pass
        import networkx as nx

        graph = nx.DiGraph((u, v) for u, vs in self.calls.items() for v in vs)
        groups = [c for c in nx.strongly_connected_components(graph) if len(c) > 1 or self._calls_itself(min(c))]
        return sorted(groups, key=min)

    def _calls_itself(self, worker: str) -> bool:
        return worker in self.calls.get(worker, {})

    def a_cycle(self, group: set[str]) -> list[str]:
        """One cycle through the group's first member, for messages: [a, b, c] means a -> b -> c -> a."""
        import networkx as nx

        start = min(group)
        if self._calls_itself(start):
            return [start]
        graph = nx.DiGraph((u, v) for u in group for v in self.calls[u] if v in group)
        back = min(graph.predecessors(start))
        path: list[str] = nx.shortest_path(graph, start, back)  # networkx is untyped
        return path


def call_graph(project: ResolvedProject) -> CallGraph:
    """The workers' calls, and the entry function's (a node named by its label) when it is one."""
    graph = CallGraph()
    for name in sorted(project.workers):
        graph.calls[name] = dict(project.workers[name].calls)
    if project.entry_function is not None:
        graph.calls[project.entry_function.label] = dict(project.entry_function.calls)
    return graph

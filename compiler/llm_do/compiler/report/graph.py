"""The compiled call graph of a bundle, as data and as text, JSON, Mermaid and DOT.

Nodes: `worker:NAME`, `toolset:NAME` (one per instance: `toolset:NAME(path=src)` for one with settings), `tool:NAME` (Python tools listed under `tools:`), and
`function:PATH.py:NAME` for an entry function. Edges: `calls` (worker or entry function to worker,
those of a worker's front matter `calls:` included) and `uses` (worker to toolset or tool). A `calls` edge on a call
cycle is marked `recursive`; an edge through which some tool needs approval (or is denied), or
has rules that decide its calls by their arguments, is marked `gated`. Each worker node carries
its own capabilities (`call:` left out: those are the edges), with the approval of the tool that
grants each when it is not `allow`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from llm_do.bundle.views import call_edges
from llm_do.toolkit.user_code import module_name

from ..analysis.call_graph import CallGraph
from ..analysis.capabilities import ALLOW, LOCAL_KINDS, analyse, kind_of
from ..cost.bound import CostAnalysis
from ..cost.inputs import of_bundle
from ..syntax.worker_forms import directory_tools_file
from . import Renderers


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    kind: str
    recursive: bool = False
    gated: bool = False


@dataclass
class GraphData:
    entry: str
    nodes: dict[str, str] = field(default_factory=dict)
    """id -> kind"""
    edges: list[Edge] = field(default_factory=list)
    capabilities: dict[str, list[str]] = field(default_factory=dict)
    """worker node id -> its own capabilities, `fs.write:project/** [ask]`."""
    costs: dict[str, dict[str, Any]] = field(default_factory=dict)
    """worker node id -> its dearest request (`request_usd`, `model`) or why it has none
    (`status`); the entry's node also the bound of a run (`run_usd`, `run_status`)."""


def bundle_graph(bundle: dict[str, Any]) -> GraphData:
    workers: dict[str, dict[str, Any]] = bundle["workers"]
    toolsets: dict[str, dict[str, Any]] = bundle["toolsets"]
    cycles = {w: i for i, group in enumerate(CallGraph.of_bundle(bundle).cycles()) for w in group}
    function = bundle["entry"].get("function")
    graph = GraphData(entry=f"function:{function['name']}" if function else f"worker:{bundle['entry']['worker']}")
    if function:
        graph.nodes[graph.entry] = "function"
    for edge in call_edges(bundle["workers"], bundle.get("entry")):
        callee = f"worker:{edge.callee}"
        if edge.kind == "entry":
            graph.edges.append(Edge(graph.entry, callee, "calls"))
            continue
        recursive = edge.caller in cycles and cycles.get(edge.callee) == cycles[edge.caller]
        # a `code` edge (front matter `calls:`: its Python tools call it) has no approval of its own
        gated = edge.kind == "tool" and _gated(workers[edge.caller]["tools"].get(edge.callee, {}))
        graph.edges.append(Edge(f"worker:{edge.caller}", callee, "calls", recursive, gated))
    for name, worker in workers.items():
        graph.nodes[f"worker:{name}"] = "worker"
        tools: dict[str, dict[str, Any]] = worker["tools"]
        for use in worker["toolsets"]:
            if use.get("worker"):
                continue  # a call edge, above
            key = use["toolset"]
            node = toolsets[key]
            if node["kind"] == "python" and node.get("export") != "TOOLSETS":
                # a directory worker's own tool is its own node: another worker's may have its name
                prefix = f"tool:{name}:" if node.get("module") == _own_module(worker) else "tool:"
                for tool, binding in tools.items():
                    if binding.get("toolset") == key:
                        graph.nodes[prefix + tool] = "tool"
                        graph.edges.append(Edge(f"worker:{name}", prefix + tool, "uses", gated=_gated(binding)))
                continue
            instance = toolset_node(key, use.get("settings") or {})
            graph.nodes[instance] = "toolset"
            gated = any(_gated(b) for b in tools.values() if b.get("toolset") == key)
            gated = gated or use.get("opaque_approval", "allow") != "allow"
            graph.edges.append(Edge(f"worker:{name}", instance, "uses", gated=gated))
    graph.edges.sort(key=lambda e: (e.source, e.target))
    analysis = analyse(bundle)
    for name in workers:
        # the edges show the calls; `attach:` repeats what read_file and the calls already show
        own = [r for r in analysis.reaches(name) if r.own and kind_of(r.capability) not in LOCAL_KINDS]
        graph.capabilities[f"worker:{name}"] = [
            r.capability + ("" if r.gate == ALLOW else f" [{r.gate}]") for r in own]
    _annotate_costs(graph, bundle)
    return graph


def _annotate_costs(graph: GraphData, bundle: dict[str, Any]) -> None:
    from ..cost.text import usd_json

    costs = CostAnalysis(of_bundle(bundle))
    for name in bundle["workers"]:
        dearest, gaps = costs.request_bound(name)
        if gaps:
            graph.costs[f"worker:{name}"] = {"status": "unbounded" if any(g.kind == "unbounded" for g in gaps) else "unpriced"}
        elif dearest is not None:
            graph.costs[f"worker:{name}"] = {"status": "bounded", "request_usd": usd_json(dearest.cost), "model": dearest.model}
    run = costs.entry_bound()
    graph.costs.setdefault(graph.entry, {}).update({"run_status": run.status, "run_usd": usd_json(run.usd)})


def cost_notes(graph: GraphData, node: str) -> list[str]:
    """`request at most $4.20 (anthropic:claude-sonnet-4-5)`, `run at most $210.00`: a node's cost lines."""
    cost = graph.costs.get(node)
    if not cost:
        return []
    notes = []
    if "status" in cost:
        notes.append(f"request at most ${cost['request_usd']} ({cost['model']})" if cost["status"] == "bounded"
                     else f"request {cost['status']}")
    if "run_status" in cost:
        notes.append(f"run at most ${cost['run_usd']}" if cost["run_status"] == "bounded" else f"run {cost['run_status']}")
    return notes


def toolset_node(key: str, settings: dict[str, Any]) -> str:
    """One node per toolset instance: `toolset:NAME` with its default settings, else
    `toolset:NAME(k=v,...)` (keys sorted, values other than text as compact JSON), so workers that
    give a toolset the same settings share its node and workers that give it others do not."""
    if not settings:
        return f"toolset:{key}"
    shown = ",".join(f"{k}={v if isinstance(v, str) else json.dumps(v, sort_keys=True, separators=(',', ':'))}"
                     for k, v in sorted(settings.items()))
    return f"toolset:{key}({shown})"


def _own_module(worker: dict[str, Any]) -> str | None:
    """The module of a directory worker's own tools.py (`workers.formatter.tools`), else None."""
    tools_file = directory_tools_file(worker.get("source") or "")
    return module_name(tools_file) if tools_file else None


def to_json(graph: GraphData) -> str:
    doc = {
        "entry": graph.entry,
        "nodes": [{"id": i, "kind": k, **({"capabilities": graph.capabilities[i]} if k == "worker" else {}),
                   **({"cost": graph.costs[i]} if i in graph.costs else {})}
                  for i, k in sorted(graph.nodes.items())],
        "edges": [
            {"from": e.source, "to": e.target, "kind": e.kind, "recursive": e.recursive, "gated": e.gated}
            for e in graph.edges
        ],
    }
    return json.dumps(doc, indent=2)


def _marks(e: Edge) -> str:
    marks = [m for m, on in (("recursive", e.recursive), ("approval", e.gated)) if on]
    return f" [{', '.join(marks)}]" if marks else ""


def to_text(graph: GraphData) -> str:
    lines = []
    by_source: dict[str, list[Edge]] = {}
    for e in graph.edges:
        by_source.setdefault(e.source, []).append(e)
    # the entry first (as `capabilities` lists it), then the other workers by name
    for node, kind in sorted(graph.nodes.items(), key=lambda item: (item[0] != graph.entry, item[1] != "function", item[0])):
        if kind not in ("worker", "function"):
            continue
        lines.append(node + (" (entry)" if node == graph.entry else ""))
        for e in by_source.get(node, []):
            lines.append(f"  {e.kind} {e.target}{_marks(e)}")
        lines += [f"  can {c}" for c in graph.capabilities.get(node, [])]
        lines += [f"  cost: {note}" for note in cost_notes(graph, node)]
    return "\n".join(lines)


def to_mermaid(graph: GraphData) -> str:
    """Mermaid ids are `n0`, `n1`, ... over the sorted nodes (names may hold characters Mermaid
    ids cannot, and `a-b` / `a_b` must stay two nodes); names are the labels."""
    ids = {node: f"n{i}" for i, node in enumerate(sorted(graph.nodes))}
    lines = ["flowchart LR"]
    for node, kind in sorted(graph.nodes.items()):
        label = "<br/>".join([node.split(":", 1)[1], *graph.capabilities.get(node, []), *cost_notes(graph, node)]).replace('"', "#quot;")
        shape = {"worker": f'["{label}"]', "toolset": f'[("{label}")]', "tool": f'(["{label}"])',
                 "function": f'{{{{"{label}"}}}}'}[kind]
        lines.append(f"  {ids[node]}{shape}")
    for e in graph.edges:
        arrow = "-->" if e.kind == "calls" else "-.->"
        label = _marks(e).strip(" []")
        lines.append(f"  {ids[e.source]} {arrow}{f'|{label}|' if label else ''} {ids[e.target]}")
    return "\n".join(lines)


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def to_dot(graph: GraphData) -> str:
    lines = ["digraph llm_do {", "  rankdir=LR;"]
    shapes = {"worker": "box", "toolset": "cylinder", "tool": "ellipse", "function": "hexagon"}
    for node, kind in sorted(graph.nodes.items()):
        extra = ", penwidth=2" if node == graph.entry else ""
        label = "\\n".join(_dot_escape(t) for t in [node.split(":", 1)[1], *graph.capabilities.get(node, []), *cost_notes(graph, node)])
        lines.append(f'  "{_dot_escape(node)}" [label="{label}", shape={shapes[kind]}{extra}];')
    for e in graph.edges:
        attrs = [] if e.kind == "calls" else ["style=dashed"]
        label = _marks(e).strip(" []")
        if label:
            attrs.append(f'label="{label}"')
        if e.gated:
            attrs.append("color=orange")
        lines.append(f'  "{_dot_escape(e.source)}" -> "{_dot_escape(e.target)}"' + (f" [{', '.join(attrs)}]" if attrs else "") + ";")
    lines.append("}")
    return "\n".join(lines)


RENDERERS: Renderers[GraphData] = {"text": to_text, "json": to_json, "mermaid": to_mermaid, "dot": to_dot}


def _gated(binding: dict[str, Any]) -> bool:
    """Not plainly allowed: asked, denied, decided by the toolset (`auto`) or by conditional rules."""
    return binding.get("approval", "allow") != "allow" or "rules" in binding

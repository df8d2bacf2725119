"""`llm-do capabilities` output: every worker's capabilities as text, JSON or Markdown.

Renderers over one `CapabilityReport`; the JSON shape is specified in spec/diff.md
("Capabilities"). Workers come entry first (an entry function under its label, `entry.py:main`),
then by name; a worker's capabilities side effects
first, then by name.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from llm_do.bundle.views import call_edges, entry_name

from ..analysis.capabilities import ALLOW, Analysis, Reach, WorkerView, is_side_effect, sorted_reaches, views_of_bundle
from ..analysis.flows.labels import sorted_labels
from ..analysis.reach_text import gate_text, via_text
from ..analysis.trifecta import Flow, Leg, bundle_flows
from ..cost.bound import CostAnalysis, CostBound
from ..cost.inputs import of_bundle
from ..cost.text import bound_detail, bound_json, bound_summary, price_data_line
from ..diff.unread_sides import NOT_EVALUATED, UNREAD_KEY, unread
from . import Renderers
from .flow_text import flow_lines, flow_markdown

REPORT_FORMAT = 1
"""Version of the JSON document; bumped when a field changes meaning or goes away."""


@dataclass
class CapabilityReport:
    entry: str
    workers: dict[str, list[Reach]]
    """Entry first, then by name."""
    unknown: dict[str, list[str]] = field(default_factory=dict)
    """Worker -> what it may reach that a `--no-import` reading could not list (`tools of MCP server
    srv`), its own and its callees'; shown as unknown rather than dropped."""
    labels: dict[str, list[str]] = field(default_factory=dict)
    """Capability -> its information-flow labels (absent: none)."""
    flows: dict[str, Flow] = field(default_factory=dict)
    """Worker -> its lethal trifecta, for the workers that hold one."""
    flow_legs: dict[str, dict[str, list[Leg]]] = field(default_factory=dict)
    """Worker -> every capability of each leg of its trifecta, least gated first (`FlowAnalysis.legs`)."""
    read_only_tools: frozenset[str] = frozenset()
    """`custom:NAME` of the Python tools that declare only reads (`Analysis.read_only_tools`)."""
    declassifying: dict[str, str] = field(default_factory=dict)
    """Worker -> its output schema's reference, for the workers whose output can carry no free text."""
    asked_only: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    """(worker, capability) -> the labels its path's grant has only for calls its approval asks,
    because conditional rules confine the unasked ones (`flows.rule_confinement`); absent: none."""
    costs: dict[str, CostBound] = field(default_factory=dict)
    """The cost bound of a run from each worker (the entry's first: from the entry, within
    `max_depth`; the others' as the first worker of a run)."""
    model: str | None = None
    """The `--model` the bounds were computed for (None: each worker's own models)."""
    quarantined: frozenset[str] = frozenset()
    """The workers whose callers' models get a reference to their output, never its words (`quarantined`)."""

    def label_text(self, worker: str, capability: str) -> str:
        """`private, untrusted` (and `; asked only: private` when rules confine the rest)."""
        text = ", ".join(self.labels.get(capability, ()))
        asked = self.asked_only.get((worker, capability))
        return f"{text}; asked only: {', '.join(asked)}" if asked else text

    def side_effect(self, capability: str) -> bool:
        return is_side_effect(capability) and capability not in self.read_only_tools


def report(bundle: dict[str, Any], analysis: Analysis | None = None, model: str | None = None) -> CapabilityReport:
    views = views_of_bundle(bundle)
    analysis = analysis or Analysis(views)
    entry = entry_name(bundle["entry"])
    order = sorted([*bundle["workers"], *([entry] if entry not in bundle["workers"] else [])], key=lambda w: (w != entry, w))
    labels: dict[str, set[str]] = {}
    for view in views.values():
        for grant in view.grants:
            if grant.labels:
                labels.setdefault(grant.capability, set()).update(grant.labels)
    flow_analysis = bundle_flows(bundle, views)
    flows = {w: f for w in order if (f := flow_analysis.flow(w)) is not None}
    reaches = {w: sorted_reaches(analysis.reaches(w), analysis) for w in order}
    declassifying = {w: str((node.get("output") or {}).get("ref") or "") for w, node in bundle["workers"].items()
                     if node.get("declassifies")}
    quarantined = frozenset(w for w, node in bundle["workers"].items() if node.get("quarantined"))
    return CapabilityReport(entry, reaches, _unknown(bundle, order), {c: sorted_labels(ls) for c, ls in sorted(labels.items())},
                            flows, {w: flow_analysis.legs(w) for w in flows}, analysis.read_only_tools,
                            declassifying, _asked_only(views, reaches), _costs(bundle, order, model), model,
                            quarantined=quarantined)


def declassifies_text(ref: str) -> str:
    return f"declassifies: its output ({ref}) can carry no free text, so its callers take in no untrusted content from it"


QUARANTINED_TEXT = ("quarantined: its callers' models get a reference to its output, never its words; "
                    "a call that uses the reference carries what it took in")


def _costs(bundle: dict[str, Any], order: list[str], model: str | None) -> dict[str, CostBound]:
    costs = CostAnalysis(of_bundle(bundle, model))
    callees = costs.callee_bounds
    return {w: costs.entry_bound() if i == 0 else callees[w] for i, w in enumerate(order)}


def _cost_heading(rep: CapabilityReport) -> str:
    models = f"every worker on '{rep.model}' (--model)" if rep.model else "on the models the workers name"
    return f"({price_data_line()}; {models})"


def _cost_lines(rep: CapabilityReport) -> list[str]:
    lines = [f"cost {_cost_heading(rep)}:"]
    width = max((len(w) + (8 if w == rep.entry else 0) for w in rep.costs), default=0)
    for worker, bound in rep.costs.items():
        name = worker + (" (entry)" if worker == rep.entry else "")
        run = "a run" if worker == rep.entry else "as the first worker"
        lines.append(f"  {name.ljust(width)}  {bound_summary(bound)} {run}: {bound_detail(bound)}"
                     if bound.usd is not None else f"  {name.ljust(width)}  {bound_summary(bound)}: {bound_detail(bound)}")
    return lines


def _asked_only(views: dict[str, WorkerView], reaches: dict[str, list[Reach]]) -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = {}
    for worker, found in reaches.items():
        for r in found:
            final = r.steps[-1]
            grant = next((g for g in views[r.path[-1]].grants
                          if g.capability == r.capability and g.via == final.via and g.via_kind == final.via_kind), None)
            if grant is not None and grant.conditional_labels is not None and grant.labels - grant.conditional_labels:
                out[(worker, r.capability)] = sorted_labels(grant.labels - grant.conditional_labels)
    return out


def _unknown(bundle: dict[str, Any], order: list[str]) -> dict[str, list[str]]:
    """For a document read without import: per worker, the tools it or a callee uses that nobody listed."""
    if UNREAD_KEY not in bundle:
        return {}
    own: dict[str, list[str]] = {}
    for u in unread(bundle):
        if u.kind in ("mcp", "names", "rules"):
            for w in u.workers:
                own.setdefault(w, []).append(u.subject)
    callees: dict[str, list[str]] = {}
    for edge in call_edges(bundle["workers"], bundle.get("entry")):
        callees.setdefault(edge.caller, []).append(edge.callee)
    out: dict[str, list[str]] = {}
    for worker in order:
        seen, stack, found = {worker}, [worker], []
        while stack:
            current = stack.pop()
            found += own.get(current, [])
            for callee in callees.get(current, []):
                if callee not in seen:
                    seen.add(callee)
                    stack.append(callee)
        if found:
            out[worker] = sorted(set(found))
    return out


def to_text(rep: CapabilityReport) -> str:
    lines: list[str] = []
    for worker, reaches in rep.workers.items():
        lines.append(worker + (" (entry)" if worker == rep.entry else ""))
        if worker in rep.declassifying:
            lines.append(f"  {declassifies_text(rep.declassifying[worker])}")
        if worker in rep.quarantined:
            lines.append(f"  {QUARANTINED_TEXT}")
        if not reaches:
            lines.append("  (no capabilities)")
        width = max((len(r.capability) for r in reaches), default=0)
        for r in reaches:
            mark = "!" if rep.side_effect(r.capability) and r.gate == ALLOW else " "
            labels = rep.label_text(worker, r.capability)
            flow_labels = f"  ({labels})" if labels else ""
            lines.append(f" {mark}{r.capability.ljust(width)}  via {via_text(r)}  [{gate_text(r)}]{flow_labels}")
        lines += [f" ?{subject}  ({NOT_EVALUATED})" for subject in rep.unknown.get(worker, ())]
        if worker in rep.flows:
            lines += flow_lines(rep.flows[worker], rep.flow_legs.get(worker))
    if rep.costs:
        lines += _cost_lines(rep)
    return "\n".join(lines)


def to_json(rep: CapabilityReport) -> str:
    doc = {
        "format": REPORT_FORMAT,
        "entry": rep.entry,
        "workers": [
            {"name": w, "capabilities": [{**r.to_json(), "side_effect": rep.side_effect(r.capability),
                                          "labels": rep.labels.get(r.capability, []),
                                          "asked_only_labels": rep.asked_only.get((w, r.capability), [])} for r in reaches],
             "unknown": rep.unknown.get(w, []), "flow": _flow_json(rep, w) if w in rep.flows else None,
             "declassifies": rep.declassifying.get(w), "quarantined": w in rep.quarantined,
             "cost": bound_json(rep.costs[w]) if w in rep.costs else None}
            for w, reaches in rep.workers.items()
        ],
        "cost_prices": price_data_line(),
        "cost_model": rep.model,
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)


def _flow_json(rep: CapabilityReport, worker: str) -> dict[str, Any]:
    legs = rep.flow_legs.get(worker) or {}
    return {**rep.flows[worker].to_json(), "sources": {label: [leg.to_json() for leg in found] for label, found in legs.items()}}


def md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("*", "\\*").replace("_", "\\_").replace("<", "&lt;")


def code(text: str) -> str:
    return f"`{text.replace('`', '')}`"


def to_markdown(rep: CapabilityReport) -> str:
    lines = ["# Capabilities", ""]
    unguarded = sum(1 for r in rep.workers.get(rep.entry, []) if rep.side_effect(r.capability) and r.gate == ALLOW)
    lines.append(f"Entry `{rep.entry}`: {unguarded} side effect{'s' if unguarded != 1 else ''} without approval.")
    for worker, reaches in rep.workers.items():
        lines += ["", f"## `{worker}`" + (" (entry)" if worker == rep.entry else ""), ""]
        if worker in rep.declassifying:
            lines += [md_escape(declassifies_text(rep.declassifying[worker])).capitalize() + ".", ""]
        if worker in rep.quarantined:
            lines += [md_escape(QUARANTINED_TEXT).capitalize() + ".", ""]
        if rep.unknown.get(worker):
            lines += [f"Unknown ({NOT_EVALUATED}): " + ", ".join(md_escape(s) for s in rep.unknown[worker]) + ".", ""]
        if not reaches:
            lines.append("No capabilities.")
            continue
        lines += ["| Capability | Via | Approval | Labels |", "|---|---|---|---|"]
        for r in reaches:
            labels = rep.label_text(worker, r.capability)
            lines.append(f"| {code(r.capability)} | {code(via_text(r))} | {md_escape(gate_text(r))} | {labels} |")
        if worker in rep.flows:
            lines += ["", *flow_markdown(rep.flows[worker], rep.flow_legs.get(worker))]
    if rep.costs:
        lines += ["", "## Cost", "", md_escape(_cost_heading(rep)), "", "| Worker | Bound | On |", "|---|---|---|"]
        for worker, bound in rep.costs.items():
            name = code(worker) + (" (entry)" if worker == rep.entry else "")
            lines.append(f"| {name} | {bound_summary(bound)} | {md_escape(bound_detail(bound))} |")
    return "\n".join(lines)


RENDERERS: Renderers[CapabilityReport] = {"text": to_text, "json": to_json, "markdown": to_markdown}

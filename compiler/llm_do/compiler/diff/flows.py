"""`diff`'s information-flow changes: a trifecta armed or disarmed, re-armed (its acceptance no
longer covers it), a flow accepted, a label of a capability or of a folder changed (spec/diff.md,
"Information flow"). Labels are those each side's analysis computed, declared or scanned.

Both sides are analysed whole (`trifecta`); a worker is reported where its flow forms, as
the lint reports it, so a chain of callers does not repeat one flow.
"""

from __future__ import annotations

from typing import Any

from llm_do.bundle.approval import ASK
from llm_do.bundle.flow import ANY, EGRESS, LABELS

from ..analysis.capabilities import CUSTOM_PREFIX, Analysis, WorkerView
from ..analysis.flows.labels import python_labels, sorted_labels
from ..analysis.reach_text import gate_text, leg_text, via_text
from ..analysis.trifecta import Flow, acceptances_of, bundle_flows
from .change import Change


def flow_changes(old: dict[str, Any], new: dict[str, Any], views: tuple[dict[str, WorkerView], dict[str, WorkerView]],
                 analyses: tuple[Analysis, Analysis] | None = None) -> list[Change]:
    """`views`: each side's `views_of_bundle`; `analyses`: their capability analyses, when the
    diff made them already (an acceptance needs them)."""
    old_views, new_views = views
    changes = _label_changes(old_views, new_views, new) + _policy_changes(old, new)
    old_flows = _flows(old, old_views)
    new_flows = _flows(new, new_views)
    for worker in sorted(set(old_flows) | set(new_flows)):
        before, after = old_flows.get(worker), new_flows.get(worker)
        armed_before = before is not None and before.armed  # accepted or not: accepting is its own entry
        armed_after = after is not None and after.armed
        if armed_after and not armed_before and after is not None and after.forms_here:
            changes.append(Change("high", "added", "flow", f"arms the trifecta for {worker}", _status(before), "armed",
                                  worker=worker, detail=[leg_text(leg) for leg in after.legs],
                                  note="through a server-side tool no approval can gate" if after.provider else None))
        elif armed_before and armed_after and before is not None and after is not None and before.accepted is not None \
                and after.accepted is None and after.forms_here:
            analysis = analyses[1] if analyses else Analysis(new_views)
            changes.append(Change("high", "widened", "flow", f"re-arms the trifecta for {worker}", "accepted", "armed",
                                  worker=worker, note="the flow acceptance no longer covers it",
                                  detail=_unaccepted(new, worker, new_views, analysis) + [leg_text(leg) for leg in after.legs]
                                  + [f"accepted for: {before.accepted.reason}"]))
        elif armed_before and not armed_after and before is not None and before.forms_here:
            changes.append(Change("low", "removed", "flow", f"disarms the trifecta for {worker}", "armed", _status(after),
                                  worker=worker))
    old_accept = {_accept_key(a) for a in (old.get("flows") or {}).get("accept") or ()}
    for entry in (new.get("flows") or {}).get("accept") or ():
        if _accept_key(entry) not in old_accept:
            changes.append(Change("high", "added", "flow", f"accepts a flow for {entry['worker']}", None, entry["reason"],
                                  worker=None, file="project.json",
                                  detail=[f"{leg}: {', '.join(entry[leg])}" for leg in ("private", "untrusted", "egress")]))
    new_accept = {_accept_key(a) for a in (new.get("flows") or {}).get("accept") or ()}
    for entry in (old.get("flows") or {}).get("accept") or ():
        if _accept_key(entry) not in new_accept:
            changes.append(Change("low", "removed", "flow", f"no longer accepts a flow for {entry['worker']}", entry["reason"],
                                  None, file="project.json"))
    return changes


def _unaccepted(doc: dict[str, Any], worker: str, views: dict[str, WorkerView], analysis: Analysis) -> list[str]:
    """What re-armed a flow: each capability giving the worker a leg that no acceptance of the
    worker names (for the egress, those reachable with nobody asked), `not accepted: egress custom:upload`."""
    entries = acceptances_of(a for a in (doc.get("flows") or {}).get("accept") or () if a["worker"] == worker)
    labelled: dict[str, set[str]] = {}
    for view in views.values():
        for grant in view.grants:
            for label in grant.labels:
                labelled.setdefault(label, set()).add(grant.capability)
    out = []
    for label in LABELS:
        named = {n for a in entries for n in getattr(a, label)}
        if ANY in named:
            continue
        for capability in analysis.capabilities(worker):
            reach = analysis.reach(worker, capability) if capability in labelled.get(label, ()) else None
            if reach is not None and capability not in named and (label != EGRESS or reach.gate != ASK):
                out.append(f"not accepted: {label} {capability} via {via_text(reach)} [{gate_text(reach)}]")
    return out


def _flows(doc: dict[str, Any], views: dict[str, WorkerView]) -> dict[str, Flow]:
    analysis = bundle_flows(doc, views)
    return {f.worker: f for f in analysis.flows()}


def _status(flow: Flow | None) -> str:
    return "none" if flow is None else flow.status


def _accept_key(entry: dict[str, Any]) -> tuple[object, ...]:
    return (entry["worker"], tuple(entry["private"]), tuple(entry["untrusted"]), tuple(entry["egress"]), entry["reason"])


def _labels(views: dict[str, Any]) -> dict[str, frozenset[str]]:
    """Each capability's labels, as each side's analysis computed them (declared or scanned); a
    Python tool's `custom:NAME` has those of everything the tool gives (what its `CAPABILITIES`
    entry declares, else what its code was found to do), so a declaration that changes is a change
    of the tool's labels."""
    out: dict[str, frozenset[str]] = {}
    for view in views.values():
        by_tool: dict[str, frozenset[str]] = {}
        for grant in view.grants:
            out[grant.capability] = out.get(grant.capability, frozenset()) | grant.labels
            if grant.via_kind == "tool":
                by_tool[grant.via] = by_tool.get(grant.via, frozenset()) | grant.labels
        for tool, labels in by_tool.items():
            own = CUSTOM_PREFIX + tool
            if own in out:
                out[own] |= labels
    return out


def _scanned(doc: dict[str, Any]) -> dict[str, tuple[frozenset[str], str | None]]:
    """`custom:NAME` -> the labels its code's effects give (`flows.labels.python_labels`), whatever
    it declares, and where its module declares it (`code:tools.py:CAPABILITIES`)."""
    out: dict[str, tuple[frozenset[str], str | None]] = {}
    for node in (doc.get("toolsets") or {}).values():
        if node.get("kind") == "python":
            module = f"{str(node.get('module') or '').replace('.', '/')}.py"
            for name, tool in (node.get("tools") or {}).items():
                effects = (tool.get("code") or {}).get("effects") or ()
                known = out.get(CUSTOM_PREFIX + name, (frozenset(), None))[0]
                out[CUSTOM_PREFIX + name] = (known | python_labels(effects), f"code:{module}:CAPABILITIES")
    return out


def _label_changes(old_views: dict[str, Any], new_views: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """A capability on both sides whose labels differ (a tool that now sends, a server said not to).
    High when a Python tool's labels lose one that its code still has: its `CAPABILITIES` no longer
    says `net` while the code still connects, and the flow analysis stops seeing the leg."""
    before, after = _labels(old_views), _labels(new_views)
    scanned: dict[str, tuple[frozenset[str], str | None]] | None = None
    out = []
    for c in sorted(set(before) & set(after)):
        if before[c] == after[c]:
            continue
        hidden: frozenset[str] = frozenset()
        at = None
        if c.startswith(CUSTOM_PREFIX) and before[c] - after[c]:
            scanned = _scanned(new) if scanned is None else scanned
            code, at = scanned.get(c, (frozenset(), None))
            hidden = (before[c] - after[c]) & code
        note = f"its code still gives {', '.join(sorted_labels(hidden))}, which it no longer declares" if hidden else None
        out.append(Change("high" if hidden else "medium", "changed", "flow", f"labels of {c}", ", ".join(sorted(before[c])) or "none",
                          ", ".join(sorted(after[c])) or "none", capability=c, note=note, at=at if hidden else None))
    return out


def _policy_changes(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """project.json's folder labels and what a run's input is."""
    o, n = old.get("flows") or {}, new.get("flows") or {}
    changes: list[Change] = []
    if o.get("inputs", "untrusted") != n.get("inputs", "untrusted"):
        changes.append(Change("medium", "changed", "flow", "a run's input", o.get("inputs", "untrusted"),
                              n.get("inputs", "untrusted"), file="project.json"))
    op, np_ = o.get("paths") or {}, n.get("paths") or {}
    for folder in sorted(set(op) | set(np_)):
        if op.get(folder) != np_.get(folder):
            changes.append(Change("medium", "changed", "flow", f"label of folder {folder}", op.get(folder), np_.get(folder),
                                  file="project.json"))
    return changes

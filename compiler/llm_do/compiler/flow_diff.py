"""`diff`'s information-flow changes: a trifecta armed or disarmed, a flow accepted, a label of a
capability or of a folder changed (spec/diff.md, "Information flow").

Both sides are analysed whole (`flows.trifecta`); a worker is reported where its flow forms, as
the lint reports it, so a chain of callers does not repeat one flow.
"""

from __future__ import annotations

from typing import Any

from .capabilities import Analysis, WorkerView
from .diff_change import Change
from .flows.text import leg_text
from .flows.trifecta import Flow, bundle_flows


def flow_changes(old: dict[str, Any], new: dict[str, Any], views: tuple[dict[str, WorkerView], dict[str, WorkerView]],
                 analyses: tuple[Analysis, Analysis] | None = None) -> list[Change]:
    """`views`: each side's `views_of_bundle`; `analyses`: their capability analyses, when the
    diff made them already (an acceptance needs them)."""
    old_views, new_views = views
    changes = _label_changes(old_views, new_views) + _policy_changes(old, new)
    old_flows = _flows(old, old_views, analyses[0] if analyses else None)
    new_flows = _flows(new, new_views, analyses[1] if analyses else None)
    for worker in sorted(set(old_flows) | set(new_flows)):
        before, after = old_flows.get(worker), new_flows.get(worker)
        armed_before = before is not None and before.armed  # accepted or not: accepting is its own entry
        armed_after = after is not None and after.armed
        if armed_after and not armed_before and after is not None and after.forms_here:
            changes.append(Change("high", "added", "flow", f"arms the trifecta for {worker}", _status(before), "armed",
                                  worker=worker, detail=[leg_text(leg) for leg in after.legs],
                                  note="through a server-side tool no approval can gate" if after.provider else None))
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


def _flows(doc: dict[str, Any], views: dict[str, WorkerView], capabilities: Analysis | None) -> dict[str, Flow]:
    analysis = bundle_flows(doc, views, capabilities)  # it analyses capabilities itself when an acceptance needs them
    return {f.worker: f for f in analysis.flows()}


def _status(flow: Flow | None) -> str:
    return "none" if flow is None else flow.status


def _accept_key(entry: dict[str, Any]) -> tuple:
    return (entry["worker"], tuple(entry["private"]), tuple(entry["untrusted"]), tuple(entry["egress"]), entry["reason"])


def _labels(views: dict[str, Any]) -> dict[str, frozenset[str]]:
    out: dict[str, frozenset[str]] = {}
    for view in views.values():
        for grant in view.grants:
            out[grant.capability] = out.get(grant.capability, frozenset()) | grant.labels
    return out


def _label_changes(old_views: dict[str, Any], new_views: dict[str, Any]) -> list[Change]:
    """A capability on both sides whose labels differ (a tool that now sends, a server said not to)."""
    before, after = _labels(old_views), _labels(new_views)
    return [Change("medium", "changed", "flow", f"labels of {c}", ", ".join(sorted(before[c])) or "none",
                   ", ".join(sorted(after[c])) or "none", capability=c)
            for c in sorted(set(before) & set(after)) if before[c] != after[c]]


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

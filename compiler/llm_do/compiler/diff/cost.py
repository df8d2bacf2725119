"""`diff`'s entries about what a run can cost (spec/diff.md, area `cost`).

- `cost bound of a run of E`: the entry's bound on each side (`cost.bound`), when it moved: a rise
  is **high** above the project's `cost.rise_factor` (the smaller of the two sides': a change cannot
  relax the factor it is judged by) and **medium** below it; a bound that is lost (unbounded,
  unpriced) is **high**; one that falls or is found is **low**. `detail`: the dearest request
  before and after, or the first gaps.
- `cost.rise_factor`, `cost.unpriced` and `cost.prices of M` as project.json sets them: a factor
  raised, `unpriced` relaxed to `accept` or a price declared, lowered or removed is **medium**
  (each can make a bound or a budget say less), the rest **low**.

Both sides are bounded with the same prices (the genai-prices release installed), so only the
project's changes move a bound. Pure.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from llm_do.bundle.model import DEFAULT_RISE_FACTOR, DEFAULT_UNPRICED

from ..cost.bound import CostAnalysis, CostBound
from ..cost.inputs import of_bundle
from ..cost.text import bound_detail, bound_summary, gap_text
from .change import Change, Severity, Verb, text_of


def cost_changes(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    oc, nc = old.get("cost") or {}, new.get("cost") or {}
    factor = min(_rise_factor(oc), _rise_factor(nc))
    out = _setting_changes(oc, nc)
    before, after = CostAnalysis(of_bundle(old)).entry_bound(), CostAnalysis(of_bundle(new)).entry_bound()
    change = _bound_change(before, after, factor)
    if change is not None:
        out.append(change)
    return out


def _bound_change(before: CostBound, after: CostBound, factor: float) -> Change | None:
    if before.usd is None and after.usd is None:
        return None
    if before.usd is not None and after.usd is not None:
        if before.usd == after.usd:
            return None
        rose = after.usd > before.usd
        high = rose and (before.usd == 0 or after.usd > before.usd * Decimal(str(factor)))
        severity: Severity = "high" if high else "medium" if rose else "low"
        verb: Verb = "widened" if rose else "narrowed"
        note = f"more than {factor:g}x" if high else None
    elif after.usd is None:
        severity, verb, note = "high", "widened", f"now {after.status}"
    else:
        severity, verb, note = "low", "narrowed", "now bounded"
    subject = f"cost bound of a run of {after.root}"
    return Change(severity, verb, "cost", subject, _side(before), _side(after), worker=after.root, note=note,
                  detail=[f"before: {_why(before)}", f"after: {_why(after)}"], at=f"worker:{after.root}")


def _side(bound: CostBound) -> str:
    return bound_summary(bound)


def _why(bound: CostBound) -> str:
    if bound.usd is None:
        return "; ".join(gap_text(g) for g in bound.gaps[:3]) + (" ..." if len(bound.gaps) > 3 or bound.more_gaps else "")
    return bound_detail(bound)


def _rise_factor(cost: dict[str, Any]) -> float:
    factor: float = cost.get("rise_factor", DEFAULT_RISE_FACTOR)
    return factor


def _setting_changes(oc: dict[str, Any], nc: dict[str, Any]) -> list[Change]:
    out: list[Change] = []
    of, nf = _rise_factor(oc), _rise_factor(nc)
    if of != nf:
        out.append(_project("medium" if nf > of else "low", "widened" if nf > of else "narrowed", "cost.rise_factor", of, nf))
    ou, nu = oc.get("unpriced", DEFAULT_UNPRICED), nc.get("unpriced", DEFAULT_UNPRICED)
    if ou != nu:
        relaxed = nu == "accept"
        out.append(_project("medium" if relaxed else "low", "widened" if relaxed else "narrowed", "cost.unpriced", ou, nu,
                            "relaxed" if relaxed else "tightened"))
    op, np = oc.get("prices") or {}, nc.get("prices") or {}
    for model in sorted(set(op) | set(np)):
        was, now = op.get(model), np.get(model)
        if was == now:
            continue
        cheaper = now is None or (was is not None and any(now.get(k, 0) < was.get(k, 0) for k in ("input_mtok", "output_mtok", "request")))
        verb: Verb = "added" if was is None else "removed" if now is None else "changed"
        out.append(_project("medium" if was is None or cheaper else "low", verb, f"cost.prices of {model}", text_of(was), text_of(now)))
    return out


def _project(severity: Severity, verb: Verb, subject: str, before: Any, after: Any, note: str | None = None) -> Change:
    return Change(severity, verb, "cost", subject, text_of(before), text_of(after), note=note, file="project.json")

"""Cost bounds in words, as `capabilities`, `graph` and `diff` show them: dollars rounded up to the
cent (a bound shown is never below the bound), gaps named with their worker and model."""

from __future__ import annotations

from typing import Any

from llm_do.pricing.money import usd, usd_json

from .bound import CostBound, Gap
from .models import CHOSEN

__all__ = ["bound_detail", "bound_json", "bound_summary", "gap_text", "price_data_line", "usd", "usd_json"]


def model_text(model: str) -> str:
    return "the model the run is given" if model == CHOSEN else f"'{model}'"


def gap_text(gap: Gap) -> str:
    on = "" if gap.model in (CHOSEN, "*") else f" on {model_text(gap.model)}"
    return f"'{gap.worker}'{on}: {gap.why}"


def bound_summary(bound: CostBound) -> str:
    """`at most $210.00` / `unbounded` / `unpriced`."""
    return f"at most {usd(bound.usd)}" if bound.usd is not None else bound.status


def bound_detail(bound: CostBound, *, path: bool = True) -> str:
    """What the figure rests on (the limits and the dearest request), or the first gap."""
    if bound.usd is None:
        first = bound.gaps[0]
        more = len(bound.gaps) - 1
        tail = f" (and {more}{'+' if bound.more_gaps else ''} more)" if more or bound.more_gaps else ""
        return gap_text(first) + tail
    parts = [", ".join(bound.shaped_by)]
    if bound.dominant is not None:
        dominant = bound.dominant
        route = f" via {' -> '.join(bound.path)}" if path and len(bound.path) > 1 else ""
        parts.append(f"dearest request: '{dominant.worker}' on '{dominant.model}', {usd(dominant.cost)}{route}")
    return "; ".join(parts)


def bound_json(bound: CostBound) -> dict[str, Any]:
    doc: dict[str, Any] = {"status": bound.status, "usd": usd_json(bound.usd), "requests": bound.requests,
                           "models": [m or None for m in bound.models]}
    if bound.dominant is not None:
        doc["dominant"] = {"worker": bound.dominant.worker, "model": bound.dominant.model,
                           "request_usd": usd_json(bound.dominant.cost), "path": list(bound.path)}
    if bound.shaped_by:
        doc["limits"] = list(bound.shaped_by)
    if bound.gaps:
        doc["gaps"] = [{"kind": g.kind, "worker": g.worker, "model": g.model or None, "why": g.why} for g in bound.gaps]
        doc["more_gaps"] = bound.more_gaps
    return doc


def price_data_line() -> str:
    """Which prices a bound was computed with: genai-prices' release and its data's newest change."""
    from llm_do.pricing.genai import data_release

    version, newest = data_release()
    return f"genai-prices {version}, price changes recorded to {newest}"

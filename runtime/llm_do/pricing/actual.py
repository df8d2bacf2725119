"""What one response cost, as a run counts it against its budget: the project's declared price of
the model the worker ran on, else genai-prices' price of the response (as pydantic-ai prices it:
the model and provider the response names, the provider's details such as its service tier),
else genai-prices' price of the model the worker ran on. None: it cannot be priced (no price is
known, or the provider did not report the response's usage), which a budget never counts as free.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from .rates import MILLION, ZERO
from .sheets import declared_price, offline


def response_cost(response: Any, model: str, declared: Mapping[str, Any] | None = None) -> Decimal | None:
    """USD the pydantic-ai `response` of a request to `model` (as llm-do names it) cost, or None."""
    usage = response.usage
    if getattr(usage, "unmeasured_requests", 0):
        return None
    sheet = declared_price(model, declared or {})
    if sheet is not None:
        cost: Decimal = (usage.input_tokens * sheet.input.base + usage.output_tokens * sheet.output.base) / MILLION
        return cost + sheet.per_request
    if offline(model):
        return ZERO
    return _genai_cost(response, model)


def _genai_cost(response: Any, model: str) -> Decimal | None:
    from genai_prices import calc_price

    usage = response.usage
    name = getattr(response, "model_name", None)
    context = getattr(response, "provider_details", None) or None
    at = getattr(response, "timestamp", None)
    tries: list[dict[str, Any]] = []
    if name:
        if getattr(response, "provider_url", None):
            tries.append({"model_ref": name, "provider_api_url": response.provider_url})
        if getattr(response, "provider_name", None):
            tries.append({"model_ref": name, "provider_id": response.provider_name})
    provider, _, own = model.partition(":")
    if own:
        tries.append({"model_ref": own, "provider_id": provider})
    for attempt in tries:
        try:
            return calc_price(usage, genai_request_timestamp=at, price_context=context, **attempt).total_price
        except (LookupError, ValueError):
            continue
    return None

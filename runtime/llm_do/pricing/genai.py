"""The price sheets of the models genai-prices knows, read off the data it ships.

Which prices count: those in force today and later: for a model whose price changed over time, the
price in force today and every price the data dates after it (a change it announces) or applies at
some hours of the day; older prices are history. Of the variants a provider bills by the
request's context (a `priority` or `flex` service tier, batch processing), the dearest, since the
provider, not the run, may pick the tier. So one release of the data gives one sheet per model
(until a change it announces comes into force).

genai-prices (and its data, about 1.6 MB of Python) is imported on the first sheet asked for.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import date
from decimal import Decimal
from functools import cache
from typing import Any

from .rates import ZERO, PriceSheet, Rate

USE_UNITS = {"web_searches": "web_search", "social_searches": "web_search", "code_executions": "code_execution"}
"""Units a provider-side tool is billed by, and the `server_side_tools` type that uses it (x.ai
bills a search of X posts made by its web search tool apart)."""
NEVER_USED = frozenset({"storage_searches"})
"""Units of provider-side tools llm-do cannot give a worker (OpenAI's file search): never billed."""


@cache
def data_release() -> tuple[str, str]:
    """(genai-prices' version, the date of its newest price change): what a bound was priced with."""
    import genai_prices
    from genai_prices.data_snapshot import get_snapshot
    from genai_prices.types import ConditionalPrice, StartDateConstraint

    newest = date.min
    for provider in get_snapshot().providers:
        for model in provider.models:
            dated: list[Any] = [c.constraint for c in model.prices if isinstance(c, ConditionalPrice)] if isinstance(model.prices, list) else []
            dated += [v.constraint for v in model.price_variants or ()]
            for constraint in dated:
                if isinstance(constraint, StartDateConstraint) and constraint.start_date > newest:
                    newest = constraint.start_date
    return genai_prices.__version__, newest.isoformat() if newest != date.min else "unknown"


def genai_sheet(model: str) -> PriceSheet | None:
    """The sheet of `model` (`provider:name`) from genai-prices' data; None when it knows neither
    the provider nor the model."""
    provider, sep, name = model.partition(":")
    if not sep or not name:
        return None
    return _sheet(provider, name, model)


@cache
def _sheet(provider: str, name: str, model: str) -> PriceSheet | None:
    from genai_prices.data_snapshot import get_snapshot

    try:
        _, info = get_snapshot().find_provider_model(name, None, provider, None)
    except LookupError:
        return None
    return sheet_of(model, info)


def sheet_of(model: str, info: Any) -> PriceSheet:
    """The sheet of one genai-prices `ModelInfo`."""
    from genai_prices.units import _get_registry  # the unit table: which price is for what

    registry = _get_registry()
    rates: dict[str, list[Rate]] = {"input": [], "output": []}
    per_request = ZERO
    per_use: dict[str, Decimal] = {}
    unmetered: set[str] = set()
    for prices in _prices_in_force(info):
        used: dict[str, Decimal] = {}
        for key, value in prices.__dict__.items():
            if value is None or key.startswith("_"):
                continue
            try:
                unit = registry.unit_for_price_key(key)
            except KeyError:  # a price genai-prices itself would not apply
                continue
            family = unit.dimensions.get("family")
            direction = unit.dimensions.get("direction")
            if family == "tokens" and direction in rates:
                rates[direction].append(_rate(value))
            elif family == "requests":
                per_request = max(per_request, _per_unit(value, unit.per))
            elif unit.usage_key in USE_UNITS:
                tool = USE_UNITS[unit.usage_key]
                used[tool] = used.get(tool, ZERO) + _per_unit(value, unit.per)
            elif unit.usage_key not in NEVER_USED:
                unmetered.add(unit.usage_key.replace("_", " "))
        for tool, price in used.items():
            per_use[tool] = max(per_use.get(tool, ZERO), price)
    return PriceSheet(model, "genai-prices", Rate.dearest(rates["input"]), Rate.dearest(rates["output"]),
                      per_request=per_request, per_use=per_use, unmetered=tuple(sorted(unmetered)),
                      context_window=info.context_window)


def _prices_in_force(info: Any) -> Iterator[Any]:
    """Every `ModelPrice` the model may be billed at today or later: the standard one in force today,
    those dated after it or applying at some hours, and each variant laid over them."""
    from genai_prices.types import ModelPrice, StartDateConstraint

    if isinstance(info.prices, ModelPrice):
        standard = [info.prices]
    else:
        today = date.today()
        current = max((i for i, c in enumerate(info.prices)
                       if c.constraint is None or (isinstance(c.constraint, StartDateConstraint) and c.constraint.start_date <= today)),
                      default=0)
        standard = [c.prices for c in info.prices[current:]]
    for prices in standard:
        yield prices
        for variant in info.price_variants or ():
            yield _overlaid(prices, variant.prices)


def _overlaid(standard: Any, variant: Any) -> Any:
    from copy import copy

    resolved = copy(standard)
    resolved.__dict__.update({k: v for k, v in variant.__dict__.items() if v is not None})
    return resolved


def _rate(value: Any) -> Rate:
    from genai_prices.types import TieredPrices

    if isinstance(value, TieredPrices):
        return Rate(value.base, tuple((tier.start, tier.price) for tier in value.tiers))
    return Rate(Decimal(value))


def _per_unit(value: Any, per: int) -> Decimal:
    """The price of one unit, from a price per `per` units (at its dearest tier)."""
    return max(_flat(value)) / per


def _flat(value: Any) -> Iterable[Decimal]:
    from genai_prices.types import TieredPrices

    if isinstance(value, TieredPrices):
        return [value.base, *(t.price for t in value.tiers)]
    return [Decimal(value)]

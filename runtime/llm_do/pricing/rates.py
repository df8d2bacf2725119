"""A model's prices as the cost bound reads them: for each kind of charge, the dearest rate any
request of the model can be billed at.

A token is billed at one rate (genai-prices splits a request's input tokens into cached reads,
cache writes, audio, images, text, each with its price, and every token falls in exactly one), so
the dearest input rate times a request's input tokens bounds what its input costs, whatever kinds
its tokens turn out to be; outputs alike. A rate may step up with the request's input tokens
(tiers: above 200,000 input tokens every token of the request costs more), so a rate is read at
the most input tokens a request can have.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

MILLION = Decimal(1_000_000)
ZERO = Decimal(0)

Source = Literal["genai-prices", "project", "offline"]


@dataclass(frozen=True)
class Rate:
    """USD per million tokens: `base`, or for a request with more input tokens than a tier's
    `start`, that tier's price (the last such tier, as genai-prices reads tiers)."""

    base: Decimal
    tiers: tuple[tuple[int, Decimal], ...] = ()

    @property
    def free(self) -> bool:
        return not self.base and not any(price for _, price in self.tiers)

    def at_most(self, input_tokens: int) -> Decimal:
        """The dearest price per million this rate has for a request of at most `input_tokens`
        input tokens: the base and every tier such a request can reach (a tier that is cheaper than
        one below it does not lower the answer)."""
        return max([self.base, *(price for start, price in self.tiers if input_tokens > start)])

    @classmethod
    def dearest(cls, rates: Iterable[Rate]) -> Rate:
        """One rate that is, at every size of request, the dearest of `rates` (none: free)."""
        rates = list(rates)
        if not rates:
            return cls(ZERO)
        starts = sorted({start for r in rates for start, _ in r.tiers})
        base = max(r.base for r in rates)
        tiers = tuple((s, max(r._at(s + 1) for r in rates)) for s in starts)
        return cls(base, tuple(t for t in tiers if t[1] > base) if tiers else ())

    def _at(self, input_tokens: int) -> Decimal:
        price = self.base
        for start, tier_price in sorted(self.tiers):
            if input_tokens > start:
                price = tier_price
        return price

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"per_mtok": str(self.base)}
        if self.tiers:
            doc["tiers"] = [{"above": start, "per_mtok": str(price)} for start, price in self.tiers]
        return doc


FREE_RATE = Rate(ZERO)


@dataclass(frozen=True)
class PriceSheet:
    """The prices of one model, as llm-do names it (`anthropic:claude-sonnet-4-5`)."""

    model: str
    source: Source
    input: Rate
    """The dearest rate of any input token: text, cached, written to a cache, audio, image."""
    output: Rate
    """The dearest rate of any output token: text, reasoning, audio, image."""
    per_request: Decimal = ZERO
    """USD each request costs besides its tokens."""
    per_use: Mapping[str, Decimal] = field(default_factory=dict)
    """USD per use of a provider-side tool (`web_search`, `code_execution`), by `server_side_tools`
    type; a use a request can make of no such tool costs nothing."""
    unmetered: tuple[str, ...] = ()
    """What else the model is billed by that no limit of a run counts (seconds of audio,
    characters, pages): a request of it has no worst case."""
    context_window: int | None = None
    """The most input tokens one request may have (the provider refuses a longer one); None:
    unknown."""

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"model": self.model, "source": self.source, "input": self.input.to_json(),
                               "output": self.output.to_json()}
        if self.per_request:
            doc["per_request"] = str(self.per_request)
        if self.per_use:
            doc["per_use"] = {k: str(v) for k, v in sorted(self.per_use.items())}
        if self.unmetered:
            doc["unmetered"] = list(self.unmetered)
        if self.context_window is not None:
            doc["context_window"] = self.context_window
        return doc


def offline_sheet(model: str) -> PriceSheet:
    """pydantic-ai's `test` model: no provider, no charge."""
    return PriceSheet(model, "offline", FREE_RATE, FREE_RATE)


def declared_sheet(model: str, declared: Mapping[str, Any]) -> PriceSheet:
    """The sheet of a price the project declares (project.json `cost.prices`, as the bundle holds
    it: `input_mtok`, `output_mtok`, `request`, `context_window`)."""
    window = declared.get("context_window")
    return PriceSheet(
        model, "project",
        Rate(_decimal(declared.get("input_mtok", 0))),
        Rate(_decimal(declared.get("output_mtok", 0))),
        per_request=_decimal(declared.get("request", 0)),
        context_window=int(window) if window is not None else None,
    )


def _decimal(value: Any) -> Decimal:
    """A price from JSON as the Decimal it reads as (`0.1`, not the float nearest it)."""
    return Decimal(str(value))

"""The most one request of a worker can bill, and what that costs at the dearest prices.

What bounds one request (spec/cost.md, "One request"):
- its input tokens: the model's context window (the provider refuses a longer request), or the
  run's `per_request_input_tokens_limit` when `count_tokens_before_request` counts them before the
  request is sent (a request over it is never sent), whichever is smaller;
- its output tokens: `max_tokens` in the worker's model settings, or the context window;
- settings that reach the provider's request unread (`extra_body`, `extra_headers`,
  `anthropic_betas`: a larger context window is one header away) leave only the run's limits;
- a worker with provider-side tools: pydantic-ai continues a response the provider paused up to
  `CONTINUATIONS` times, each a request billed as one; a use of a tool billed per use (a web search)
  needs `max_uses`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property
from typing import Any

from .rates import MILLION, ZERO, PriceSheet

CONTINUATIONS = 10
"""pydantic-ai's `MAX_GENERATION_CONTINUATIONS`: how often one response the provider paused is
continued (tests/pricing checks it against pydantic-ai's)."""
RAW_SETTINGS = ("extra_body", "extra_headers", "anthropic_betas")
"""Model settings sent to the provider as they are: they can widen the context window or the output."""


@dataclass(frozen=True)
class WorstRequest:
    """One request of a worker on one model at its worst: tokens, rates, and what it costs."""

    model: str
    input_tokens: int | None
    """Per part of the request (see `parts`); None: nothing bounds them."""
    output_tokens: int | None
    parts: int
    """Billed requests one counted request can be: 1, or 1 + CONTINUATIONS with provider-side tools."""
    input_rate: Decimal = ZERO
    """USD per input token at the request's worst (tier included)."""
    output_rate: Decimal = ZERO
    fixed: Decimal = ZERO
    """USD per part besides tokens: the per-request price and the provider-side tools' uses."""
    missing: tuple[str, ...] = field(default_factory=tuple)
    """Why it has no worst case (empty: it has one)."""

    @cached_property
    def cost(self) -> Decimal | None:
        """USD at the worst; None when unbounded."""
        if self.missing or self.input_tokens is None or self.output_tokens is None:
            return None
        return self.parts * (self.input_tokens * self.input_rate + self.output_tokens * self.output_rate + self.fixed)


def worst_request(sheet: PriceSheet, settings: Mapping[str, Any] | None, limits: Mapping[str, Any] | None,
                  server_side_tools: Sequence[Mapping[str, Any]] = ()) -> WorstRequest:
    """The worst one request can cost: `settings`, the worker's effective model settings (its own,
    else the project default's); `limits`, the run's `usage_limits`."""
    settings = settings or {}
    limits = limits or {}
    missing: list[str] = []
    raw = sorted(k for k in RAW_SETTINGS if k in settings)
    window = sheet.context_window if not raw else None
    counted = limits.get("per_request_input_tokens_limit") if limits.get("count_tokens_before_request") else None
    input_tokens = _least(window, counted)
    max_tokens = settings.get("max_tokens") if not raw else None
    output_tokens = _least(max_tokens if isinstance(max_tokens, int) and not isinstance(max_tokens, bool) else None, window)
    if input_tokens is None and sheet.input.free and not sheet.output.tiers:
        input_tokens = 0  # free input tokens cost nothing however many (and no output price depends on their number)
    if output_tokens is None and sheet.output.free:
        output_tokens = 0
    unread = f"model_settings {', '.join(raw)} reach the provider unread (a wider context window, a larger output is one setting away)"
    if input_tokens is None:
        why = unread if raw else f"'{sheet.model}' has no known context window"
        missing.append(f"nothing bounds the input tokens of one request: {why}, and the run does not count them before "
                       "a request (usage_limits.count_tokens_before_request with per_request_input_tokens_limit)")
    if output_tokens is None:
        why = unread if raw else f"no max_tokens in model_settings and no known context window for '{sheet.model}'"
        missing.append(f"nothing bounds the output tokens of one request: {why}")
    parts = 1 + CONTINUATIONS if server_side_tools else 1
    fixed = sheet.per_request
    for tool in server_side_tools:
        kind = str(tool.get("tool_type"))
        price = sheet.per_use.get(kind)
        if not price:
            continue
        uses = tool.get("max_uses")
        if kind == "web_search" and isinstance(uses, int):
            fixed += uses * price
        else:
            how = "set max_uses" if kind == "web_search" else "no limit counts its uses"
            missing.append(f"'{sheet.model}' bills each use of the provider's {kind} and nothing bounds the uses ({how})")
    missing += [f"'{sheet.model}' bills by {unit}, which no limit of a run counts" for unit in sheet.unmetered]
    worst_input = input_tokens or 0
    return WorstRequest(sheet.model, input_tokens, output_tokens, parts,
                        sheet.input.at_most(worst_input) / MILLION if input_tokens is not None else sheet.input.base / MILLION,
                        sheet.output.at_most(worst_input) / MILLION if input_tokens is not None else sheet.output.base / MILLION,
                        fixed, tuple(missing))


def _least(*values: int | None) -> int | None:
    known = [v for v in values if v is not None]
    return min(known) if known else None

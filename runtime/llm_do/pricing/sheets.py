"""A model's price sheet by the name llm-do gives it: the project's declared price first
(project.json `cost.prices`, exactly the name, else the patterns that match it at their dearest),
then pydantic-ai's offline `test` model (free), then genai-prices."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from .rates import PriceSheet, Rate, declared_sheet, offline_sheet

OFFLINE_MODELS = frozenset({"test"})
OFFLINE_PREFIXES = ("script:",)
"""Models that reach no provider: pydantic-ai's `test`, and a run's scripted turns (`--script`)."""


def offline(model: str) -> bool:
    return model in OFFLINE_MODELS or model.startswith(OFFLINE_PREFIXES)


def declared_price(model: str, declared: Mapping[str, Any]) -> PriceSheet | None:
    """The project's price of `model`: its own entry, else what the entries whose patterns match it
    (`ollama:*`) say at their dearest (each rate the highest of theirs, the context window the
    largest, unknown when one leaves it out); None when none does."""
    if model in declared:
        return declared_sheet(model, declared[model])
    matching = [declared_sheet(model, entry) for pattern, entry in declared.items() if fnmatch.fnmatchcase(model, pattern)]
    if not matching:
        return None
    windows = [s.context_window for s in matching]
    return PriceSheet(model, "project", Rate.dearest(s.input for s in matching), Rate.dearest(s.output for s in matching),
                      per_request=max(s.per_request for s in matching),
                      context_window=None if None in windows else max(w for w in windows if w is not None))


def price_sheet(model: str, declared: Mapping[str, Any] | None = None) -> PriceSheet | None:
    """The sheet `model` is priced by, or None: no price is known for it. A declared price without
    a context window takes genai-prices' window for the model, when it knows one."""
    from .genai import genai_sheet

    found = declared_price(model, declared or {})
    if found is not None:
        if found.context_window is None and (known := genai_sheet(model)) is not None and known.context_window is not None:
            return replace(found, context_window=known.context_window)
        return found
    if offline(model):
        return offline_sheet(model)
    return genai_sheet(model)

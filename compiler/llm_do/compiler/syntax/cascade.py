"""What an error leaves unknown, so the stages after it do not report its consequences again.

Validation drops what is invalid and goes on (one lint reports every problem), but a dropped
value is missing downstream: a dropped `vars` makes every template variable "undefined", a
dropped `toolsets` makes approval rules "match nothing". The stages ask what was dropped, by key,
instead of reporting those follow-ons.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ..suggest import closest


def dropped_keys(data: dict[str, Any], model: BaseModel) -> frozenset[str]:
    """The top-level keys of `data` that validation into `model` dropped, or shortened (a list
    that lost items); an unknown key counts for the absent field it most resembles (`toolset`:
    toolsets)."""
    fields = type(model).model_fields
    out: set[str] = set()
    for key, value in data.items():
        if key not in fields:
            near = closest(str(key), fields)
            if near is not None and near not in data:
                out.add(near)  # `toolset:` instead of `toolsets:` (with both, the key is just extra)
        elif key not in model.model_fields_set:
            out.add(key)
        elif isinstance(value, list) and len(value) != len(getattr(model, key) or ()):
            out.add(key)
        elif isinstance(value, dict) and isinstance(getattr(model, key), (dict, BaseModel)) and _lost_items(value, getattr(model, key)):
            out.add(key)
    return frozenset(out)


def _lost_items(value: dict[str, Any], kept: dict[str, Any] | BaseModel) -> bool:
    if isinstance(kept, BaseModel):
        return bool(set(value) - kept.model_fields_set)
    return len(value) != len(kept)

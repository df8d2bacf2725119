"""Empty defaults for pydantic models on a compile's path: `Field(default_factory=empty_list)`.

pydantic asks for the signature of every `default_factory` (does it take the validated data?).
For a builtin such as `list` or `dict` Python reads that signature from text with `tokenize`,
whose first use compiles one large regular expression: milliseconds of every `build` and `lint`
of a small project. A Python function's signature costs nothing of the kind. The JSON Schema
and the validated values are the same as with `list` and `dict`.
"""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


def empty_list() -> list[T]:
    return []


def empty_dict() -> dict[str, T]:
    return {}

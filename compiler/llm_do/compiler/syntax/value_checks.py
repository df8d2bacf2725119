"""Parsed values the bundle could not hold: found once, right after parsing.

JSON's `\\ud800` escape makes a lone UTF-16 surrogate, which no UTF-8 file (the bundle, a
terminal) can hold; `1e400` and YAML's `.inf` and `.nan` are numbers JSON has no spelling for.
One iterative walk finds the first such value (and bounds the depth, whatever built the data),
so the stages after parsing never meet one.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from .. import codes
from .limits import MAX_NESTING
from .positions import Path

_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Unfit:
    path: Path
    at_key: bool
    """The problem is the key that ends `path`, not its value."""
    code: codes.Rule
    message: str


def first_unfit(data: Any) -> Unfit | None:
    """The first value (in document order) that is too deep, not text, or not a finite number."""
    pending: list[tuple[Path, Any]] = [((), data)]
    while pending:
        path, value = pending.pop()
        if isinstance(value, str):
            problem = _text_problem(value)
            if problem:
                return Unfit(path, False, codes.NOT_TEXT, f"a string with {problem}")
        elif isinstance(value, float) and not math.isfinite(value):
            return Unfit(path, False, codes.INVALID_VALUE, f"the number {value} has no JSON form; write a finite number")
        elif isinstance(value, dict | list):
            if len(path) >= MAX_NESTING:
                return Unfit(path, False, codes.LIMIT_EXCEEDED, f"lists and mappings nested more than {MAX_NESTING} deep")
            items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))
            for key, _ in items:
                problem = _text_problem(key) if isinstance(key, str) else None
                if problem:
                    return Unfit(path + (key,), True, codes.NOT_TEXT, f"a key with {problem}")
            pending.extend((path + (key,), item) for key, item in reversed(items))
    return None


def _text_problem(text: str) -> str | None:
    match = _SURROGATE.search(text)
    if match is None:
        return None
    return f"an unpaired surrogate \\u{ord(match.group()):04x}, which is not text"

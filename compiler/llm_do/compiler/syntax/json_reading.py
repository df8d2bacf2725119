"""project.json's text to data with the standard `json` module, refusing what the bundle cannot hold.

`json` reads `NaN` and `Infinity`, which are not JSON, integers of any length (Python refuses to
convert more than 4300 digits, with a ValueError), and recurses once per level of nesting. Each
becomes a problem at an offset here; what `json` reads is then JSON the bundle can hold.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from .. import codes
from .hints import json_trailing_comma
from .limits import MAX_NESTING, json_nesting_overflow

MAX_DIGITS = 4300
"""Python's own limit on converting digits to an integer (sys.get_int_max_str_digits)."""


@dataclass(frozen=True)
class JsonProblem:
    code: codes.Rule
    message: str
    line: int
    column: int
    hint: str | None = None


@dataclass
class JsonData:
    data: Any
    has_duplicates: bool


class _Refused(ValueError):
    def __init__(self, code: codes.Rule, message: str, token: str) -> None:
        super().__init__(code.code, message)
        self.code, self.message, self.token = code, message, token


def read_json(text: str) -> JsonData | JsonProblem:
    offset = json_nesting_overflow(text)
    if offset is not None:
        return _at(codes.LIMIT_EXCEEDED, f"lists and objects nested more than {MAX_NESTING} deep", text, offset)
    duplicated: list[bool] = []
    try:
        data = json.loads(text, object_pairs_hook=_duplicates_noted(duplicated), parse_constant=_no_constant,
                          parse_int=_bounded_int)
    except json.JSONDecodeError as exc:
        comma = json_trailing_comma(text, exc.pos)
        if comma is not None:
            problem = _at(codes.JSON_SYNTAX, f"invalid JSON: a trailing comma before '{text[exc.pos]}'", text, comma)
            return replace(problem, hint="remove this comma: JSON allows none after the last item")
        return JsonProblem(codes.JSON_SYNTAX, f"invalid JSON: {exc.msg}", exc.lineno, exc.colno)
    except _Refused as exc:
        return _at(exc.code, exc.message, text, text.find(exc.token))
    return JsonData(data, bool(duplicated))


def _no_constant(token: str) -> float:
    raise _Refused(codes.JSON_SYNTAX, f"invalid JSON: {token} is not a JSON value", token)


def _bounded_int(token: str) -> int:
    if len(token.lstrip("-")) > MAX_DIGITS:
        raise _Refused(codes.LIMIT_EXCEEDED, f"a number of {len(token)} digits, more than the {MAX_DIGITS} a number may have", token)
    return int(token)


def _duplicates_noted(found: list[bool]) -> Callable[[list[tuple[str, object]]], dict[str, object]]:
    """A json object hook that keeps the last value, as json does, and notes repeated keys."""

    def hook(pairs: list[tuple[str, object]]) -> dict[str, object]:
        out = dict(pairs)
        if len(out) != len(pairs):
            found.append(True)
        return out

    return hook


def _at(code: codes.Rule, message: str, text: str, offset: int) -> JsonProblem:
    offset = max(0, min(offset, len(text)))
    line_start = text.rfind("\n", 0, offset) + 1
    return JsonProblem(code, message, text.count("\n", 0, offset) + 1, offset - line_start + 1)

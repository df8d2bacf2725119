"""`-k EXPR`: which cases run, as pytest selects tests: words matched as substrings of the case's
name (case-insensitively), combined with `and`, `or`, `not` and parentheses."""

from __future__ import annotations

import re
from collections.abc import Callable

from .cases import CaseProblem

TOKEN = re.compile(r"\s*(\(|\)|[^\s()]+)")

Matcher = Callable[[str], bool]


def selector(expression: str) -> Matcher:
    """A predicate on case names; a malformed expression is a usage error."""
    tokens = [m.group(1) for m in TOKEN.finditer(expression)]
    if not tokens:
        raise CaseProblem(f"-k {expression!r}: empty expression")
    position = 0

    def peek() -> str | None:
        return tokens[position] if position < len(tokens) else None

    def take() -> str:
        nonlocal position
        if position >= len(tokens):
            raise CaseProblem(f"-k {expression!r}: unexpected end of the expression")
        position += 1
        return tokens[position - 1]

    def either() -> Matcher:
        parts = [both()]
        while peek() == "or":
            take()
            parts.append(both())
        return lambda name: any(part(name) for part in parts)

    def both() -> Matcher:
        parts = [negation()]
        while peek() == "and":
            take()
            parts.append(negation())
        return lambda name: all(part(name) for part in parts)

    def negation() -> Matcher:
        if peek() == "not":
            take()
            inner = negation()
            return lambda name: not inner(name)
        word = take()
        if word == "(":
            inner = either()
            if take() != ")":
                raise CaseProblem(f"-k {expression!r}: a parenthesis is not closed")
            return inner
        if word in (")", "and", "or"):
            raise CaseProblem(f"-k {expression!r}: unexpected {word!r}")
        needle = word.lower()
        return lambda name: needle in name.lower()

    matcher = either()
    if position != len(tokens):
        raise CaseProblem(f"-k {expression!r}: unexpected {tokens[position]!r}")
    return matcher

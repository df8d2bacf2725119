"""Hints that name the likely cause of a syntax or value error: pure functions of the text or data.

A parser reports where it gave up ("found character that cannot start any token"), not why; a
person wants "YAML does not allow tabs". Each function here recognizes one common cause from the
text around the error, or returns None.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .positions import Path

APPROVAL_WORDS = ("allow", "ask", "deny")
RUN_INPUT_NAMES = frozenset({"input", "attachments", "prompt", "args"})
"""Names a template author may expect the run's input under."""

_KEY_THEN_VALUE = re.compile(r"^(?P<key>\s*(?:-\s+)?[A-Za-z_][\w-]*:\s+)(?P<value>[^\"'\[{|>].*?)\s*$")


_KEY = re.compile(r"^(?P<indent> *)(?:-\s+)?(?P<key>[A-Za-z_][\w-]*):(?:\s|$)")
_INDENTATION_ERRORS = ("did not find expected key", "did not find expected <document start>", "expected <block end>",
                       "mapping values are not allowed")


def yaml_hint(line: str, column: int | None, message: str, previous: str | None = None) -> str | None:
    """The likely cause of a YAML error at `column` of `line` (the source line it points at);
    `previous`: the nearest line above it that holds something, if any."""
    indent = line[: len(line) - len(line.lstrip(" \t"))]
    if "\t" in indent or (column and line[column - 1 : column] == "\t"):
        return "YAML does not allow tabs for indentation: indent with spaces"
    if "mapping values are not allowed" in message:
        match = _KEY_THEN_VALUE.match(line)
        if match and ": " in match["value"]:
            return f"a value containing ': ' must be quoted: {match['key'].strip()} {json.dumps(match['value'], ensure_ascii=False)}"
    key = _KEY.match(line)
    if key and previous is not None and any(m in message for m in _INDENTATION_ERRORS):
        above = len(previous) - len(previous.lstrip(" "))
        if len(key["indent"]) != above:
            spaces = len(key["indent"])
            return (f"check the indentation of '{key['key']}' ({spaces} space{'s' if spaces != 1 else ''}, the line above "
                    f"has {above}): the keys of one mapping start in the same column, the front matter's own in the first")
    return None


def json_trailing_comma(text: str, position: int) -> int | None:
    """The offset of a trailing comma the JSON error at `position` comes from (a `,` followed only
    by whitespace before the `}` or `]` the parser stopped at), or None."""
    if text[position : position + 1] not in ("}", "]"):
        return None
    before = text[:position].rstrip()
    return len(before) - 1 if before.endswith(",") else None


def front_matter_value_hints(data: dict[str, Any]) -> dict[Path, str]:
    """Hints for front matter values of a shape people write by mistake, by their path."""
    out: dict[Path, str] = {}
    approvals = data.get("approvals")
    if isinstance(approvals, list):
        for i, item in enumerate(approvals):
            if isinstance(item, dict) and len(item) == 1:
                ((word, target),) = item.items()
                if word in APPROVAL_WORDS and isinstance(target, str):
                    out[("approvals", i)] = f"a rule is one string: `- {word} {target}` (no colon)"
                elif isinstance(word, str) and word.split(" ", 1)[0] in APPROVAL_WORDS:
                    out[("approvals", i)] = (f"the ': ' after `{word}` made YAML read a mapping, not a rule: a rule is one "
                                             f"string (`- {word}`), quoted if it must hold ': '")
    return out


def undefined_variable_hint(name: str, variables: dict[str, Any]) -> str:
    """For a template variable that is not defined: the closest var, or why the run's input is
    not one, or how to define it."""
    from ..suggest import closest

    match = closest(name, variables)
    if match:
        return f"did you mean '{match}'?"
    if name in RUN_INPUT_NAMES:
        return ("instructions are rendered once, at build time, with the `vars` of project.json; "
                "a run's input is not a template variable: it reaches the model as the prompt, after the instructions")
    return f'define it in project.json: "vars": {{"{name}": ...}}'

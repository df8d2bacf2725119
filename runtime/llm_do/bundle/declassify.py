"""Outputs that can carry no free text: a worker whose output schema holds only numbers, booleans,
enumerated values, dates, and strings held to an identifier-like pattern returns no words a third
party wrote, so what it read does not make its callers' frames untrusted (the "dual LLM" pattern;
spec/language.md, "Declassifying callees").

One judge for build and run: the compiler asks `free_text(schema)` of each worker's output schema
and records the verdict (R011 says why); the runtime checks each output of such a worker against
the same schema with `conforms` before its caller's frame drops the untrusted content the worker
took in, so a Python class whose validation is looser than its JSON Schema cannot widen the
channel. Standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

MAX_IDENTIFIER = 256
"""The longest string an identifier-like pattern may match."""
SAFE_FORMATS: Mapping[str, re.Pattern[str]] = {
    "date": re.compile(r"\d{4}-\d{2}-\d{2}"),
    "date-time": re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?"),
    "time": re.compile(r"\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?"),
    "uuid": re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"),
    "email": re.compile(r"[^\s@]{1,64}@[^\s@]{1,190}"),
}
"""String formats that hold no words, as the runtime checks them."""
PLAIN_TYPES = ("integer", "number", "boolean", "null")


def free_text(schema: Mapping[str, object]) -> str | None:
    """Why an output of `schema` can carry free text (`field 'summary' is free text`), or None when
    it cannot. `$ref`s are read from the schema's `$defs`."""
    return _free(schema, _defs(schema), "the output", set())


def _defs(schema: Mapping[str, object]) -> Mapping[str, object]:
    """The schema's `$defs` (a JSON Schema's are an object), {} when it has none."""
    defs = schema.get("$defs")
    return defs if isinstance(defs, Mapping) else {}


def _free(node: object, defs: Mapping[str, object], where: str, seen: set[str]) -> str | None:
    if not isinstance(node, Mapping):
        return f"{where} has no schema"
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if not ref.startswith("#/$defs/") or name not in defs:
            return f"{where} refers to {ref}, which is not in the schema"
        if name in seen:
            return None  # a recursive type: judged where it was first met
        return _free(defs[name], defs, where, seen | {name})
    if "enum" in node or "const" in node:
        return None
    for key in ("anyOf", "oneOf", "allOf"):
        if key in node:
            for branch in node[key]:
                found = _free(branch, defs, where, seen)
                if found is not None:
                    return found
            return None
    kind = node.get("type")
    if isinstance(kind, list):
        return next((f for k in kind if (f := _free({**node, "type": k}, defs, where, seen)) is not None), None)
    if kind in PLAIN_TYPES:
        return None
    if kind == "string":
        return _string_free(node, where)
    if kind == "array":
        items = node.get("items")
        if items is None:
            return f"{where} is a list of anything"
        return _free(items, defs, f"{where}'s items", seen) if items is not True else f"{where} is a list of anything"
    if kind == "object":
        for name, sub in (node.get("properties") or {}).items():
            found = _free(sub, defs, f"field '{name}'", seen)
            if found is not None:
                return found
        for pattern, sub in (node.get("patternProperties") or {}).items():
            if not _identifier_pattern(pattern):
                return f"the keys of {where} are free text"
            found = _free(sub, defs, f"{where}'s values", seen)
            if found is not None:
                return found
        extra = node.get("additionalProperties")
        if isinstance(extra, Mapping) or extra is True or (
                extra is None and not node.get("properties") and not node.get("patternProperties")):
            return f"the keys of {where} are free text"
        return None
    return f"{where} may be any value"


def _string_free(node: Mapping[str, object], where: str) -> str | None:
    fmt = node.get("format")
    if isinstance(fmt, str) and fmt in SAFE_FORMATS:
        return None
    pattern = node.get("pattern")
    if isinstance(pattern, str) and _identifier_pattern(pattern):
        return None
    return f"{where} is free text (a string without an enum, a date or e-mail format, or a pattern that admits no space)"


def _identifier_pattern(pattern: str) -> bool:
    """Whether strings matching `pattern` cannot be words: it is anchored at both ends, admits no
    whitespace and no string longer than `MAX_IDENTIFIER`."""
    if not (pattern.startswith("^") and pattern.endswith("$") and not pattern.endswith("\\$")):
        return False
    from re import _parser as parser  # type: ignore[attr-defined,unused-ignore]  # the parser `re` compiles with (3.11+)

    try:
        parsed = parser.parse(pattern)
    except re.error:
        return False
    return parsed.getwidth()[1] <= MAX_IDENTIFIER and _no_space(parsed.data)


def _no_space(items: Any) -> bool:
    from re import _constants as c  # type: ignore[attr-defined,unused-ignore]

    for op, arg in items:
        if op in (c.ANY, c.NOT_LITERAL):
            return False
        if op is c.LITERAL and chr(arg).isspace():
            return False
        if op is c.IN and not _class_has_no_space(arg):
            return False
        if op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT) and not _no_space(arg[2]):
            return False
        if op is c.SUBPATTERN and not _no_space(arg[-1]):
            return False
        if op is c.BRANCH and not all(_no_space(b) for b in arg[1]):
            return False
        if op in (c.ASSERT, c.ASSERT_NOT, c.GROUPREF, c.GROUPREF_EXISTS, c.ATOMIC_GROUP):  # `\d`, `\s` parse as IN: below
            return False
    return True


def _class_has_no_space(items: Any) -> bool:
    from re import _constants as c  # type: ignore[attr-defined,unused-ignore]

    for op, arg in items:
        if op is c.NEGATE:
            return False
        if op is c.LITERAL and chr(arg).isspace():
            return False
        if op is c.RANGE and any(chr(x).isspace() for x in range(arg[0], min(arg[1], 0x3000) + 1)):
            return False
        if op is c.CATEGORY and arg not in (c.CATEGORY_DIGIT, c.CATEGORY_WORD):
            return False
    return True


def conforms(value: object, schema: Mapping[str, object]) -> bool:
    """Whether `value` (the output as JSON: dicts, lists, strings, numbers) keeps to `schema` the way
    `free_text` judged it: every string is enumerated, of a safe format, or matches its pattern."""
    return _conforms(value, schema, _defs(schema), 0)


def _conforms(value: object, node: object, defs: Mapping[str, object], depth: int) -> bool:
    if depth > 64 or not isinstance(node, Mapping):
        return False
    ref = node.get("$ref")
    if isinstance(ref, str):
        return _conforms(value, defs.get(ref.rsplit("/", 1)[-1]), defs, depth + 1)
    if "const" in node:
        return bool(value == node["const"])
    if "enum" in node:
        return value in node["enum"]
    if "anyOf" in node or "oneOf" in node:
        return any(_conforms(value, b, defs, depth + 1) for b in node.get("anyOf") or node.get("oneOf") or ())
    if "allOf" in node:
        return all(_conforms(value, b, defs, depth + 1) for b in node["allOf"])
    kind = node.get("type")
    if isinstance(kind, list):
        return any(_conforms(value, {**node, "type": k}, defs, depth + 1) for k in kind)
    if kind == "null":
        return value is None
    if kind == "boolean":
        return isinstance(value, bool)
    if kind in ("integer", "number"):
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "string":
        return isinstance(value, str) and _string_conforms(value, node)
    if kind == "array":
        return isinstance(value, list) and all(_conforms(v, node.get("items"), defs, depth + 1) for v in value)
    if kind == "object":
        if not isinstance(value, dict):
            return False
        props = node.get("properties") or {}
        patterns = node.get("patternProperties") or {}
        for key, item in value.items():
            if key in props:
                if not _conforms(item, props[key], defs, depth + 1):
                    return False
                continue
            matched = [sub for p, sub in patterns.items() if isinstance(key, str) and re.search(p, key)]
            if not matched or not all(_conforms(item, sub, defs, depth + 1) for sub in matched):
                return False
        return True
    return False


def _string_conforms(value: str, node: Mapping[str, object]) -> bool:
    fmt = node.get("format")
    if isinstance(fmt, str) and fmt in SAFE_FORMATS:
        return SAFE_FORMATS[fmt].fullmatch(value) is not None
    pattern = node.get("pattern")
    return isinstance(pattern, str) and re.search(pattern, value) is not None and not any(ch.isspace() for ch in value)

"""What changed between two JSON Schemas of a worker's input or output, and whether it breaks a
caller: for an input, a field removed, now required or accepting fewer values; for an output, a
field removed, now optional or holding more values (F14: a new enum value in an input breaks no
caller).

Only the top-level fields are compared (a worker's arguments are an object's properties); a
change below them is reported as a changed type of that field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

Direction = Literal["input", "output"]
"""Whether callers send the values (a worker's or tool's input) or receive them (an output)."""


@dataclass(frozen=True)
class FieldChange:
    field: str
    what: str
    """`removed`, `added`, `now required`, `now optional`, `type changed`."""
    breaking: bool
    before: str | None = None
    after: str | None = None

    def text(self) -> str:
        detail = f" ({self.before} -> {self.after})" if self.what == "type changed" else ""
        return f"{self.field}: {self.what}{detail}"


def type_text(schema: dict[str, Any]) -> str:
    """A short form of a property's type: `string`, `integer | null`, `#/$defs/Item`, `array of string`."""
    if "$ref" in schema:
        return str(schema["$ref"]).rsplit("/", 1)[-1]
    if "anyOf" in schema:
        return " | ".join(type_text(s) for s in schema["anyOf"])
    kind = schema.get("type")
    if isinstance(kind, list):
        return " | ".join(str(k) for k in kind)
    if kind == "array" and isinstance(schema.get("items"), dict):
        return f"array of {type_text(schema['items'])}"
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"])
    return str(kind) if kind else "any"


def _shape(schema: dict[str, Any]) -> str:
    """The part of a property that decides what values it accepts (no titles or descriptions)."""
    ignored = {"title", "description", "examples", "default"}
    return json.dumps({k: v for k, v in schema.items() if k not in ignored}, sort_keys=True)


def field_changes(old: dict[str, Any], new: dict[str, Any], direction: Direction = "input") -> list[FieldChange]:
    """The top-level fields that changed. Breaking depends on who reads what: callers send an
    input, so it breaks them when it accepts less (a field removed or now required, a value no
    longer accepted); they receive an output, so it breaks them when it may hold more (a field
    now optional or removed, a new enum value)."""
    old_props: dict[str, Any] = old.get("properties") or {}
    new_props: dict[str, Any] = new.get("properties") or {}
    old_req, new_req = set(old.get("required") or ()), set(new.get("required") or ())
    into = direction == "input"
    out: list[FieldChange] = []
    for name in sorted(set(old_props) | set(new_props)):
        if name not in new_props:
            out.append(FieldChange(name, "removed", True))
        elif name not in old_props:
            required = name in new_req
            out.append(FieldChange(name, "added, required" if required else "added", into and required,
                                   after=type_text(new_props[name])))
        else:
            if _shape(old_props[name]) != _shape(new_props[name]) or _defs_differ(old, new, old_props[name]):
                wider = _widens(old_props[name], new_props[name])
                out.append(FieldChange(name, "type changed", wider is not into, type_text(old_props[name]),
                                       type_text(new_props[name])))
            if name in new_req and name not in old_req:
                out.append(FieldChange(name, "now required", into))
            elif name in old_req and name not in new_req:
                out.append(FieldChange(name, "now optional", not into))
    return out


def _widens(old: dict[str, Any], new: dict[str, Any]) -> bool | None:
    """True when `new` accepts every value `old` does and more, False when fewer, None when
    neither or unknown: enum values added or removed, `integer` to `number`, a branch of
    `anyOf` added (`null`)."""
    if "enum" in old and "enum" in new and _same_except(old, new, "enum"):
        a, b = [json.dumps(v, sort_keys=True) for v in old["enum"]], [json.dumps(v, sort_keys=True) for v in new["enum"]]
        return True if set(a) < set(b) else False if set(b) < set(a) else None
    if _same_except(old, new, "type") and {old.get("type"), new.get("type")} == {"integer", "number"}:
        return new.get("type") == "number"
    branches = [_shape(s) for s in new.get("anyOf") or ()]
    if _shape(old) in branches:
        return True
    if _shape(new) in [_shape(s) for s in old.get("anyOf") or ()]:
        return False
    return None


def _same_except(old: dict[str, Any], new: dict[str, Any], key: str) -> bool:
    return _shape({k: v for k, v in old.items() if k != key}) == _shape({k: v for k, v in new.items() if k != key})


def _defs_differ(old: dict[str, Any], new: dict[str, Any], prop: dict[str, Any]) -> bool:
    """A `$ref` to a definition whose own shape changed."""
    refs = [prop.get("$ref")] + [s.get("$ref") for s in prop.get("anyOf") or () if isinstance(s, dict)]
    refs += [prop.get("items", {}).get("$ref")] if isinstance(prop.get("items"), dict) else []
    for ref in filter(None, refs):
        key = str(ref).rsplit("/", 1)[-1]
        if (old.get("$defs") or {}).get(key) != (new.get("$defs") or {}).get(key):
            return True
    return False


def described(schema: dict[str, Any]) -> list[str]:
    """Every description a JSON Schema holds, one line each, `PATH: TEXT` (`path: Where to write`,
    `items[].name: ...`, `$defs.Item: ...`, `(schema): ...` for its own): what a model reads of a
    tool's parameters or a worker's input or output besides their shape (a docstring's `Args:`, a
    `Field(description=...)`), compared as instructions. Sorted by path."""
    out: dict[str, str] = {}

    def walk(node: Any, path: str) -> None:
        if isinstance(node, list):
            for item in node:
                walk(item, path)
            return
        if not isinstance(node, dict):
            return
        text = node.get("description")
        if isinstance(text, str) and text:
            out.setdefault(path or "(schema)", text)
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    walk(sub, f"{path}.{name}" if path else name)
            elif key == "$defs" and isinstance(value, dict):
                for name, sub in value.items():
                    walk(sub, f"$defs.{name}")
            elif key in ("items", "additionalProperties", "prefixItems"):
                walk(value, f"{path}[]")
            elif key in ("anyOf", "oneOf", "allOf"):
                walk(value, path)

    walk(schema, "")
    return [f"{path}: {' '.join(text.split())}" for path, text in sorted(out.items())]

"""What changed between two JSON Schemas of a worker's input or output, and whether it breaks a
caller: a removed field, a field that became required, a field whose type changed.

Only the top-level fields are compared (a worker's arguments are an object's properties); a
change below them is reported as a changed type of that field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any


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


def field_changes(old: dict[str, Any], new: dict[str, Any]) -> list[FieldChange]:
    old_props: dict[str, Any] = old.get("properties") or {}
    new_props: dict[str, Any] = new.get("properties") or {}
    old_req, new_req = set(old.get("required") or ()), set(new.get("required") or ())
    out: list[FieldChange] = []
    for name in sorted(set(old_props) | set(new_props)):
        if name not in new_props:
            out.append(FieldChange(name, "removed", True))
        elif name not in old_props:
            out.append(FieldChange(name, "added", name in new_req, after=type_text(new_props[name])))
            if name in new_req:
                out[-1] = FieldChange(name, "added, required", True, after=type_text(new_props[name]))
        else:
            if _shape(old_props[name]) != _shape(new_props[name]) or _defs_differ(old, new, old_props[name]):
                out.append(FieldChange(name, "type changed", True, type_text(old_props[name]), type_text(new_props[name])))
            if name in new_req and name not in old_req:
                out.append(FieldChange(name, "now required", True))
            elif name in old_req and name not in new_req:
                out.append(FieldChange(name, "now optional", False))
    return out


def _defs_differ(old: dict[str, Any], new: dict[str, Any], prop: dict[str, Any]) -> bool:
    """A `$ref` to a definition whose own shape changed."""
    refs = [prop.get("$ref")] + [s.get("$ref") for s in prop.get("anyOf") or () if isinstance(s, dict)]
    refs += [prop.get("items", {}).get("$ref")] if isinstance(prop.get("items"), dict) else []
    for ref in filter(None, refs):
        key = str(ref).rsplit("/", 1)[-1]
        if (old.get("$defs") or {}).get(key) != (new.get("$defs") or {}).get(key):
            return True
    return False

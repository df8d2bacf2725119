"""What a rule's condition may test: a tool's parameters (its JSON Schema) plus the fields its
toolset derives (shell's `argv`), and what JSON types and values each can have.

Pure functions over JSON Schema as pydantic writes it (`properties`, `$ref` into `$defs`,
`anyOf` for optional values, `items` / `prefixItems` for arrays, `enum` / `const`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from llm_do.bundle.approval import QUANTIFIERS

ANY_SCHEMA: dict[str, Any] = {}
"""A schema that says nothing: every type and value is possible."""


@dataclass(frozen=True, kw_only=True)
class ToolParams:
    """The parameters of one tool as rules see them."""

    schema: dict[str, Any]
    """The tool's parameter schema (an object schema)."""
    derived: dict[str, Any]
    """Derived fields by name → schema."""
    normalized: bool
    """Whether the toolset normalizes the arguments before rules see them (stdlib toolsets); a
    tool without a normalizer (Python) is judged on its raw arguments."""
    path_params: tuple[str, ...] = ()
    """Parameters (and derived fields: shell's `argv`) whose values rules see as paths relative
    to the toolset's root, normalized."""
    root: str = "."
    """That root below the project (or working directory), as a POSIX path (`docs`)."""

    def names(self) -> list[str]:
        return sorted({*_properties(self.schema, self.schema), *self.derived})

    def lookup(self, path: Sequence[str | int]) -> dict[str, Any] | None:
        """The schema of the value at `path`, or None when the tool has no such parameter."""
        head, *rest = path
        schema = self.derived.get(str(head)) if head in self.derived else _properties(self.schema, self.schema).get(str(head))
        if schema is None:
            return None
        for step in rest:
            schema = _step(schema, step, self.schema)
            if schema is None:
                return None
        return schema


def _resolve(schema: Any, root: dict[str, Any]) -> dict[str, Any]:
    """Follow a local `$ref` (`#/$defs/X`); anything unreadable says nothing."""
    seen = 0
    while isinstance(schema, dict) and "$ref" in schema and seen < 32:
        ref = schema["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#/"):
            return ANY_SCHEMA
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, dict) else None
        schema = target
        seen += 1
    return schema if isinstance(schema, dict) else ANY_SCHEMA


def _branches(schema: Any, root: dict[str, Any]) -> list[dict[str, Any]]:
    schema = _resolve(schema, root)
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return [b for s in schema[key] for b in _branches(s, root)]
    return [schema]


def _properties(schema: Any, root: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for branch in _branches(schema, root):
        props = branch.get("properties")
        if isinstance(props, dict):
            out.update(props)
    return out


def _step(schema: dict[str, Any], step: str | int, root: dict[str, Any]) -> dict[str, Any] | None:
    found: list[Any] = []
    for branch in _branches(schema, root):
        if not branch.get("type") and not branch.get("properties") and not branch.get("items"):
            return ANY_SCHEMA  # nothing known about it: any path may exist
        if step in QUANTIFIERS:  # any or every element: what any of its positions may hold
            if branch.get("type") not in (None, "array") or "properties" in branch:
                continue
            found += [s for s in branch.get("prefixItems") or [] if isinstance(s, dict)]
            if "items" in branch:
                found.append(branch["items"] if isinstance(branch["items"], dict) else ANY_SCHEMA)
        elif isinstance(step, int):
            prefix = branch.get("prefixItems") or []
            if step < len(prefix):
                found.append(prefix[step])
            elif "items" in branch:
                found.append(branch["items"] if isinstance(branch["items"], dict) else ANY_SCHEMA)
        else:
            props = branch.get("properties") or {}
            if step in props:
                found.append(props[step])
            elif isinstance(branch.get("additionalProperties"), dict):
                found.append(branch["additionalProperties"])
    if not found:
        return None
    return found[0] if len(found) == 1 else {"anyOf": found}


def types_of(schema: dict[str, Any], root: dict[str, Any]) -> frozenset[str] | None:
    """The JSON types a value of this schema may have; None when the schema does not say."""
    out: set[str] = set()
    for branch in _branches(schema, root):
        values = _listed(branch)
        if values is not None:
            out |= {json_type(v) for v in values}
            continue
        kind = branch.get("type")
        if isinstance(kind, str):
            out.add(kind)
        elif isinstance(kind, list) and kind:
            out |= {k for k in kind if isinstance(k, str)}
        else:
            return None
    if "integer" in out:
        out.add("number")
    return frozenset(out)


def values_of(schema: dict[str, Any], root: dict[str, Any]) -> list[Any] | None:
    """The only values this schema allows (`enum`, `const`), or None when it allows more."""
    out: list[Any] = []
    for branch in _branches(schema, root):
        values = _listed(branch)
        if values is None:
            return None
        out.extend(values)
    return out


def _listed(branch: dict[str, Any]) -> list[Any] | None:
    if "const" in branch:
        return [branch["const"]]
    if isinstance(branch.get("enum"), list):
        return list(branch["enum"])
    return None


def json_type(value: Any) -> str:
    """The JSON type of a rule's literal (`integer` for whole numbers)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    return "object"


def fits(value: Any, types: frozenset[str] | None) -> bool:
    """Whether a literal can equal a value of these types (an integer literal fits `number`)."""
    if types is None:
        return True
    kind = json_type(value)
    return kind in types or (kind == "integer" and "number" in types)

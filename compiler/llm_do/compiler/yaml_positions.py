"""YAML with positions: the C loader's node tree gives every key and value its line and column."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from .positions import Path, Pos, PositionTable

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class YamlProblem:
    message: str
    pos: Pos


@dataclass
class YamlDocument:
    data: Any
    positions: PositionTable
    duplicate_keys: list[tuple[Path, Pos]] = field(default_factory=list)


def load_yaml(text: str, line_offset: int = 0) -> YamlDocument | YamlProblem:
    """Parse one YAML document; positions are 1-based and shifted down by `line_offset` lines."""
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        doc = YamlDocument(None, PositionTable())
        if node is not None:
            doc.data = _build(loader, node, (), doc, line_offset)
        else:
            doc.positions.values[()] = Pos(1 + line_offset, 1)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        message = " ".join(str(p) for p in (exc.context, exc.problem) if p) or "invalid YAML"
        return YamlProblem(f"invalid YAML: {message}", Pos(line + line_offset, column))
    except yaml.YAMLError as exc:
        return YamlProblem(f"invalid YAML: {exc}", Pos(1 + line_offset, 1))
    finally:
        loader.dispose()
    return doc


def _pos(node: yaml.Node, line_offset: int) -> Pos:
    return Pos(node.start_mark.line + 1 + line_offset, node.start_mark.column + 1)


_JSON_SCALAR_TAGS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("int", "float", "bool", "null"))
"""Scalars PyYAML builds into JSON values. Everything else (strings, and dates or binary, which
JSON has no type for and the bundle could not hold) stays the text as written."""


def _build(loader: Any, node: yaml.Node, path: Path, doc: YamlDocument, line_offset: int) -> Any:
    """The value of `node`, recording positions on the way: one pass over the node tree.

    Mappings, sequences and strings are built here; numbers, booleans and null by PyYAML's own
    constructors, as `yaml.safe_load` would. A date stays its text (`2024-01-01`): front matter
    ends up in JSON. A repeated key keeps its first value and is reported."""
    doc.positions.values[path] = _pos(node, line_offset)
    if isinstance(node, yaml.MappingNode):
        loader.flatten_mapping(node)  # merge keys (`<<: *defaults`)
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise yaml.MarkedYAMLError(problem="a key must be a plain name, not a list or mapping",
                                           problem_mark=key_node.start_mark)
            key = loader.construct_object(key_node) if key_node.tag in _JSON_SCALAR_TAGS else key_node.value
            child = path + (key,)
            if key in out:
                doc.duplicate_keys.append((child, _pos(key_node, line_offset)))
                continue
            doc.positions.keys[child] = _pos(key_node, line_offset)
            out[key] = _build(loader, value_node, child, doc, line_offset)
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_build(loader, item, path + (i,), doc, line_offset) for i, item in enumerate(node.value)]
    if node.tag in _JSON_SCALAR_TAGS:
        return loader.construct_object(node)
    return node.value

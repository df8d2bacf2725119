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
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        message = " ".join(str(p) for p in (exc.context, exc.problem) if p) or "invalid YAML"
        return YamlProblem(f"invalid YAML: {message}", Pos(line + line_offset, column))
    except yaml.YAMLError as exc:
        return YamlProblem(f"invalid YAML: {exc}", Pos(1 + line_offset, 1))
    finally:
        loader.dispose()
    doc = YamlDocument(data, PositionTable())
    if node is not None:
        _walk(node, (), doc, line_offset)
    else:
        doc.positions.values[()] = Pos(1 + line_offset, 1)
    return doc


def _pos(node: yaml.Node, line_offset: int) -> Pos:
    return Pos(node.start_mark.line + 1 + line_offset, node.start_mark.column + 1)


def _walk(node: yaml.Node, path: Path, doc: YamlDocument, line_offset: int) -> None:
    doc.positions.values[path] = _pos(node, line_offset)
    if isinstance(node, yaml.MappingNode):
        seen: set[Any] = set()
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue
            key = key_node.value
            child = path + (key,)
            if key in seen:
                doc.duplicate_keys.append((child, _pos(key_node, line_offset)))
                continue
            seen.add(key)
            doc.positions.keys[child] = _pos(key_node, line_offset)
            _walk(value_node, child, doc, line_offset)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _walk(item, path + (i,), doc, line_offset)

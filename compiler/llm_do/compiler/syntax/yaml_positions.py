"""YAML with positions: the C loader's node tree gives every key and value its line and column.

Positions count LF lines, as everything else in llm-do does; YAML also breaks lines at U+0085,
U+2028 and U+2029, so where those occur the parser's marks are translated through their
character offset. Limits (limits.py) are checked before the code that would recurse: the nesting
depth on the parser's event stream (the C composer recurses without a guard and can crash the
process), the number of values aliases expand to, and aliases that contain themselves.
"""

from __future__ import annotations

import bisect
import re
from typing import Any

import yaml

from .. import codes
from .limits import MAX_NESTING, MAX_YAML_VALUES
from .positions import Path, Pos, PositionTable
from .yaml_document import YamlDocument, YamlProblem
from .yaml_errors import Mark, explain

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_YAML_ONLY_BREAKS = re.compile("[\x85\u2028\u2029]")


class _Marks:
    """Parser marks (0-based, YAML's line breaks) to positions (1-based, LF lines, shifted)."""

    def __init__(self, text: str, line_offset: int) -> None:
        self.offset = line_offset
        self.text_length = len(text)
        self.line_starts: list[int] | None = None
        if _YAML_ONLY_BREAKS.search(text):
            self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def pos(self, mark: Any) -> Pos:
        if self.line_starts is None:
            return Pos(mark.line + 1 + self.offset, mark.column + 1)
        index = min(max(mark.index, 0), self.text_length)
        line = bisect.bisect_right(self.line_starts, index)
        return Pos(line + self.offset, index - self.line_starts[line - 1] + 1)


class _Limit(Exception):
    def __init__(self, message: str, mark: Any) -> None:
        self.message = message
        self.mark = mark


def load_yaml(text: str, line_offset: int = 0) -> YamlDocument | YamlProblem:
    """Parse one YAML document; positions are 1-based and shifted down by `line_offset` lines."""
    marks = _Marks(text, line_offset)
    too_deep = _nesting_overflow(text)
    if too_deep is not None:
        return YamlProblem(f"lists and mappings nested more than {MAX_NESTING} deep", marks.pos(too_deep), codes.LIMIT_EXCEEDED)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        doc = YamlDocument(None, PositionTable())
        if node is not None:
            doc.data = _Builder(loader, doc, marks).build(node)
        else:
            doc.positions.values[()] = Pos(1 + line_offset, 1)
    except _Limit as exc:
        return YamlProblem(exc.message, marks.pos(exc.mark), codes.LIMIT_EXCEEDED)
    except yaml.MarkedYAMLError as exc:
        error = explain(text, exc.context, _mark(exc.context_mark), exc.problem, _mark(exc.problem_mark), line_offset)
        return YamlProblem(f"invalid YAML: {error.message}", marks.pos(error.mark) if error.mark else Pos(1 + line_offset, 1),
                           codes.YAML_SYNTAX, error.hint)
    except yaml.YAMLError as exc:
        return YamlProblem(f"invalid YAML: {exc}", Pos(1 + line_offset, 1), codes.YAML_SYNTAX)
    finally:
        loader.dispose()
    return doc


def _mark(mark: Any) -> Mark | None:
    return Mark(mark.line, mark.column, mark.index) if mark is not None else None


def _nesting_overflow(text: str) -> Any:
    """The mark of the first collection nested deeper than the limit, from the event stream.

    Every level of nesting costs a line break, a `-`, `?`, `[` or `{`, so most texts are
    cleared by counting those; the others are parsed into events (no recursion there)."""
    bound = sum(text.count(c) for c in "\n-?[{") + 1
    if bound <= MAX_NESTING:
        return None
    try:
        return _first_too_deep(_Loader, text)
    except yaml.YAMLError:
        if _Loader is yaml.SafeLoader:
            return None  # the composer meets the same error, no deeper than this
    # The libyaml in PyYAML 6.0.4's wheels refuses flow collections nested 1,000 deep while it
    # scans ahead, before it hands out the events that would show ours: the pure-Python
    # scanner has no such limit, and stops at ours (or at the same syntax error) just as soon.
    try:
        return _first_too_deep(yaml.SafeLoader, text)
    except yaml.YAMLError:
        return None


def _first_too_deep(loader_class: Any, text: str) -> Any:
    loader = loader_class(text)
    depth = 0
    try:
        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_NESTING:
                    return event.start_mark
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    finally:
        loader.dispose()
    return None


_JSON_SCALAR_TAGS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("int", "float", "bool", "null"))
"""Scalars PyYAML builds into JSON values. Everything else (strings, and dates or binary, which
JSON has no type for and the bundle could not hold) stays the text as written."""


class _Builder:
    """The value of a node tree, recording positions on the way: one pass over the nodes.

    Mappings, sequences and strings are built here; numbers, booleans and null by PyYAML's own
    constructors, as `yaml.safe_load` would. A date stays its text (`2024-01-01`): front matter
    ends up in JSON. A repeated key keeps its first value and is reported. An alias is built
    again where it is used (each use has its own path), within the limits."""

    def __init__(self, loader: Any, doc: YamlDocument, marks: _Marks) -> None:
        self.loader = loader
        self.doc = doc
        self.marks = marks
        self.values = 0
        self.open: set[int] = set()
        """The collections being built: an alias to one of them would expand without end."""

    def build(self, node: yaml.Node, path: Path = ()) -> Any:
        self.values += 1
        if self.values > MAX_YAML_VALUES:
            raise _Limit(f"aliases expand to more than {MAX_YAML_VALUES} values", node.start_mark)
        if len(path) > MAX_NESTING:
            raise _Limit(f"lists and mappings nested more than {MAX_NESTING} deep (through aliases)", node.start_mark)
        self.doc.positions.values[path] = self.marks.pos(node.start_mark)
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node)
        if id(node) in self.open:
            raise yaml.MarkedYAMLError(problem="an alias refers to a list or mapping that contains it",
                                       problem_mark=node.start_mark)
        self.open.add(id(node))
        try:
            if isinstance(node, yaml.MappingNode):
                return self._mapping(node, path)
            return [self.build(item, path + (i,)) for i, item in enumerate(node.value)]
        finally:
            self.open.discard(id(node))

    def _mapping(self, node: yaml.MappingNode, path: Path) -> dict[Any, Any]:
        self.loader.flatten_mapping(node)  # merge keys (`<<: *defaults`)
        out: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                raise yaml.MarkedYAMLError(problem="a key must be a plain name, not a list or mapping",
                                           problem_mark=key_node.start_mark)
            key = self._scalar(key_node)
            child = path + (key,)
            if key in out:
                self.doc.duplicate_keys.append((child, self.marks.pos(key_node.start_mark)))
                continue
            self.doc.positions.keys[child] = self.marks.pos(key_node.start_mark)
            out[key] = self.build(value_node, child)
        return out

    def _scalar(self, node: yaml.ScalarNode) -> Any:
        if node.tag not in _JSON_SCALAR_TAGS:
            return node.value
        try:
            return self.loader.construct_object(node)
        except ValueError:  # an integer of more digits than Python converts
            raise _Limit(f"a number of {len(node.value)} characters, more than a number may have", node.start_mark) from None

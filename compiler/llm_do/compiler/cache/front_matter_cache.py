"""The YAML of each worker's front matter as the last build of the project read it, by the hash of
its text, so a build parses again only the front matter that changed.

What is kept is `load_yaml`'s answer (the data and every position), a function of the text alone:
a worker's parse then goes on as for a clean build (upgrade, validation, diagnostics), so its
result is the same. Answers are kept only when JSON holds them exactly (string keys, JSON values,
paths of strings and indices); others (a YAML problem, a number as a key) are parsed every time.
One pack per project root (`packs`), holding the answers the last build used.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

from llm_do.provenance.build_record import path_stamp

from ..syntax.positions import Pos, PositionTable
from ..syntax.yaml_document import YamlDocument, YamlProblem
from .packs import SignedPacks, code_material

FORMAT = 1


class FrontMatterCache:
    """`load` in place of `load_yaml` for one build; `save` keeps what it used for the next."""

    def __init__(self, packs: SignedPacks, root: Path) -> None:
        self.packs = packs
        # PyYAML's version and loader are in the installed distributions (`path_stamp`): an answer
        # taken from the pack then loads no parser.
        self.material = {"front_matter": FORMAT, **code_material(), "distributions": path_stamp(), "root": str(root)}
        kept = packs.read(self.material)
        self.data, self.index = kept if kept is not None else (b"", {})
        self.used: dict[str, bytes] = {}
        """The JSON text of each answer used, by key: taken before the parse goes on with the answer."""
        self.reused = 0

    def load(self, text: str, line_offset: int = 0) -> YamlDocument | YamlProblem:
        key = hashlib.sha256(f"{line_offset}\n{text}".encode()).hexdigest()
        raw = self._kept(key)
        doc = _decoded(raw) if raw is not None else None
        if raw is not None and doc is not None:
            self.used[key] = raw
            self.reused += 1
            return doc
        from ..syntax.yaml_positions import load_yaml  # PyYAML: only for front matter not kept

        answer = load_yaml(text, line_offset)
        if isinstance(answer, YamlDocument):
            encoded = _encoded(answer)
            if encoded is not None:
                self.used[key] = json.dumps(encoded, separators=(",", ":"), ensure_ascii=False).encode()
        return answer

    def save(self) -> None:
        """Keep the answers this build used, when they are not what was kept already."""
        if self.used.keys() == self.index.keys():
            return
        index: dict[str, list[int]] = {}
        at = 0
        for key, raw in self.used.items():
            index[key] = [at, at + len(raw)]
            at += len(raw)
        self.packs.write(self.material, b"".join(self.used.values()), index)

    def _kept(self, key: str) -> bytes | None:
        span = self.index.get(key)
        if not isinstance(span, list) or len(span) != 2 or not all(type(i) is int for i in span):
            return None
        start, end = span
        return self.data[start:end] if 0 <= start <= end <= len(self.data) else None


def _encoded(doc: YamlDocument) -> list[Any] | None:
    """`[data, values, keys, duplicates]`, each table a list of `[path, line, column]`; None when
    JSON would not give back the same values."""
    rows = (doc.positions.values.items(), doc.positions.keys.items(), doc.duplicate_keys)
    tables: list[list[list[Any]]] = [[[list(path), pos.line, pos.column] for path, pos in table] for table in rows]
    if not json_exact(doc.data) or not all(_exact_path(row[0]) for table in tables for row in table):
        return None
    return [doc.data, *tables]


def _decoded(raw: bytes) -> YamlDocument | None:
    """A fresh answer from its JSON text (each worker's parse gets its own objects); None when it does not decode."""
    try:
        data, values, keys, duplicates = json.loads(raw)
        table = PositionTable(values={tuple(p): Pos(line, column) for p, line, column in values},
                              keys={tuple(p): Pos(line, column) for p, line, column in keys})
        dupes = [(tuple(p), Pos(line, column)) for p, line, column in duplicates]
    except (TypeError, ValueError, UnicodeDecodeError):
        return None
    return YamlDocument(data, table, dupes)


def json_exact(value: Any) -> bool:
    """Whether JSON gives `value` back with the same types: strings as keys, finite numbers."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return True
    if kind is float:
        return math.isfinite(value)
    if kind is list:
        return all(map(json_exact, value))
    if kind is dict:
        return all(type(k) is str and json_exact(v) for k, v in value.items())
    return False


def _exact_path(path: list[Any]) -> bool:
    return all(type(p) is str or type(p) is int for p in path)

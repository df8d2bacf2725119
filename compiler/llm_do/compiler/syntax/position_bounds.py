"""The last step before diagnostics leave the compiler: positions inside their files, printable text.

Positions come from many places (YAML and JSON parsers, Jinja, Python's SyntaxError, searches in
a line) and a few can land past the end of a line or of the file (a parser's end-of-stream mark,
an offset of 0). Rather than trusting each, every position is clamped here against the text the
compiler read: line 1 to the number of LF lines, column 1 to one past the line's end. Strings
that a UTF-8 terminal cannot print (a lone surrogate in a file name) are escaped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic, Related
from .sources import SourceFile, decode_lines, lexically_confined, read_regular_file

_SURROGATE = re.compile("[\ud800-\udfff]")


def within_files(diagnostics: list[Diagnostic], files: Mapping[str, SourceFile], root: Path) -> list[Diagnostic]:
    """`files`: the source map; a file outside it (a helper module a Python file imported) is
    read from `root` if a diagnostic points into it."""
    lines: dict[str, list[str] | None] = {}

    def bounded(file: str, line: int | None, column: int | None) -> tuple[int | None, int | None]:
        if file not in lines:
            lines[file] = _lines(files, root, file)
        text_lines = lines[file]
        if text_lines is None:
            return (None if line is None else max(line, 1)), (None if column is None else max(column, 1))
        if line is None:
            return None, None
        line = min(max(line, 1), len(text_lines))
        if column is not None:
            column = min(max(column, 1), len(text_lines[line - 1]) + 1)
        return line, column

    out = []
    for d in diagnostics:
        line, column = bounded(d.file, d.line, d.column)
        related = tuple(_related(r, *bounded(r.file, r.line, r.column)) for r in d.related)
        update: dict[str, Any] = {}
        if (line, column) != (d.line, d.column):
            update.update(line=line, column=column)
        if related != d.related:
            update["related"] = related
        for key in ("message", "hint", "file"):
            value = getattr(d, key)
            if value is not None and _SURROGATE.search(value):
                update[key] = printable(value)
        out.append(replace(d, **update) if update else d)
    return out


def _lines(files: Mapping[str, SourceFile], root: Path, file: str) -> list[str] | None:
    source = files.get(file)
    if source is not None:
        return source.text.split("\n")
    try:
        lexically_confined(file)
        return decode_lines(read_regular_file(str(root / file)))
    except (OSError, ValueError):
        return None


def _related(r: Related, line: int | None, column: int | None) -> Related:
    update: dict[str, Any] = {}
    if (line, column) != (r.line, r.column):
        update.update(line=line, column=column)
    for key in ("message", "file"):
        value = getattr(r, key)
        if _SURROGATE.search(value):
            update[key] = printable(value)
    return replace(r, **update) if update else r


def printable(text: str) -> str:
    """`text` with each lone surrogate written as its escape (`\\udc80`)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")

"""Lint a project as JSON and find one diagnostic in it, checked in full.

Expected positions are computed from the project's own text, so a test says "at `helpr` in
main.worker" rather than repeating numbers the compiler printed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from llm_do.compiler.codes import RULES
from tests.support.cli import run_cli

WARNING_CODES = frozenset(code for code, rule in RULES.items() if rule.severity == "warning")
"""The codes the registry describes as warnings; every other one here is an error."""

ANY = object()
"""`column=ANY`: do not check the column."""


def position(text: str, needle: str, nth: int = 1) -> tuple[int, int]:
    """1-based (line, column) in code points of the `nth` occurrence of `needle` in `text`."""
    start = -1
    for _ in range(nth):
        start = text.find(needle, start + 1)
        assert start >= 0, f"{needle!r} (occurrence {nth}) is not in the text"
    line = text.count("\n", 0, start) + 1
    column = start - (text.rfind("\n", 0, start) + 1) + 1
    return line, column


def _show(diagnostics: list[dict[str, Any]]) -> str:
    return "\n".join(
        f"  {d['code']} {d['severity']} {d['file']}:{d['line']}:{d['column']} {d['message']} (hint: {d['hint']})"
        for d in diagnostics
    ) or "  (none)"


@dataclass
class Lint:
    root: Path
    exit_code: int
    diagnostics: list[dict[str, Any]]

    def text(self, file: str) -> str:
        return (self.root / file).read_bytes().decode("utf-8-sig").replace("\r\n", "\n")

    def at(self, file: str, needle: str, nth: int = 1) -> tuple[int, int]:
        return position(self.text(file), needle, nth)

    def codes(self) -> list[str]:
        return [d["code"] for d in self.diagnostics]

    def of(self, code: str, file: str | None = None) -> list[dict[str, Any]]:
        return [d for d in self.diagnostics if d["code"] == code and (file is None or d["file"] == file)]

    def summary(self) -> set[tuple[str, str, int | None]]:
        """{(code, file, line)}: for tests that pin everything a project reports."""
        return {(d["code"], d["file"], d["line"]) for d in self.diagnostics}

    def expect(
        self,
        code: str,
        file: str,
        needle: str | None = None,
        *,
        nth: int = 1,
        line: int | None = None,
        column: Any = None,
        suggests: str | None = None,
        mentions: tuple[str, ...] = (),
        related: tuple[str, int, int | None] | None = None,
    ) -> dict[str, Any]:
        """The one diagnostic `code` at `needle` in `file` (or at line/column), checked in full:
        severity, a message without traceback, and what is asked below.

        `column=ANY` skips the column. `suggests`: the hint must be a did-you-mean naming that word.
        `mentions`: words the message must contain (they also pick one of several diagnostics at one
        place). `related`: (file, line, column) of a related location it must carry.
        """
        if needle is not None:
            want_line, want_column = self.at(file, needle, nth)
        else:
            want_line, want_column = line, ANY
        if line is not None:
            want_line = line
        if column is not None:
            want_column = column
        found = [
            d for d in self.diagnostics
            if d["code"] == code and d["file"] == file and d["line"] == want_line
            and (want_column is ANY or d["column"] == want_column)
            and all(word in d["message"] for word in mentions)
        ]
        where = f"{file}:{want_line}:{'*' if want_column is ANY else want_column}"
        assert len(found) == 1, f"expected one {code} at {where}, got:\n{_show(self.diagnostics)}"
        d = found[0]
        assert d["severity"] == ("warning" if code in WARNING_CODES else "error"), d
        assert d["message"] and "Traceback" not in d["message"], d
        if suggests is not None:
            assert d["hint"] is not None and "did you mean" in d["hint"] and f"'{suggests}'" in d["hint"], d
        if related is not None:
            places = [(r["file"], r["line"], r["column"]) for r in d.get("related", [])]
            assert related in places, d
        return d

    def absent(self, code: str, file: str | None = None) -> None:
        assert not self.of(code, file), f"unexpected {code}:\n{_show(self.of(code, file))}"


def lint(root: Path, *args: str) -> Lint:
    """`llm-do lint ROOT --format json ARGS`: a JSON document, exit 0 or 1, never a traceback."""
    result = run_cli("lint", root, "--format", "json", *args)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.exit_code in (0, 1), (result.exit_code, result.stderr)
    doc = json.loads(result.stdout)
    return Lint(root, result.exit_code, doc["diagnostics"])


def assert_exit_matches(result: Lint) -> None:
    """lint exits 1 exactly when there is an error."""
    errors = [d for d in result.diagnostics if d["severity"] == "error"]
    assert result.exit_code == (1 if errors else 0), _show(result.diagnostics)

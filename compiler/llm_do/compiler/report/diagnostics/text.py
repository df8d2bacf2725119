"""`--format text`: ruff-like lines with the source line and a caret, colored on a terminal.

For a person reading top-down: errors before warnings, and among them root causes first (by
code group: syntax, files, Python imports, then references and the rest; see codes.CAUSE_ORDER).
A long source line is shown as a window around the column, and after `MAX_PER_CODE` diagnostics
of one code the rest are counted, not printed, so a file with thousands of errors prints a page,
not hundreds of megabytes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from ...codes import RULES, cause_rank
from ...diagnostics import Diagnostic
from ...syntax.sources import decode_lines, read_regular_file
from . import ProjectDiagnostics, counted, counts

if TYPE_CHECKING:
    from rich.console import Console

Line = list[tuple[str, str | None]]
"""One printed line: its pieces, each with a rich style (or None)."""

_STYLE = {"error": "bold red", "warning": "bold yellow", "info": "bold cyan"}
_SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}
MAX_PER_CODE = 20
"""Diagnostics of one code printed per project; the rest are counted."""
WINDOW = 120
"""Characters of a long source line shown around the column."""
LONG_LINE = 160
"""A source line longer than this is shown as a window."""


def reading_order(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Errors, then warnings, then infos; within each, root causes first, then by place."""
    return sorted(diagnostics, key=lambda d: (_SEVERITY_RANK[d.severity.value], cause_rank(d.code), d.sort_key()))


def _source_line(root: Path, file: str, line: int | None, cache: dict[str, list[str] | None]) -> str | None:
    if not line:
        return None
    if file not in cache:
        try:  # as the compiler read it: a regular file, lines split at LF only (spec/language.md#positions)
            cache[file] = decode_lines(read_regular_file(str(root / file)))
        except (OSError, ValueError):
            cache[file] = None
    lines = cache[file]
    if lines is None or line > len(lines):
        return None
    return lines[line - 1]


def window(source: str, column: int | None, width: int = WINDOW) -> tuple[str, int | None]:
    """The part of `source` to show, at most about `width` characters around `column`, with `...`
    where it is cut; and the column within it (1-based)."""
    if len(source) <= max(width, LONG_LINE):
        return source, column
    at = (column or 1) - 1
    start = max(0, min(at - width // 2, len(source) - width))
    end = start + width
    shown = ("..." if start else "") + source[start:end] + ("..." if end < len(source) else "")
    return shown, (at - start + 1 + (3 if start else 0)) if column else None


def render_text(results: list[ProjectDiagnostics], *, color: bool | None = None) -> str:
    """What `print_text` prints, as text: with ANSI styles when `color`, or, when None, as it would
    print on stderr (styled on a terminal, plain otherwise: what `lint` shows)."""
    if not (styled(sys.stderr) if color is None else color):
        return "\n".join(plain(line) for line in text_lines(results))
    import io

    from rich.console import Console

    # NO_COLOR is heeded on the terminal (color None), not when styles are asked for
    console = Console(file=io.StringIO(), force_terminal=True, no_color=False if color else None, highlight=False)
    with console.capture() as captured:
        _print_rich(text_lines(results), console)
    return captured.get().removesuffix("\n")


def print_text(results: list[ProjectDiagnostics], stream: TextIO | None = None, *, show_summary: bool = True) -> None:
    """The diagnostics on `stream` (stderr by default); rich is imported only to style a terminal."""
    stream = stream or sys.stderr
    lines = text_lines(results, show_summary=show_summary)
    if styled(stream):
        from rich.console import Console

        _print_rich(lines, Console(file=stream, highlight=False))
    else:
        stream.write("".join(plain(line) + "\n" for line in lines))
        stream.flush()


def styled(stream: TextIO) -> bool:
    """Whether rich would style output to `stream` (`rich.console.Console.is_terminal`): TTY_COMPATIBLE
    and FORCE_COLOR first, then whether it is a terminal."""
    compatible = os.environ.get("TTY_COMPATIBLE", "")
    if compatible in ("0", "1"):
        return compatible == "1"
    force = os.environ.get("FORCE_COLOR")
    if force is not None:
        return force != ""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


_STRIPPED = dict.fromkeys((7, 8, 11, 12, 13))
"""The control characters rich drops from text it prints (`rich.control.STRIP_CONTROL_CODES`)."""


def plain(line: Line) -> str:
    """A line as rich prints it without styles: control characters dropped, tabs expanded to 8 cells."""
    text = "".join(piece for piece, _ in line).translate(_STRIPPED)
    if "\t" not in text:
        return text
    if text.isascii() and text.replace("\t", " ").isprintable():  # one cell per character
        return text.expandtabs(8)
    from rich.text import Text  # wide or zero-width characters: rich counts cells, not characters

    rendered = Text(text)
    rendered.expand_tabs(8)
    return rendered.plain


def _print_rich(lines: Iterator[Line], console: Console) -> None:
    from rich.text import Text

    for line in lines:
        console.print(Text.assemble(*((piece, style or "") for piece, style in line)), highlight=False, soft_wrap=True)


def text_lines(results: list[ProjectDiagnostics], *, show_summary: bool = True) -> Iterator[Line]:
    """Every line of the report, in order."""
    cache: dict[str, list[str] | None] = {}
    for result in sorted(results, key=lambda r: r.project):
        cache.clear()
        shown: dict[str, int] = {}
        for d in reading_order(result.diagnostics):
            shown[d.code] = shown.get(d.code, 0) + 1
            if shown[d.code] <= MAX_PER_CODE:
                yield from _lines_of(result, d, cache)
        for code, n in shown.items():
            if n > MAX_PER_CODE:
                kind = RULES[code].severity
                yield [(f"... and {n - MAX_PER_CODE} more {code} {kind}s (`--format json` lists every one)", "bold")]
    if show_summary:
        if line := counted(counts(results)):
            yield [(line, "bold")]


def _lines_of(result: ProjectDiagnostics, d: Diagnostic, cache: dict[str, list[str] | None]) -> Iterator[Line]:
    root = result.root
    where = result.shown(d.file)
    if d.line:
        where += f":{d.line}" + (f":{d.column}" if d.column else "")
    sev = d.severity.value
    style = _STYLE[sev]
    yield [(where, "bold"), (": ", None), (d.code, style), (" ", None), (sev, style), (f": {d.message}", None)]
    source = _source_line(root, d.file, d.line, cache)
    if source is not None:
        source, column = window(source, d.column)
        gutter = f"{d.line} | "
        yield [("  ", None), (gutter, "dim"), (source.expandtabs(4), None)]
        if column:
            prefix = source[: column - 1].expandtabs(4)
            yield [(f"  {' ' * len(gutter)}{' ' * len(prefix)}", None), ("^", style)]
    if d.hint:
        yield [("  ", None), ("hint", "cyan"), (f": {d.hint}", None)]
    for r in d.related:
        rel = result.shown(r.file) + (f":{r.line}" if r.line else "") + (f":{r.column}" if r.column else "")
        yield [("  ", None), ("note", "dim"), (f": {rel}: {r.message}", None)]

"""`--format text`: ruff-like lines with the source line and a caret, colored on a terminal.

For a person reading top-down: errors before warnings, and among them root causes first (by
code group: syntax, files, Python imports, then references and the rest; see codes.CAUSE_ORDER).
A long source line is shown as a window around the column, and after `MAX_PER_CODE` diagnostics
of one code the rest are counted, not printed, so a file with thousands of errors prints a page,
not hundreds of megabytes.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape

from ...codes import RULES, cause_rank
from ...diagnostics import Diagnostic
from ...syntax.sources import decode_lines, read_regular_file
from . import ProjectDiagnostics, counts

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
    """What `print_text` prints, as text: with ANSI styles when `color`, or, when None, as rich would
    print it on stderr (styled on a terminal, plain otherwise: what `lint` shows)."""
    import io

    if color is None:
        console = Console(stderr=True, highlight=False)
    else:
        console = Console(file=io.StringIO(), force_terminal=color, no_color=not color, highlight=False)
    with console.capture() as captured:
        print_text(results, console)
    return captured.get().removesuffix("\n")


def print_text(results: list[ProjectDiagnostics], console: Console, *, show_summary: bool = True) -> None:
    cache: dict[str, list[str] | None] = {}
    for result in sorted(results, key=lambda r: r.project):
        cache.clear()
        shown: dict[str, int] = {}
        for d in reading_order(result.diagnostics):
            shown[d.code] = shown.get(d.code, 0) + 1
            if shown[d.code] <= MAX_PER_CODE:
                _print_one(console, result, d, cache)
        for code, n in shown.items():
            if n > MAX_PER_CODE:
                kind = RULES[code].severity
                console.print(f"... and {n - MAX_PER_CODE} more {code} {kind}s (`--format json` lists every one)",
                              style="bold", highlight=False, soft_wrap=True)
    if show_summary:
        c = counts(results)
        parts = [f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in c.items() if n]
        if parts:
            console.print(", ".join(parts), style="bold", highlight=False, soft_wrap=True)


def _print_one(console: Console, result: ProjectDiagnostics, d: Diagnostic, cache: dict[str, list[str] | None]) -> None:
    root = result.root
    where = result.shown(d.file)
    if d.line:
        where += f":{d.line}" + (f":{d.column}" if d.column else "")
    sev = d.severity.value
    console.print(
        f"[bold]{escape(where)}[/bold]: [{_STYLE[sev]}]{d.code}[/] [{_STYLE[sev]}]{sev}[/]: {escape(d.message)}",
        highlight=False,
        soft_wrap=True,
    )
    source = _source_line(root, d.file, d.line, cache)
    if source is not None:
        source, column = window(source, d.column)
        gutter = f"{d.line} | "
        console.print(f"  [dim]{gutter}[/dim]{escape(source.expandtabs(4))}", highlight=False, soft_wrap=True)
        if column:
            prefix = source[: column - 1].expandtabs(4)
            console.print(f"  {' ' * len(gutter)}{' ' * len(prefix)}[{_STYLE[sev]}]^[/]", highlight=False, soft_wrap=True)
    if d.hint:
        console.print(f"  [cyan]hint[/cyan]: {escape(d.hint)}", highlight=False, soft_wrap=True)
    for r in d.related:
        rel = result.shown(r.file) + (f":{r.line}" if r.line else "") + (f":{r.column}" if r.column else "")
        console.print(f"  [dim]note[/dim]: {escape(rel)}: {escape(r.message)}", highlight=False, soft_wrap=True)

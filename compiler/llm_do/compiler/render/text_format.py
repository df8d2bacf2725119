"""`--format text`: ruff-like lines with the source line and a caret, colored on a terminal."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.markup import escape

from ..diagnostics import Diagnostic
from ..sources import decode_lines, read_regular_file
from . import ProjectDiagnostics, counts, cwd_relative

_STYLE = {"error": "bold red", "warning": "bold yellow", "info": "bold cyan"}


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


def print_text(results: list[ProjectDiagnostics], console: Console, *, show_summary: bool = True) -> None:
    cache: dict[str, list[str] | None] = {}
    for result in sorted(results, key=lambda r: r.project):
        cache.clear()
        for d in result.diagnostics:
            _print_one(console, result.root, d, cache)
    if show_summary:
        c = counts(results)
        parts = [f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in c.items() if n]
        if parts:
            console.print(", ".join(parts), style="bold", highlight=False, soft_wrap=True)


def _print_one(console: Console, root: Path, d: Diagnostic, cache: dict[str, list[str] | None]) -> None:
    where = cwd_relative(root, d.file)
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
        gutter = f"{d.line} | "
        console.print(f"  [dim]{gutter}[/dim]{escape(source.expandtabs(4))}", highlight=False, soft_wrap=True)
        if d.column:
            prefix = source[: d.column - 1].expandtabs(4)
            console.print(f"  {' ' * len(gutter)}{' ' * len(prefix)}[{_STYLE[sev]}]^[/]", highlight=False, soft_wrap=True)
    if d.hint:
        console.print(f"  [cyan]hint[/cyan]: {escape(d.hint)}", highlight=False, soft_wrap=True)
    for r in d.related:
        rel = cwd_relative(root, r.file) + (f":{r.line}" if r.line else "") + (f":{r.column}" if r.column else "")
        console.print(f"  [dim]note[/dim]: {escape(rel)}: {escape(r.message)}", highlight=False, soft_wrap=True)

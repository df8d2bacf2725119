"""`--format text` without a terminal is written without rich: the same bytes rich writes (control
characters dropped, tabs expanded to 8 cells, brackets and backslashes as they are), and rich is
imported only to style a terminal."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from rich.text import Text

from llm_do.compiler.diagnostics import Diagnostic, Related, Severity
from llm_do.compiler.report.diagnostics import ProjectDiagnostics
from llm_do.compiler.report.diagnostics.text import Line, plain, print_text, render_text, styled, text_lines

PIECES = ["plain", "[bold]", "[/]", "a\tb", "日本\tx", "\x1b[1m", "\r\x0b\x0c\x08\x07", "[red]x[/red]", "back\\[bold]",
          "é", "  ", "end\\", ":x:", "\u0301\t", "tab\t"]


def rich_plain(lines: list[Line]) -> str:
    """What rich prints for these lines on a console that is not a terminal."""
    console = Console(file=io.StringIO(), force_terminal=False, highlight=False, width=80)
    for line in lines:
        console.print(Text.assemble(*((piece, style or "") for piece, style in line)), highlight=False, soft_wrap=True)
    out = console.file.getvalue()
    assert isinstance(out, str)
    return out


def test_plain_lines_are_what_rich_prints_without_a_terminal() -> None:
    lines: list[Line] = [[(a, "bold"), (": ", None), (b, "bold red"), (c, None)]
                         for a in PIECES for b in PIECES for c in ("", "\t", "x" * 200)]
    assert "".join(plain(line) + "\n" for line in lines) == rich_plain(lines)


def test_a_report_is_printed_as_rich_prints_it_without_a_terminal(tmp_path: Path) -> None:
    (tmp_path / "a.worker").write_text("x\tyé\t[bold]z\\\n" + "w" * 400 + "\n")
    diagnostics = [Diagnostic(code=code, severity=severity, message=message, file="a.worker", line=line, column=column,
                              hint=message if line else None, related=(Related(file="a.worker", line=1, message=message),))
                   for code, severity in (("N003", Severity.ERROR), ("Y007", Severity.INFO))
                   for message in PIECES for line, column in ((None, None), (1, 5), (2, 300))]
    results = [ProjectDiagnostics("p", tmp_path, diagnostics)]
    out = io.StringIO()
    print_text(results, out)
    assert out.getvalue() == rich_plain(list(text_lines(results)))
    assert render_text(results, color=False) + "\n" == out.getvalue()


def test_markup_and_emoji_codes_in_a_message_are_printed_as_written(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """rich's markup turned `:x:` into an emoji and doubled a trailing backslash."""
    monkeypatch.setenv("TERM", "xterm-256color")
    d = Diagnostic(code="N003", severity=Severity.ERROR, message="unknown toolset ':x:' in [bold]c:\\", file="a.worker")
    out = io.StringIO()
    print_text([ProjectDiagnostics("p", tmp_path, [d])], out, show_summary=False)
    assert out.getvalue().endswith(": N003 error: unknown toolset ':x:' in [bold]c:\\\n")
    assert render_text([ProjectDiagnostics("p", tmp_path, [d])], color=True).endswith("[bold]c:\\\n\x1b[1m1 error\x1b[0m")


@pytest.mark.parametrize(("env", "tty", "expected"), [
    ({}, False, False), ({}, True, True), ({"FORCE_COLOR": "1"}, False, True), ({"FORCE_COLOR": ""}, True, False),
    ({"TTY_COMPATIBLE": "1"}, False, True), ({"TTY_COMPATIBLE": "0", "FORCE_COLOR": "1"}, True, False),
])
def test_styled_when_rich_would_style(env: dict[str, str], tty: bool, expected: bool,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)

    class Stream(io.StringIO):
        def isatty(self) -> bool:
            return tty

    stream = Stream()
    assert styled(stream) is expected
    assert Console(file=stream).is_terminal is expected

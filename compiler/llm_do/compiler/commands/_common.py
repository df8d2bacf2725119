"""What the compiler commands share: reporting a bad path as a usage error, the stderr console."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from ..pipeline import CompileResult
    from ..report.diagnostics import ProjectDiagnostics


def stderr_console():
    from rich.console import Console

    return Console(stderr=True, highlight=False)


class EnvironmentProblem(click.ClickException):
    """A bad path or an unwritable file: exit 2, like a usage error."""

    exit_code = 2

    def show(self, file=None) -> None:
        click.echo(f"llm-do: error: {self.message}", err=True)


def compile_or_exit(path: Path, **kwargs) -> CompileResult:
    """Compile, turning a path that names no project into a usage error (exit 2)."""
    from ..pipeline import compile_project
    from ..stages.load import ProjectNotFound

    try:
        return compile_project(path, **kwargs)
    except ProjectNotFound as exc:
        raise EnvironmentProblem(str(exc)) from None
    except OSError as exc:
        raise EnvironmentProblem(f"{exc.filename or path}: {exc.strerror}") from None


def as_report(project: str, result: CompileResult) -> ProjectDiagnostics:
    from ..report.diagnostics import ProjectDiagnostics

    return ProjectDiagnostics(project, result.loaded.root, result.diagnostics)


def print_diagnostics(reports: list[ProjectDiagnostics], *, summary: bool = True) -> None:
    if any(r.diagnostics for r in reports):
        from ..report.diagnostics.text import print_text  # rich: only when there is something to print

        print_text(reports, stderr_console(), show_summary=summary)


def isatty() -> bool:
    return sys.stderr.isatty()

"""`llm-do lint [PROJECT ...] [--format text|json|sarif|github] [--no-import] [--no-cache] [--strict] [-q]`."""

from __future__ import annotations

from pathlib import Path

import click

from llm_do.compiler.build import lint_project
from llm_do.compiler.report.diagnostics import RENDERERS, ProjectDiagnostics, counts

from ..compile_options import no_cache_option, no_import_option, quiet_option
from ..errors import ExitCode
from ..report_output import format_option, print_report
from ._compile import errors_only, usage_errors


@click.command()
@click.argument("projects", nargs=-1, type=click.Path(path_type=Path))
@format_option(RENDERERS)
@no_import_option
@no_cache_option
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too.")
@quiet_option
def lint(projects: tuple[Path, ...], fmt: str, no_import: bool, no_cache: bool, strict: bool, quiet: bool) -> int:
    """Check PROJECTS (default: .) and report every problem at once.

    Linting imports the project's Python (in a subprocess) to read its schemas and tools, which
    runs that code; use --no-import on code you do not trust.
    """
    reports = [_linted(project, import_python=not no_import, cache=not no_cache) for project in projects or (Path("."),)]
    shown = errors_only(reports) if quiet else reports
    if fmt == "text" and not any(r.diagnostics for r in shown):
        if not quiet:
            click.echo("no problems found", err=True)  # and rich is not imported: there is nothing to style
    else:
        print_report(RENDERERS, fmt, shown, err=fmt == "text")  # text on stderr, as ruff prints it
    c = counts(reports)
    return ExitCode.FAILED if c["error"] or (strict and c["warning"]) else ExitCode.OK


def _linted(project: Path, *, import_python: bool, cache: bool) -> ProjectDiagnostics:
    """The project's diagnostics (`lint_project`: its lint record's when nothing it depends on
    changed since, else a compile's); a path that names no project is a usage error."""
    with usage_errors(project):
        outcome = lint_project(project, import_python=import_python, cache=cache)
    return ProjectDiagnostics(project.as_posix(), outcome.root, outcome.diagnostics)

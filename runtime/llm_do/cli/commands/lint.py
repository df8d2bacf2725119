"""`llm-do lint [PROJECT ...] [--format text|json|sarif|github] [--no-import]`."""

from __future__ import annotations

from pathlib import Path

import click

from llm_do.compiler.report.diagnostics import RENDERERS, ProjectDiagnostics, counts

from ..compile_options import no_cache_option, no_import_option
from ..errors import ExitCode
from ..report_output import format_option, print_report
from ._compile import as_report, compile_or_exit


@click.command()
@click.argument("projects", nargs=-1, type=click.Path(path_type=Path))
@format_option(RENDERERS)
@no_import_option
@no_cache_option
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too.")
def lint(projects: tuple[Path, ...], fmt: str, no_import: bool, no_cache: bool, strict: bool) -> int:
    """Check PROJECTS (default: .) and report every problem at once.

    Linting imports the project's Python (in a subprocess) to read its schemas and tools, which
    runs that code; use --no-import on code you do not trust.
    """
    reports: list[ProjectDiagnostics] = []
    for project in projects or (Path("."),):
        result = compile_or_exit(project, import_python=not no_import, emit_bundle=False, cache=not no_cache)
        reports.append(as_report(project.as_posix(), result))
    if fmt == "text" and not any(r.diagnostics for r in reports):
        click.echo("no problems found", err=True)  # and rich is not imported: there is nothing to style
    else:
        print_report(RENDERERS, fmt, reports, err=fmt == "text")  # text on stderr, as ruff prints it
    c = counts(reports)
    return ExitCode.FAILED if c["error"] or (strict and c["warning"]) else ExitCode.OK

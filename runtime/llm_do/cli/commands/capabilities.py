"""`llm-do capabilities [PROJECT|bundle.lock] [--format text|json|markdown] [--no-import]`."""

from __future__ import annotations

from pathlib import Path

import click

from llm_do.compiler.diff.inputs import BundleInputProblem, ProjectHasErrors, load_document
from llm_do.compiler.report.capabilities import RENDERERS, report

from ..compile_options import no_cache_option, no_import_option
from ..errors import ExitCode, usage_problem
from ..report_output import format_option, print_report
from ._compile import as_report, print_diagnostics


@click.command()
@click.argument("target", default=".")
@format_option(RENDERERS)
@no_import_option
@no_cache_option
@click.option("--model", "model", metavar="M", help="Bound the cost of runs with `--model M` (every worker on M).")
def capabilities(target: str, fmt: str, no_import: bool, no_cache: bool, model: str | None) -> int:
    """Show what every worker can do, itself and through the workers it calls, with the call path
    and the approvals on it, and what a run can cost at most. TARGET is a project (compiled in
    memory, never read from its lock), a bundle.lock, or git:REV[:PATH]. Lines marked `!` are side
    effects with no approval."""
    try:
        doc = load_document(target, import_python=not no_import, cache=not no_cache)
    except ProjectHasErrors as exc:
        print_diagnostics([as_report(Path(target).as_posix(), exc.result, exc.files_as)])
        return ExitCode.FAILED
    except BundleInputProblem as exc:
        raise usage_problem(str(exc)) from None
    print_report(RENDERERS, fmt, report(doc, model=model))
    return ExitCode.OK

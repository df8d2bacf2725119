"""`llm-do capabilities [PROJECT|bundle.lock] [--format text|json|markdown] [--no-import]`."""

from __future__ import annotations

from pathlib import Path

import click

from ..bundle_inputs import BundleInputProblem, ProjectErrors, load_document
from ..capability_report import RENDERERS, report
from ._common import EnvironmentProblem, as_report, print_diagnostics


@click.command()
@click.argument("target", default=".")
@click.option("--format", "fmt", type=click.Choice(list(RENDERERS)), default="text", show_default=True)
@click.option("--no-import", is_flag=True, help="Read Python with ast instead of importing it (for untrusted code).")
def capabilities(target: str, fmt: str, no_import: bool) -> int:
    """Show what every worker can do, itself and through the workers it calls, with the call path
    and the approvals on it. TARGET is a project (compiled in memory, never read from its lock),
    a bundle.lock, or git:REV[:PATH]. Lines marked `!` are side effects with no approval."""
    try:
        doc = load_document(target, import_python=not no_import)
    except ProjectErrors as exc:
        print_diagnostics([as_report(Path(target).as_posix(), exc.result)])
        return 1
    except BundleInputProblem as exc:
        raise EnvironmentProblem(str(exc)) from None
    click.echo(RENDERERS[fmt](report(doc)))
    return 0

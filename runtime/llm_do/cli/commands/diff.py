"""`llm-do diff OLD NEW [--format text|markdown|json] [--fail-on high|medium|low] [--no-import]`.

Exit 0 when OLD and NEW mean the same, 1 when they differ (with --fail-on, only when a change at
or above that severity exists), 2 when they cannot be compared.
"""

from __future__ import annotations

import shlex

import click

from llm_do.compiler.diff.bundle import SEVERITIES, Incomparable, diff_bundles
from llm_do.compiler.diff.committed_lock import with_committed_locks
from llm_do.compiler.diff.inputs import BundleInputProblem, ProjectHasErrors, load_document
from llm_do.compiler.diff.unread import without_import
from llm_do.compiler.report.diff import RENDERERS, DiffInputs, DiffReport

from ..compile_options import no_cache_option, no_import_option
from ..errors import ExitCode, usage_problem
from ..report_output import format_option, print_report
from ._compile import as_report, print_diagnostics


@click.command()
@click.argument("old")
@click.argument("new")
@format_option(RENDERERS)
@click.option("--fail-on", type=click.Choice(SEVERITIES), help="Exit 1 only when a change of this severity or higher exists.")
@no_import_option
@no_cache_option
def diff(old: str, new: str, fmt: str, fail_on: str | None, no_import: bool, no_cache: bool) -> int:
    """Compare what two versions of a project can do. OLD and NEW are each a bundle.lock, a project
    directory (compiled in memory; a bundle.lock in it that is not the build of its sources is a
    high entry) or git:REV[:PATH] (the project, or the .lock file, as committed at REV)."""
    docs = []
    for spec in (old, new):
        try:
            docs.append(load_document(spec, import_python=not no_import, cache=not no_cache, any_format=True,
                                      committed=True))
        except ProjectHasErrors as exc:
            print_diagnostics([as_report(exc.label, exc.result, exc.files_as)], summary=False)
            raise usage_problem(str(exc)) from None
        except BundleInputProblem as exc:
            raise usage_problem(str(exc)) from None
    try:
        result = diff_bundles(docs[0], docs[1])
        if no_import:
            result = without_import(result, docs[0], docs[1])
        result = with_committed_locks(result, docs[0], docs[1])
    except Incomparable as exc:
        raise usage_problem(f"{old} and {new} cannot be compared: {exc}") from None
    flags = [f"--format {fmt}"] if fmt != "text" else []
    flags += [f"--fail-on {fail_on}"] if fail_on else []
    flags += ["--no-import"] if no_import else []
    command = " ".join(["llm-do diff", shlex.quote(old), shlex.quote(new), *flags])
    print_report(RENDERERS, fmt, DiffReport(result, DiffInputs(old, new, command)))
    if fmt in ("text", "markdown"):
        _case_reports(old, new, docs, markdown=fmt == "markdown")
    if fail_on is not None:
        return ExitCode.FAILED if result.at_or_above(fail_on) else ExitCode.OK
    return ExitCode.FAILED if result.changes else ExitCode.OK


def _case_reports(old: str, new: str, docs: list[dict[str, object]], *, markdown: bool) -> None:
    """When a report of `llm-do test --live` exists for both sides (tests/evals/DIGEST.json, in either
    side's project or the current directory's), which cases passed before and after."""
    from pathlib import Path

    from ..testing.eval_report import compare, read_status, report_path

    places = [Path.cwd(), *(Path(spec) if Path(spec).is_dir() else Path(spec).parent for spec in (new, old)
                            if not spec.startswith("git:"))]
    found = []
    for doc in docs:
        digest = str(doc.get("digest", ""))
        found.append(next((s for place in places if (s := read_status(report_path(place, digest))) is not None), None))
    before, after = found
    if before is None or after is None:
        return
    lines = compare(before, after)
    if markdown:
        click.echo("\n### Cases (`llm-do test --live`)\n\n" + "\n".join(f"- {line}" for line in lines))
    else:
        click.echo("\nCases (llm-do test --live reports):\n" + "\n".join(f"  {line}" for line in lines))

"""`llm-do test [PROJECT] [-k EXPR] [--live] [--record] [--format text|json|github] [--junit FILE] [-q]`:
build the project in memory (as `run` does) and run its cases (`tests/*.yaml`), each in a scratch
copy of the project. Offline unless --live: the model's turns come from cassettes and scripts."""

from __future__ import annotations

from pathlib import Path

import click

from ..compile_options import no_cache_option
from ..errors import CliError, ExitCode
from ._compile import as_report, compile_or_exit, print_diagnostics


@click.command(name="test")
@click.argument("project", default=".", type=click.Path(path_type=Path))
@click.option("-k", "keyword", metavar="EXPR",
              help="Run only the cases whose name matches EXPR: words (substrings of the name) with and, or, not, ().")
@click.option("--live", is_flag=True, help="Run cases on the project's models instead of their cassettes (model requests leave the machine).")
@click.option("--record", is_flag=True, help="Record again the cassettes of cases whose cassette is stale (from the script it was "
              "recorded from; with --live, on the project's models) or missing (--live); a run that fails the case replaces none.")
@click.option("--format", "format_", type=click.Choice(["text", "json", "github"]), default="text", show_default=True)
@click.option("--junit", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE", help="Also write the results as JUnit XML.")
@no_cache_option
@click.option("-q", "--quiet", is_flag=True,
              help="Print only the cases that did not pass, with their problems, the summary and the build's errors.")
def test(project: Path, keyword: str | None, live: bool, record: bool, format_: str, junit: Path | None, no_cache: bool,
         quiet: bool) -> int:
    """Run PROJECT's cases (default .): tests/*.yaml.

    Offline unless --live: no model is called and no remote MCP server reached (a case that would
    fails saying so). Exit codes: 0 every case passed, 1 a case failed or is stale, 2 usage error (a
    malformed case file, a path outside the project, no cases), 3 a cassette refused (unreadable, of
    another project).
    """
    from llm_do.runtime.recording.cassette import CassetteRefused
    from llm_do.toolkit.files import atomic_write

    from ..testing.case_run import CaseRunner
    from ..testing.cases import case_files, load_case_file
    from ..testing.recorded_servers import recorded_listings
    from ..testing.reports import FORMATS, failures_text
    from ..testing.reports import junit as junit_xml

    result = compile_or_exit(project, cache=not no_cache, listed=None if live else recorded_listings(project))
    print_diagnostics([as_report(project.as_posix(), result)], quiet=quiet)
    if result.bundle is None:
        raise CliError("the project has errors; no case was run", ExitCode.FAILED)
    root = result.loaded.root
    cases = [case for path in case_files(root) for case in load_case_file(path, root)]
    if keyword is not None:
        from ..testing.selection import selector

        chosen = selector(keyword)
        cases = [case for case in cases if chosen(case.case.name)]
    if not cases:
        where = f"matching -k {keyword!r} " if keyword is not None else ""
        raise CliError(f"{project}: no cases {where}in tests/*.yaml", ExitCode.USAGE)
    runner = CaseRunner(root, result.bundle, live=live, record=record)
    try:
        results = [runner.run(case) for case in cases]
    except CassetteRefused as exc:
        raise CliError(f"cassette refused: {exc}", ExitCode.REFUSED) from None
    click.echo(failures_text(results) if quiet and format_ == "text" else FORMATS[format_](results))
    if junit is not None:
        atomic_write(junit, junit_xml(results), mode=0o600)  # its failures quote what tools returned
    if live and not record:  # a recording runs each case once: no eval report
        import json

        from ..testing.eval_report import report_path, report_text

        digest = json.loads(result.bundle)["digest"]
        report = report_path(root, digest)
        report.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(report, report_text(results, digest).encode("utf-8"))
        if not quiet:
            click.echo(f"llm-do: wrote {report.relative_to(root).as_posix()}", err=True)
    return ExitCode.OK if all(r.status == "passed" for r in results) else ExitCode.FAILED

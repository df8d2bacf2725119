"""`llm-do batch BUNDLE INPUTS.jsonl -o RESULTS.jsonl [--concurrency N] [run options]`: run the
entry once per input line, a few at a time, each result appended to RESULTS.jsonl as it is done.

Approvals are fixed before the first input runs: `--approve-all`, `--reject-all`, or the bundle's
mode, never a terminal prompt (in `prompt` mode an asked call is denied, as in a run without a
terminal): a batch does not stop in the middle to ask.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..errors import CliError, ExitCode
from ..lock_options import LockOptions, load_lock, lock_options
from ..options import RunOptions, checked, durable_option, excludes, record_option, run_options_per
from ..params import BUNDLE
from ..session import RunSession, run_session

if TYPE_CHECKING:
    from llm_do.runtime.batch.results import ResultsFile
    from llm_do.runtime.batch.runs import BatchInput, BatchResult


@click.command(name="batch")
@click.argument("bundle_file", metavar="BUNDLE", type=BUNDLE)
@click.argument("inputs", type=click.Path(path_type=Path))
@click.option("-o", "--output", "results", required=True, type=click.Path(path_type=Path),
              help="RESULTS.jsonl: one line per input, appended as each is done; a rerun skips the inputs it holds.")
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True,
              help="Inputs run at the same time.")
@click.option("--retry-failed", is_flag=True, help="Run the inputs whose results are failures again.")
@durable_option
@run_options_per("input")
@checked(excludes("record", "durable", "--record and --durable do not go together: a durable run replays its own record"))
@record_option
@lock_options
def batch(bundle_file: Path, inputs: Path, results: Path, concurrency: int, retry_failed: bool, durable: str | None,
          opts: RunOptions, record: Path | None, lock: LockOptions) -> int:
    """Run BUNDLE's entry once per line of INPUTS (a JSON object of its arguments, or a JSON string
    for `input`), writing one result per line to RESULTS: {"line", "output", "error", "usage"}.

    With --durable, each input is a durable run taken from a queue in DB_URL: several processes
    (on machines sharing Postgres) started on the same batch share its inputs, none run twice.

    Exit codes: 0 every input succeeded, 1 some failed (their lines say why), 2 usage error
    (a bad inputs line, a results file of another batch or that another batch process is
    writing), 3 bundle refused, 130 interrupted
    (inputs cut off get no line; a rerun runs them).
    """
    from llm_do.runtime.batch.results import BatchIdentity, ResultsFile
    from llm_do.runtime.batch.runs import parse_inputs
    from llm_do.runtime.errors import InputProblem

    from ..results_lock import hold_results, release_results

    bundle = load_lock(bundle_file, lock)
    try:
        raw = inputs.read_bytes()
        items = parse_inputs(raw.decode("utf-8-sig"), str(inputs))
    except OSError as exc:
        raise CliError(f"{inputs}: cannot read it ({exc.strerror})", ExitCode.USAGE) from None
    except UnicodeDecodeError:
        raise CliError(f"{inputs}: not UTF-8 text", ExitCode.USAGE) from None
    url = None
    if durable is not None:
        from ..durable_run import db_url, require_dbos

        url = db_url(durable, bundle.path.resolve().parent)
        require_dbos()
    # the session starts before the results file: a usage error writes nothing
    with run_session(bundle, opts, interactive=False) as session:
        identity = BatchIdentity.of(bundle.text.get("digest"), raw, bundle.path.name, inputs.name)
        held = hold_results(results, "give each process its own -o" if url is not None else
                            "wait for it to end (a rerun then runs only the inputs it has no line for)")
        try:
            store = ResultsFile(results, identity, retry_failed)
        except InputProblem as exc:
            release_results(held)
            raise CliError(str(exc), ExitCode.USAGE) from None
        try:
            todo = [item for item in items if item.line not in store.done]
            if url is None:
                _run(session, todo, store, concurrency, len(items), record)
            else:
                from ..durable_batch import run_durable_batch

                run_durable_batch(session, todo, store, concurrency=concurrency, total=len(items), url=url,
                                  inputs_sha256=identity.inputs_sha256, retry_failed=retry_failed)
        finally:
            store.close()
            release_results(held)
    failed = len(store.failed & {item.line for item in items})
    if failed and not todo:  # a rerun that found every input done: say so, and what would run them
        raise CliError(f"nothing to run: every input has a line in {results} already; {failed} of {len(items)} "
                       "are failures (their lines say why); --retry-failed runs them again", ExitCode.FAILED)
    if failed:
        raise CliError(f"{failed} of {len(items)} inputs failed; their lines in {results} say why; "
                       "--retry-failed runs them again", ExitCode.FAILED)
    return ExitCode.OK


def _run(session: RunSession, todo: list[BatchInput], store: ResultsFile, concurrency: int, total: int,
         record: Path | None) -> None:
    from llm_do.runtime.batch.runs import run_batch, run_one
    from llm_do.runtime.run_label import RUN_LABEL

    from ..display.batch_progress import reporter

    async def run(item: BatchInput) -> BatchResult:
        RUN_LABEL.set(f"#{item.line} ")
        if record is None:
            return await run_one(session.bundle, session.config, item)
        return await _recorded(session, item, record)

    progress, on_result = reporter(store, total, len(todo), session.setup.opts.verbose)
    if progress is not None:
        with progress:
            asyncio.run(run_batch(todo, run, on_result, concurrency))
    else:
        asyncio.run(run_batch(todo, run, on_result, concurrency))


async def _recorded(session: RunSession, item: BatchInput, record: Path) -> BatchResult:
    """One input's run recorded as a cassette of its own (`DIR/WORKER.line-N.json`)."""
    from llm_do.runtime.batch.runs import run_one
    from llm_do.runtime.runtime import Runtime

    from ..recording import Recording

    recording = Recording(session.bundle, record, None, suffix=f".line-{item.line}", script=session.setup.opts.script)
    recording.turn(item.data)
    result = await run_one(session.bundle, session.config, item, runtime=Runtime(session.bundle, recording.config(session.config)))
    if result.error is not None:
        recording.recorder.failure = result.error
    else:
        recording.answered(result.output)
    recording.save(quiet=True)
    return result

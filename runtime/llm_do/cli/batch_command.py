"""`llm-do batch BUNDLE INPUTS.jsonl -o RESULTS.jsonl [--concurrency N] [run options]`: run the
entry once per input line, a few at a time, each result appended to RESULTS.jsonl as it is done.

Approvals are fixed before the first input runs: `--approve-all`, `--reject-all`, or the bundle's
mode, never a terminal prompt (in `prompt` mode an asked call is denied, as in a run without a
terminal): a batch does not stop in the middle to ask.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import click

from .durable_options import DurableAwareCommand, durable_option
from .exec_command import bundle_path
from .run_setup import EXIT_FAILED, EXIT_REFUSED, EXIT_USAGE, ExecError, prepare_run, run_failure, run_options


@click.command(name="batch", cls=DurableAwareCommand)
@click.argument("bundle", type=click.Path(path_type=Path))
@click.argument("inputs", type=click.Path(path_type=Path))
@click.option("-o", "--output", "results", required=True, type=click.Path(path_type=Path),
              help="RESULTS.jsonl: one line per input, appended as each is done; a rerun skips the inputs it holds.")
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True,
              help="Inputs run at the same time.")
@click.option("--retry-failed", is_flag=True, help="Run the inputs whose results are failures again.")
@durable_option
@run_options
def batch(bundle: Path, inputs: Path, results: Path, concurrency: int, retry_failed: bool, durable: str | None,
          **options: Any) -> int:
    """Run BUNDLE's entry once per line of INPUTS (a JSON object of its arguments, or a JSON string
    for `input`), writing one result per line to RESULTS: {"line", "output", "error", "usage"}.

    With --durable, each input is a durable run taken from a queue in DB_URL: several processes
    (on machines sharing Postgres) started on the same batch share its inputs, none run twice.

    Exit codes: 0 every input succeeded, 1 some failed (their lines say why), 2 usage error
    (a bad inputs line, a results file of another batch), 3 bundle refused, 130 interrupted
    (inputs cut off get no line; a rerun runs them).
    """
    from llm_do.runtime.batch import parse_inputs
    from llm_do.runtime.batch_results import BatchIdentity, ResultsFile
    from llm_do.runtime.bundle import BundleRefused, load_bundle
    from llm_do.runtime.errors import InputProblem

    path = bundle_path(bundle)
    try:
        loaded = load_bundle(path)
    except BundleRefused as exc:
        raise ExecError(str(exc), EXIT_REFUSED) from None
    try:
        raw = inputs.read_bytes()
        items = parse_inputs(raw.decode("utf-8-sig"), str(inputs))
    except OSError as exc:
        raise ExecError(f"{inputs}: cannot read it ({exc.strerror})", EXIT_USAGE) from None
    except UnicodeDecodeError:
        raise ExecError(f"{inputs}: not UTF-8 text", EXIT_USAGE) from None
    except InputProblem as exc:
        raise ExecError(str(exc), EXIT_USAGE) from None
    verbose = options["verbose"]
    url = None
    if durable is not None:
        from .durable_run import db_url, require_dbos

        url = db_url(durable, path.resolve().parent)
        require_dbos()
    setup = prepare_run(loaded, interactive=False, **options)  # before the results file: a usage error writes nothing
    try:
        identity = BatchIdentity.of(loaded.text.get("digest"), raw, path.name, inputs.name)
        held = None
        if url is not None:
            from .durable_batch import hold_results, release_results

            held = hold_results(results)
        try:
            store = ResultsFile(results, identity, retry_failed)
        except InputProblem as exc:
            if held is not None:
                release_results(held)
            raise ExecError(str(exc), EXIT_USAGE) from None
        try:
            todo = [item for item in items if item.line not in store.done]
            if url is None:
                _run(loaded, setup.config, todo, store, concurrency, len(items), verbose)
            else:
                from .durable_batch import run_durable_batch

                run_durable_batch(loaded, setup, todo, store, concurrency=concurrency, total=len(items), verbose=verbose,
                                  url=url, inputs_sha256=identity.inputs_sha256, retry_failed=retry_failed)
        finally:
            store.close()
            if held is not None:
                release_results(held)
    finally:
        setup.close()
    setup.check_script_used()
    failed = len(store.failed & {item.line for item in items})
    if failed:
        raise ExecError(f"{failed} of {len(items)} inputs failed; their lines in {results} say why", EXIT_FAILED)
    return 0


def _run(bundle: Any, config: Any, todo: list[Any], store: Any, concurrency: int, total: int, verbose: int) -> None:
    from llm_do.runtime.batch import run_batch, run_one
    from llm_do.runtime.child_processes import children, kill_new_descendants

    from .trace import LABEL

    async def run(item: Any) -> Any:
        LABEL.set(f"#{item.line} ")
        return await run_one(bundle, config, item)

    from .batch_progress import reporter

    progress, on_result = reporter(store, total, len(todo), verbose)
    before = children(os.getpid())
    try:
        if progress is not None:
            with progress:
                asyncio.run(run_batch(todo, run, on_result, concurrency))
        else:
            asyncio.run(run_batch(todo, run, on_result, concurrency))
    except KeyboardInterrupt:
        kill_new_descendants(before)
        raise
    except Exception as exc:  # a refused bundle: every input's problem
        kill_new_descendants(before)
        raise run_failure(exc, verbose) from None


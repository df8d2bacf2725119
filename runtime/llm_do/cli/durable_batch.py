"""How `llm-do batch ... --durable [DB_URL]` drives a batch: the results file held by this process
alone, DBOS launched with this process's executor, the inputs taken from the batch's queue, each
finished input (whichever process ran it) appended to this process's results file.

Several processes may work one batch, each with its own results file (one per machine, say); two
processes writing one results file would duplicate its lines, so the second is refused (exit 2,
`results_lock`, as for a plain batch).
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from llm_do.runtime.batch.results import ResultsFile
    from llm_do.runtime.batch.runs import BatchInput, BatchResult
    from llm_do.runtime.runtime import Runtime

    from .session import RunSession


def run_durable_batch(session: RunSession, todo: list[BatchInput], store: ResultsFile, *, concurrency: int, total: int,
                      url: str, inputs_sha256: str, retry_failed: bool) -> None:
    """Work the batch's queue in DB_URL with this process's executor; failures are the session's
    to end (the processes a failed batch left are stopped there)."""
    from llm_do.runtime.batch.runs import run_one
    from llm_do.runtime.durable import dbos as durable
    from llm_do.runtime.durable.batch_queue import batch_prefix, executor_id, register_batch_workflow, work
    from llm_do.runtime.run_label import RUN_LABEL

    from .display.batch_progress import reporter
    from .durable_run import bundle_digest, share_budget

    bundle, verbose = session.bundle, session.setup.opts.verbose
    digest = bundle_digest(bundle)
    prefix = batch_prefix(digest, inputs_sha256)
    share_budget(session, url, prefix.rstrip("-"), spent_by="the batch's runs")  # one for every process of the batch
    template = durable.durable_runtime(bundle, session.config, digest=digest, player=session.setup.player)

    async def run(item: BatchInput, runtime: Runtime) -> BatchResult:
        RUN_LABEL.set(f"#{item.line} ")
        return await run_one(bundle, session.config, item, runtime=runtime)

    click.echo(f"llm-do: batch id: {prefix.rstrip('-')}", err=True)
    progress, on_result = reporter(store, total, len(todo), verbose)
    with durable.launched(template, lambda runtime: register_batch_workflow(runtime, run), url, executor=executor_id(),
                          digest=digest, verbose=verbose) as workflow, progress if progress is not None else nullcontext():
        work(workflow, prefix, digest, todo, concurrency=concurrency, retry_failed=retry_failed, on_result=on_result)


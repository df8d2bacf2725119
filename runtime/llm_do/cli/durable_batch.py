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
    from llm_do.runtime.batch import BatchInput, BatchResult
    from llm_do.runtime.batch_results import ResultsFile
    from llm_do.runtime.runtime import Runtime

    from .session import RunSession


def run_durable_batch(session: RunSession, todo: list[BatchInput], store: ResultsFile, *, concurrency: int, total: int,
                      url: str, inputs_sha256: str, retry_failed: bool) -> None:
    """Work the batch's queue in DB_URL with this process's executor; failures are the session's
    to end (the processes a failed batch left are stopped there)."""
    from llm_do.runtime.batch import run_one
    from llm_do.runtime.durable import dbos as durable
    from llm_do.runtime.durable.batch_queue import batch_prefix, executor_id, register_batch_workflow, work
    from llm_do.runtime.run_label import RUN_LABEL

    from .display.batch_progress import reporter
    from .durable_run import bundle_digest

    bundle, verbose = session.bundle, session.setup.opts.verbose
    digest = bundle_digest(bundle)
    prefix = batch_prefix(digest, inputs_sha256)
    if session.config.budget is not None:  # one budget for every process of the batch, in its database
        _share_budget(session, url, prefix.rstrip("-"))
    template = durable.durable_runtime(bundle, session.config, digest=digest, player=session.setup.player)

    async def run(item: BatchInput, runtime: Runtime) -> BatchResult:
        RUN_LABEL.set(f"#{item.line} ")
        return await run_one(bundle, session.config, item, runtime=runtime)

    click.echo(f"llm-do: batch id: {prefix.rstrip('-')}", err=True)
    progress, on_result = reporter(store, total, len(todo), verbose)
    try:
        durable.prepare(template)
        workflow = register_batch_workflow(template, run)
        durable.launch(url, executor=executor_id(), digest=digest, verbose=verbose)
        with progress if progress is not None else nullcontext():
            work(workflow, prefix, digest, todo, concurrency=concurrency, retry_failed=retry_failed,
                 on_result=on_result)
    finally:
        durable.shutdown()


def _share_budget(session: RunSession, url: str, batch: str) -> None:
    """The session's budget, kept in the run database for every process working the batch
    (`durable.budget_ledger`) instead of in this process."""
    from dataclasses import replace

    from llm_do.runtime.durable.batch_queue import dead_local_executors, executor_id
    from llm_do.runtime.durable.budget_ledger import SharedBudget, engine_for

    local = session.config.budget
    assert local is not None
    shared = SharedBudget(engine_for(url), batch, local.limit, executor=executor_id(), accept_unpriced=local.accept_unpriced,
                          on_note=local.on_note, dead=dead_local_executors)
    session.setup.config = replace(session.config, budget=shared)
    session.setup.on_close.append(shared.close)

"""How `llm-do batch ... --durable [DB_URL]` drives a batch: the results file held by this process
alone, DBOS launched with this process's executor, the inputs taken from the batch's queue, each
finished input (whichever process ran it) appended to this process's results file.

Several processes may work one batch, each with its own results file (one per machine, say); two
processes writing one results file would duplicate its lines, so the second is refused (exit 2).
"""

from __future__ import annotations

import fcntl
import os
from contextlib import nullcontext
from pathlib import Path
from typing import IO, Any

import click

from .run_setup import EXIT_USAGE, ExecError, run_failure


def hold_results(path: Path) -> IO[str]:
    """An exclusive lock on RESULTS for this process (a lock file beside it, removed on release):
    another batch process given the same -o is refused rather than writing lines twice."""
    lock_path = path.with_name(f".{path.name}.lock")
    while True:
        try:
            stream = open(lock_path, "a+", encoding="utf-8")
        except OSError as exc:
            raise ExecError(f"{path}: cannot write beside it ({exc.strerror})", EXIT_USAGE) from None
        try:
            fcntl.flock(stream, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            stream.close()
            raise ExecError(f"{path}: another batch process is writing it; give each process its own -o", EXIT_USAGE) from None
        try:
            same = os.fstat(stream.fileno()).st_ino == os.stat(lock_path).st_ino
        except FileNotFoundError:
            same = False
        if same:  # not a lock file its last holder removed while we opened it
            return stream
        stream.close()


def release_results(stream: IO[str]) -> None:
    Path(stream.name).unlink(missing_ok=True)
    stream.close()


def run_durable_batch(bundle: Any, setup: Any, todo: list[Any], store: Any, *, concurrency: int, total: int,
                      verbose: int, url: str, inputs_sha256: str, retry_failed: bool) -> None:
    from llm_do.runtime.batch import run_one
    from llm_do.runtime.child_processes import children, kill_new_descendants
    from llm_do.runtime.durable import dbos as durable
    from llm_do.runtime.durable.batch_queue import batch_prefix, executor_id, register_batch_workflow, work

    from .batch_progress import reporter
    from .durable_run import bundle_digest
    from .trace import LABEL

    digest = bundle_digest(bundle)
    template = durable.DurableRuntime(bundle, setup.config, digest=digest, player=setup.player)

    async def run(item: Any, runtime: Any) -> Any:
        LABEL.set(f"#{item.line} ")
        return await run_one(bundle, setup.config, item, runtime=runtime)

    prefix = batch_prefix(digest, inputs_sha256)
    click.echo(f"llm-do: batch id: {prefix.rstrip('-')}", err=True)
    progress, on_result = reporter(store, total, len(todo), verbose)
    before = children(os.getpid())
    try:
        try:
            template.prepare()
            workflow = register_batch_workflow(template, run)
            durable.launch(url, executor=executor_id(), digest=digest, verbose=verbose)
            with progress if progress is not None else nullcontext():
                work(workflow, prefix, digest, todo, concurrency=concurrency, retry_failed=retry_failed,
                     on_result=on_result)
        finally:
            durable.shutdown()
    except KeyboardInterrupt:
        kill_new_descendants(before)
        raise
    except Exception as exc:  # a refused bundle, a database that cannot be reached
        kill_new_descendants(before)
        raise run_failure(exc, verbose) from None

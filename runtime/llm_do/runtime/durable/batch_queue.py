"""Durable batches (`llm-do batch ... --durable [DB_URL]`) on a DBOS queue.

Each input is one workflow, `llm-do-batch-<digest>-<inputs sha>-<line>`, enqueued on the batch's
own queue. The id is the whole of the coordination: every process started on the same bundle,
inputs and database enqueues the same ids, DBOS keeps one workflow per id, and the queue hands
each workflow to one process. So processes (on one machine, or on several sharing Postgres) split
the inputs between them and no input runs twice; a process started later, or a rerun, finds the
inputs that are done already recorded and reads their results instead of running them.

`--retry-failed` gives a failed input a new generation (`...-<line>.1`, `.2`): the retried run is
a new workflow, while the failed one stays recorded.

Each process takes a DBOS executor id of its own, `llm-do-batch@<host>-<pid>`. A process that
dies leaves its inputs under way pending on its executor; the next batch process started on the
same machine sees that the process is gone and hands those inputs back to the queue, where they
resume from their recorded steps. (A dead process on another machine is noticed by a batch process
started on that machine: nothing else can tell it from one that is only slow.)
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from dbos import DBOS, SetWorkflowID

from llm_do.toolkit.processes import pid_alive

from ..batch.runs import BatchInput, BatchResult
from ..runtime import Runtime
from .dbos import durability_of, sibling
from .names import short_digest

if TYPE_CHECKING:
    from dbos import WorkflowStatus

BATCH_WORKFLOW_PREFIX = "llm-do.batch."
EXECUTOR_PREFIX = "llm-do-batch@"
POLL_SECONDS = 0.1
"""How often a process looks for inputs to take from the queue and for finished inputs."""
FINISHED = {"SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED"}

BatchWorkflow = Callable[[dict[str, Any]], Coroutine[Any, Any, dict[str, Any]]]
"""A registered batch workflow: one input's record in, its `BatchResult` as a dict out."""


def batch_prefix(digest: str, inputs_sha256: str) -> str:
    """The ids of one batch's input workflows start with this; the batch's queue is named by it."""
    return f"llm-do-batch-{short_digest(digest)}-{inputs_sha256[:16]}-"


def input_id(prefix: str, line: int, generation: int = 0) -> str:
    return f"{prefix}{line}" if generation == 0 else f"{prefix}{line}.{generation}"


def parse_input_id(prefix: str, workflow_id: str) -> tuple[int, int] | None:
    """(line, generation) of one of the batch's input workflows; None for any other id."""
    if not workflow_id.startswith(prefix):
        return None
    line, _, generation = workflow_id[len(prefix):].partition(".")
    if not line.isdigit() or (generation and not generation.isdigit()):
        return None
    return int(line), int(generation or 0)


class Recorded(NamedTuple):
    """An input workflow the database already holds."""

    id: str
    generation: int
    status: str
    executor: str | None
    failed: bool
    """It finished without a result (a failure recorded as its result, or an error)."""


def recorded(prefix: str, statuses: Iterable[WorkflowStatus]) -> dict[int, Recorded]:
    """The latest generation recorded for each line."""
    latest: dict[int, Recorded] = {}
    for status in statuses:
        parsed = parse_input_id(prefix, status.workflow_id)
        if parsed is None:
            continue
        line, generation = parsed
        if line in latest and latest[line].generation > generation:
            continue
        output = status.output if status.status == "SUCCESS" else None
        failed = status.status in FINISHED and not (isinstance(output, dict) and output.get("error") is None)
        latest[line] = Recorded(status.workflow_id, generation, status.status, status.executor_id, failed)
    return latest


def plan(prefix: str, todo: Iterable[BatchInput], known: dict[int, Recorded], retry_failed: bool) -> list[tuple[BatchInput, str, bool]]:
    """For each input to do: its workflow id, and whether to enqueue it (False: it is recorded
    already, done or under way, and this process only waits for its result). Pure."""
    steps = []
    for item in todo:
        found = known.get(item.line)
        if found is None:
            steps.append((item, input_id(prefix, item.line), True))
        elif found.failed and retry_failed:
            steps.append((item, input_id(prefix, item.line, found.generation + 1), True))
        else:
            steps.append((item, found.id, False))
    return steps


def executor_id(host: str | None = None, pid: int | None = None) -> str:
    return f"{EXECUTOR_PREFIX}{host or socket.gethostname()}-{pid or os.getpid()}"


def dead_local_executors(executors: Iterable[str | None], host: str | None = None,
                         alive: Callable[[int], bool] | None = None) -> list[str]:
    """The batch executors of this machine whose process is gone."""
    mine = f"{EXECUTOR_PREFIX}{host or socket.gethostname()}-"
    alive = alive or pid_alive
    dead = []
    for executor in set(filter(None, executors)):
        pid = executor[len(mine):]
        if executor.startswith(mine) and pid.isdigit() and int(pid) != os.getpid() and not alive(int(pid)):
            dead.append(executor)
    return sorted(dead)


def register_batch_workflow(template: Runtime, run: Callable[[BatchInput, Runtime], Awaitable[BatchResult]]) -> BatchWorkflow:
    """The workflow that runs one input (registered before `launch`). Each input runs on a runtime
    of its own (its usage, approvals, references) sharing the template's durable Agents."""

    @DBOS.workflow(name=f"{BATCH_WORKFLOW_PREFIX}{short_digest(durability_of(template).digest)}")
    async def run_input(record: dict[str, Any]) -> dict[str, Any]:
        item = BatchInput(record["line"], record["input"])
        return (await run(item, sibling(template, answer_here=True)))._asdict()

    return run_input


def work(workflow: BatchWorkflow, prefix: str, digest: str, todo: list[BatchInput], *, concurrency: int, retry_failed: bool,
         on_result: Callable[[BatchResult], None]) -> None:
    """Enqueue the inputs to do (those not recorded yet), hand back the inputs of dead local
    processes, and report each input's result as it is recorded, whichever process ran it. Runs
    in the main thread after `launch`; DBOS runs the workflows in its own threads."""
    queue = DBOS.register_queue(prefix.rstrip("-"), worker_concurrency=concurrency, polling_interval_sec=POLL_SECONDS,
                                on_conflict="always_update")
    known = recorded(prefix, DBOS.list_workflows(workflow_id_prefix=prefix, load_input=False, load_output=True))
    stale = dead_local_executors(r.executor for r in known.values() if r.status == "PENDING")
    if stale:
        DBOS._recover_pending_workflows(stale)  # no public API for another executor's workflows (RULES.md)
    waiting: dict[str, BatchInput] = {}
    for item, workflow_id, enqueue in plan(prefix, todo, known, retry_failed):
        if enqueue:
            with SetWorkflowID(workflow_id):
                queue.enqueue(workflow, {"digest": digest, "line": item.line, "input": item.data})
        waiting[workflow_id] = item
    while waiting:
        for status in DBOS.list_workflows(workflow_ids=list(waiting), status=list(FINISHED), load_input=False,
                                          load_output=True):
            item = waiting.pop(status.workflow_id)
            on_result(result_of(item, status))
        if waiting:
            time.sleep(POLL_SECONDS)


def result_of(item: BatchInput, status: WorkflowStatus) -> BatchResult:
    """An input's result as its workflow recorded it. A workflow ends in error only when the run
    could not record its own failure (the bundle refused, recovery given up): that is re-raised
    for a refused bundle (every input's problem) and the input's failure otherwise."""
    from ..bundle import BundleRefused

    output = status.output
    if status.status == "SUCCESS" and isinstance(output, dict):
        return BatchResult(item.line, output.get("output"), output.get("error"), output.get("usage") or {})
    if isinstance(status.error, BundleRefused):
        raise status.error
    why = " ".join(str(status.error or status.status.lower().replace("_", " ")).split())
    return BatchResult(item.line, None, f"the durable run ended without a result: {why}", {})

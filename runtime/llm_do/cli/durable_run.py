"""How `exec --durable` and `resume` drive a durable run in a run session: DBOS launched for the
run's database, the output or the reason it stopped.

Exit codes as `exec`, plus 4: the run waits for an approval (`--detach-approvals`), recorded in
the database; `llm-do approve`/`deny` answer it and `llm-do resume` continues it.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .errors import CliError, ExitCode
from .inputs import InputOptions, run_input
from .lock_options import LockOptions, load_lock
from .options import RunOptions
from .resume_options import remembered, resume_command, taken
from .session import RunSession, run_session

if TYPE_CHECKING:
    from llm_do.runtime.bundle import LoadedBundle
    from llm_do.runtime.durable.budget_ledger import SharedBudget
    from llm_do.runtime.durable.runs import RunRecord
    from llm_do.runtime.runtime import Runtime


def require_dbos() -> None:
    """DBOS comes with the `durable` extra; without it, one line saying how to get it."""
    try:
        import dbos  # noqa: F401
    except ImportError:
        raise CliError("durable runs need DBOS, which is not installed: pip install 'llm-do[durable]'",
                       ExitCode.FAILED) from None


def db_url(given: str | None, base: Path | None = None) -> str:
    """The database a command names (`given`), else the default: below `base` (a run's bundle
    folder, where runs are recorded: folder and file created private), or below the project the
    current directory is in (for the commands that read runs). A DbUrlProblem is a usage error
    (exit 2, cli/main.py)."""
    from llm_do.runtime.durable.db_url import project_dir, resolve_db_url

    if base is None:
        return resolve_db_url(given or None, project_dir(Path.cwd()))
    return resolve_db_url(given or None, base, create=True)


def exec_durable(bundle: LoadedBundle, prompt: str | None, inputs: InputOptions, opts: RunOptions, *, durable: str,
                 detach_approvals: bool, worker: str | None = None) -> int:
    """`exec --durable`: start a new durable run of the bundle's entry, or of `worker`."""
    require_dbos()
    if worker is None and bundle.entry_function is not None:
        raise CliError("the entry is a Python function: a durable run starts at a worker; give --worker NAME",
                       ExitCode.USAGE)
    if worker is not None and bundle.worker(worker) is None:
        from .params import no_such_worker

        raise no_such_worker("--worker", worker, bundle.worker_names())
    name = worker or bundle.entry["worker"]
    url = db_url(durable, bundle.path.resolve().parent)
    with run_session(bundle, opts, children="leave") as session:
        run_id = str(uuid.uuid4())
        share_budget(session, url, run_id, spent_by=RUN_SPENT_BY)
        runtime = _runtime(session, detach_approvals)
        data = run_input(runtime, prompt, inputs, worker)
        record: dict[str, object] = {"bundle": str(bundle.path.resolve()), "digest": bundle_digest(bundle), "worker": name,
                                     "input": data, "detach": detach_approvals, "options": remembered(opts)}
        click.echo(f"llm-do: run id: {run_id}", err=True)
        # `resume` run from here looks in the project's database: name this one when it is elsewhere
        return drive(runtime, session, url, run_id, record, resume_db=None if url == db_url(None) else url)


def resume_run(run_id: str, opts: RunOptions, lock: LockOptions, *, db: str | None, detach_approvals: bool) -> int:
    """`resume RUN_ID`: continue a run whose process died, on the bundle it started with."""
    require_dbos()
    url = db_url(db)
    run = read_run(url, run_id)
    if run.state in ("done", "failed", "cancelled"):
        why = f": {run.error}" if run.error else ""
        raise CliError(f"run '{run_id}' is {run.state}{why}; only a pending or waiting run can be resumed", ExitCode.USAGE)
    opts, said = taken(opts, run.record.get("options"))
    if said:
        click.echo(f"llm-do: resume takes the options run '{run_id}' started with: {' '.join(said)}", err=True)
    bundle = load_lock(Path(run.bundle), lock, label=f"run '{run_id}': ")
    digest = bundle_digest(bundle)
    if digest != run.digest:
        raise CliError(f"run '{run_id}' started on bundle {run.digest[:19]}, but {run.bundle} is now {digest[:19]}: "
                       "a run resumes only on the bundle it started with (rebuild nothing, or start a new run)",
                       ExitCode.REFUSED)
    with run_session(bundle, opts, children="leave") as session:
        budget = share_budget(session, url, run_id, spent_by=RUN_SPENT_BY)
        stop = budget.exhausted() if budget is not None else None
        if budget is not None and stop is not None:  # left pending: a larger --max-cost resumes it
            more = "; resume it with a larger --max-cost to go on" if budget.spent() >= budget.limit else ""
            raise CliError(f"run '{run_id}' cannot go on: {stop}{more}", ExitCode.FAILED)
        runtime = _runtime(session, detach_approvals or bool(run.record.get("detach")))
        click.echo(f"llm-do: run id: {run_id}", err=True)
        return drive(runtime, session, url, run_id, None, resume_db=url if db else None)


RUN_SPENT_BY = "the run's requests so far (its processes before a resume included)"


def share_budget(session: RunSession, url: str, key: str, *, spent_by: str) -> SharedBudget | None:
    """The session's budget (`--max-cost`), if it has one, kept in the run database under `key`
    (`durable.budget_ledger`) instead of in this process: a batch's id, so that every process
    working the batch spends from one budget, or a run's, so that a resumed run goes on from what
    it spent before."""
    from dataclasses import replace

    local = session.config.budget
    if local is None:
        return None
    from llm_do.runtime.durable.batch_queue import dead_local_executors, executor_id
    from llm_do.runtime.durable.budget_ledger import SharedBudget, engine_for

    shared = SharedBudget(engine_for(url), key, local.limit, executor=executor_id(), accept_unpriced=local.accept_unpriced,
                          on_note=local.on_note, dead=dead_local_executors, spent_by=spent_by)
    session.setup.config = replace(session.config, budget=shared)
    session.setup.on_close.append(shared.close)
    return shared


def read_run(url: str, run_id: str) -> RunRecord:
    """The run's record; a RecordProblem (no such run or database) is a usage error (exit 2, cli/main.py)."""
    from llm_do.runtime.durable.runs import Records

    records = Records(url)
    try:
        return records.run(run_id)
    finally:
        records.close()


def bundle_digest(bundle: LoadedBundle) -> str:
    return str(bundle.text.get("digest"))


def _runtime(session: RunSession, detach_approvals: bool) -> Runtime:
    from llm_do.runtime.durable.dbos import durable_runtime

    return durable_runtime(session.bundle, session.config, digest=bundle_digest(session.bundle),
                           player=session.setup.player, detach_approvals=detach_approvals)


def drive(runtime: Runtime, session: RunSession, url: str, run_id: str, record: dict[str, object] | None, *,
          resume_db: str | None = None) -> int:
    """Launch DBOS for the run, start it (or let it recover); its output is the session's, or it
    stopped to wait for an approval (exit 4). `resume_db`: the `--db` a printed `resume` needs."""
    from llm_do.runtime.durable import dbos as durable
    from llm_do.runtime.durable.names import executor_id

    with durable.launched(runtime, durable.register_run_workflow, url, executor=executor_id(run_id),
                          digest=bundle_digest(runtime.bundle), verbose=session.setup.opts.verbose,
                          recovering=record is None) as workflow:
        outcome, value = asyncio.run(durable.start_or_resume(
            workflow, run_id, record, runtime, lambda info: click.echo(waiting_line(run_id, info, detached=False), err=True)))
    if outcome == "suspended":
        assert isinstance(value, dict)  # the approval waited for
        click.echo(waiting_line(run_id, value, detached=True, db=resume_db), err=True)
        session.script_check = False
        return ExitCode.SUSPENDED
    worker = (record or {}).get("worker")
    session.output = _output(runtime, value, worker if isinstance(worker, str) else None)
    return session.flow_denied_status(runtime)


def waiting_line(run_id: str, info: dict[str, object], *, detached: bool, db: str | None = None) -> str:
    """What a run waits for, how to answer it and the approval's question, said at once (a process
    without a terminal that waits in silence looks hung). `db`: the database the commands name."""
    number = info["id"]
    then = f"then `{resume_command(run_id, db)}`" if detached else "this process continues when it is answered"
    line = (f"llm-do: run {run_id} waits for approval {number}: {info['tool']} of worker '{info['worker']}'; answer with "
            f"`llm-do approve {run_id} {number}`, `llm-do deny {run_id} {number} --note WHY` or "
            f"`llm-do revise {run_id} {number} FEEDBACK`, {then}")
    return f"{line}\n  {info['question']}" if info.get("question") else line


def _output(runtime: Runtime, value: object, worker: str | None) -> object:
    """The run's output as its worker's output class again (it crossed the workflow as JSON)."""
    name = worker or runtime.bundle.entry.get("worker")
    spec = runtime.bundle.worker(name) if isinstance(name, str) else None
    if spec is None or spec.output is None or not isinstance(value, dict):
        return value
    from pydantic import BaseModel

    output_class = runtime.output_class(spec)
    if not issubclass(output_class, BaseModel):
        return value
    try:
        return output_class.model_validate(value)
    except Exception:
        return value

"""How `exec --durable` and `resume` drive a durable run: the run options through `prepare_run`,
DBOS launched for the run's database, the output or the reason it stopped.

Exit codes as `exec`, plus 4: the run waits for an approval (`--detach-approvals`), recorded in
the database; `llm-do approve`/`deny` answer it and `llm-do resume` continues it.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import click

from .run_setup import EXIT_FAILED, EXIT_USAGE, ExecError, prepare_run, print_output, run_failure

EXIT_SUSPENDED = 4


def require_dbos() -> None:
    """DBOS comes with the `durable` extra; without it, one line saying how to get it."""
    try:
        import dbos  # noqa: F401
    except ImportError:
        raise ExecError("durable runs need DBOS, which is not installed: pip install 'llm-do[durable]'", EXIT_FAILED) from None


def db_url(given: str | None, base: Path) -> str:
    from llm_do.runtime.durable.db_url import DbUrlProblem, resolve_db_url

    try:
        return resolve_db_url(given or None, base)
    except DbUrlProblem as exc:
        raise ExecError(str(exc), EXIT_USAGE) from None


def exec_durable(bundle: Any, prompt: str | None, *, durable: str, detach_approvals: bool, input_json: str | None,
                 attach: tuple[str, ...], verbose: int, run_input: Any, worker: str | None = None, **options: Any) -> int:
    """`exec --durable`: start a new durable run of the bundle's entry, or of `worker` (`run_input`:
    exec's reading of PROMPT, --input-json and --attach)."""
    require_dbos()
    if worker is None and bundle.entry_function is not None:
        raise ExecError("the entry is a Python function: a durable run starts at a worker; give --worker NAME", EXIT_USAGE)
    if worker is not None and bundle.worker(worker) is None:
        raise ExecError(f"--worker {worker}: the bundle has no such worker", EXIT_USAGE)
    name = worker or bundle.entry["worker"]
    url = db_url(durable, bundle.path.resolve().parent)
    setup = prepare_run(bundle, verbose=verbose, **options)
    try:
        runtime = _runtime(bundle, setup, detach_approvals)
        data = run_input(runtime, prompt, input_json, attach, worker)
        run_id = str(uuid.uuid4())
        record = {"bundle": str(bundle.path.resolve()), "digest": runtime.digest, "worker": name,
                  "input": data, "detach": detach_approvals}
        click.echo(f"llm-do: run id: {run_id}", err=True)
        return drive(runtime, setup, url, run_id, record, verbose)
    finally:
        setup.close()


def resume_run(run_id: str, *, db: str | None, detach_approvals: bool, verbose: int, **options: Any) -> int:
    """`resume RUN_ID`: continue a run whose process died, on the bundle it started with."""
    require_dbos()
    from llm_do.runtime.bundle import BundleRefused, load_bundle

    url = db_url(db, Path.cwd())
    run = read_run(url, run_id)
    if run.state in ("done", "failed", "cancelled"):
        why = f": {run.error}" if run.error else ""
        raise ExecError(f"run '{run_id}' is {run.state}{why}; only a pending or waiting run can be resumed", EXIT_USAGE)
    try:
        bundle = load_bundle(Path(run.bundle))
    except BundleRefused as exc:
        raise ExecError(f"run '{run_id}': {exc}", 3) from None
    digest = bundle_digest(bundle)
    if digest != run.digest:
        raise ExecError(f"run '{run_id}' started on bundle {run.digest[:19]}, but {run.bundle} is now {digest[:19]}: "
                        "a run resumes only on the bundle it started with (rebuild nothing, or start a new run)", 3)
    setup = prepare_run(bundle, verbose=verbose, **options)
    try:
        runtime = _runtime(bundle, setup, detach_approvals or bool(run.record.get("detach")))
        click.echo(f"llm-do: run id: {run_id}", err=True)
        return drive(runtime, setup, url, run_id, None, verbose)
    finally:
        setup.close()


def read_run(url: str, run_id: str) -> Any:
    from llm_do.runtime.durable.records import RecordProblem, Records

    try:
        records = Records(url)
        try:
            return records.run(run_id)
        finally:
            records.close()
    except RecordProblem as exc:
        raise ExecError(str(exc), EXIT_USAGE) from None


def bundle_digest(bundle: Any) -> str:
    return str(bundle.text.get("digest"))


def _runtime(bundle: Any, setup: Any, detach_approvals: bool) -> Any:
    from llm_do.runtime.durable.dbos import DurableRuntime

    return DurableRuntime(bundle, setup.config, digest=bundle_digest(bundle), player=setup.player,
                          detach_approvals=detach_approvals)


def drive(runtime: Any, setup: Any, url: str, run_id: str, record: dict[str, Any] | None, verbose: int) -> int:
    """Launch DBOS for the run, start it (or let it recover), and end as `exec` does."""
    from llm_do.runtime.durable import dbos as durable
    from llm_do.runtime.durable.names import executor_id

    try:
        try:
            runtime.prepare()
            workflow = durable.register_run_workflow(runtime)
            durable.launch(url, executor=executor_id(run_id), digest=runtime.digest, verbose=verbose)
            outcome, value = asyncio.run(durable.start_or_resume(workflow, run_id, record, runtime))
        finally:
            durable.shutdown()
    except Exception as exc:
        raise run_failure(exc, verbose) from None
    if outcome == "suspended":
        click.echo(f"llm-do: run {run_id} waits for approval {value['id']}: {value['tool']} of worker '{value['worker']}'; "
                   f"answer with `llm-do approve {run_id} {value['id']}` or `llm-do deny {run_id} {value['id']}`, "
                   f"then `llm-do resume {run_id}`", err=True)
        return EXIT_SUSPENDED
    setup.check_script_used()
    if not setup.events_to_stdout:
        print_output(_output(runtime, value, (record or {}).get("worker")))
    return 0


def _output(runtime: Any, value: Any, worker: str | None) -> Any:
    """The run's output as its worker's output class again (it crossed the workflow as JSON)."""
    spec = runtime.bundle.worker(worker or runtime.bundle.entry.get("worker"))
    if spec is None or spec.output is None or not isinstance(value, dict):
        return value
    try:
        return runtime._class(spec.output.module, spec.output.qualname).model_validate(value)
    except Exception:
        return value

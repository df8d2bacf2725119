"""`llm-do runs`, `resume`, `approvals`, `approve`, `deny`, `revise`: durable runs recorded in a database.

All but `resume` only read or answer what is recorded (through a DBOS client): they never launch
DBOS, so they never recover another process's runs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..durable_run import db_url, require_dbos, resume_run
from ..errors import CliError, ExitCode
from ..lock_options import LockOptions, lock_options
from ..options import RunOptions, db_option, detach_option, run_options

if TYPE_CHECKING:
    from llm_do.runtime.durable.runs import Records


@contextmanager
def _records(db: str | None) -> Iterator[Records]:
    """The runs database, open for one command and closed after it; what it cannot do (no such
    run, an approval already answered) is a RecordProblem: one line and exit 2 (cli/main.py)."""
    require_dbos()
    from llm_do.runtime.durable.runs import Records

    records = Records(db_url(db))
    try:
        yield records
    finally:
        records.close()


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def _shown(path: str) -> str:
    """A bundle path relative to the current directory when it is below it."""
    try:
        return str(Path(path).relative_to(Path.cwd().resolve()))
    except ValueError:
        return path


@click.command(name="runs")
@db_option
def runs(db: str | None) -> int:
    """List the durable runs recorded in the database: id, bundle, state, started (UTC), what it waits on."""
    with _records(db) as records:
        found = records.runs()
        for refused in records.refused:
            click.echo(f"llm-do: {refused}", err=True)
    if not found:
        click.echo("no runs recorded")
        return ExitCode.OK
    rows = [["ID", "BUNDLE", "STATE", "STARTED", "WAITING ON"]]
    rows += [[r.id, _shown(r.bundle), r.state, r.started, r.waiting] for r in sorted(found, key=lambda r: (r.started, r.id))]
    click.echo(_table(rows))
    return ExitCode.OK


@click.command(name="resume")
@click.argument("run_id")
@db_option
@detach_option
@run_options
@lock_options
def resume(run_id: str, db: str | None, detach_approvals: bool, opts: RunOptions, lock: LockOptions) -> int:
    """Continue durable run RUN_ID whose process died, on the bundle recorded for it.

    Exit codes: 0 done, 1 failed, 2 usage, 3 bundle refused (changed since the run started, or
    not the build of the project beside it), 4 waiting for an approval.
    """
    return resume_run(run_id, opts, lock, db=db, detach_approvals=detach_approvals)


@click.command(name="approvals")
@click.argument("run_id", required=False)
@db_option
def approvals(run_id: str | None, db: str | None) -> int:
    """List the approvals durable runs wait for (all runs, or RUN_ID's)."""
    with _records(db) as records:
        ids = [records.run(run_id).id] if run_id else [r.id for r in records.runs() if r.state == "waiting"]
        for refused in records.refused:
            click.echo(f"llm-do: {refused}", err=True)
        pending = [p for i in ids for p in records.pending(i)]
    if not pending:
        click.echo("no approvals pending")
        return ExitCode.OK
    rows = [["RUN", "ID", "WORKER", "TOOL", "ARGUMENTS"]]
    rows += [[p.run, p.id, p.worker, p.tool, json.dumps(p.args, ensure_ascii=False, sort_keys=True)] for p in pending]
    click.echo(_table(rows))
    for p in pending:  # what the call does, as every approver is shown it
        if p.question:
            click.echo(f"\napproval {p.id} of run {p.run}: {p.question}")
    return ExitCode.OK


def _answer(run_id: str, approval_id: str, db: str | None, approved: bool, note: str | None = None,
            feedback: str | None = None) -> int:
    with _records(db) as records:
        answered = records.answer(run_id, approval_id, approved, note, feedback)
    from ..resume_options import resume_command

    verb = "approved" if approved else "asked for a revision of" if feedback else "denied"
    click.echo(f"llm-do: {verb} approval {answered.id} of run {run_id} ({answered.tool} of worker '{answered.worker}'); "
               f"a process still waiting continues now, otherwise run `{resume_command(run_id, db_url(db) if db else None)}`",
               err=True)
    return ExitCode.OK


@click.command(name="approve")
@click.argument("run_id")
@click.argument("approval_id")
@db_option
def approve(run_id: str, approval_id: str, db: str | None) -> int:
    """Approve the call durable run RUN_ID waits for (APPROVAL_ID from `llm-do approvals`)."""
    return _answer(run_id, approval_id, db, True)


@click.command(name="deny")
@click.argument("run_id")
@click.argument("approval_id")
@db_option
@click.option("--note", help="Why: the worker's model reads it with the denial.")
@click.option("--feedback", "old_feedback", hidden=True)
def deny(run_id: str, approval_id: str, db: str | None, note: str | None, old_feedback: str | None) -> int:
    """Deny the call durable run RUN_ID waits for; the tool does not run. To ask the model to change
    the call instead, use `llm-do revise`."""
    if old_feedback is not None:
        click.echo("llm-do: deny --feedback is now --note (the reason the model reads with the denial); "
                   "`llm-do revise` asks for a changed call", err=True)
        if note is not None:
            raise CliError("deny: give --note only (--feedback is its old name)", ExitCode.USAGE)
        note = old_feedback
    return _answer(run_id, approval_id, db, False, note=note)


@click.command(name="revise")
@click.argument("run_id")
@click.argument("approval_id")
@click.argument("feedback")
@db_option
def revise(run_id: str, approval_id: str, feedback: str, db: str | None) -> int:
    """Ask durable run RUN_ID's model to change the call it waits on: the tool does not run, and the
    model reads FEEDBACK as a revision request (as the terminal's `r`)."""
    if not feedback.strip():
        raise CliError("revise: FEEDBACK is empty; say what the model should change", ExitCode.USAGE)
    return _answer(run_id, approval_id, db, False, feedback=feedback)

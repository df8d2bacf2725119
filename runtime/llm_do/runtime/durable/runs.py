"""Reading and answering recorded runs from outside them (`runs`, `approvals`, `approve`, `deny`,
and `resume` before it launches): a `DBOSClient` talks to the system database only, so these
commands never launch DBOS and never recover another process's runs."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

if TYPE_CHECKING:
    from dbos._schemas.system_database import SystemSchema  # DBOS's private tables (RULES.md)

from llm_do.bundle.errors import InputProblem

from .names import APPROVAL_PREFIX, WORKFLOW_PREFIX
from .record_format import LlmDoJson, refuse_pickle
from .stored_rows import ForeignRowsRefused, check_run

STATES = {"SUCCESS": "done", "ERROR": "failed", "MAX_RECOVERY_ATTEMPTS_EXCEEDED": "failed", "CANCELLED": "cancelled",
          "PENDING": "pending", "ENQUEUED": "pending", "DELAYED": "pending"}


class RecordProblem(InputProblem):
    """The database or the run cannot answer (usage error: exit 2)."""


@dataclass(frozen=True)
class RunRecord:
    id: str
    bundle: str
    digest: str
    worker: str
    state: str
    """done, failed, cancelled, pending (running, or its process died: `resume` it), waiting (an approval)."""
    started: str
    waiting: str
    """What a waiting run waits on: `approval 1: write_file (main)`."""
    record: dict[str, Any]
    error: str | None = None


@dataclass(frozen=True)
class PendingApproval:
    run: str
    id: str
    worker: str
    tool: str
    args: dict[str, Any]
    question: str = ""
    """The description every approver gets (`ApprovalRequest.describe()`), as the run recorded it."""


class Records:
    """The runs recorded in one database. Read with plain SQL and `record_format`'s decoder, each
    run only once `stored_rows` found all its rows in llm-do's format: DBOS decodes nothing here
    (its client only sends answers)."""

    def __init__(self, db_url: str) -> None:
        from dbos import DBOSClient

        if db_url.lower().startswith("sqlite:///"):
            from pathlib import Path

            from .db_url import where_runs_are

            if not Path(db_url[len("sqlite:///"):]).is_file():
                raise RecordProblem(f"{db_url}: no runs recorded there (no such database); {where_runs_are(Path.cwd())}")
        refuse_pickle()
        try:
            self.client = DBOSClient(system_database_url=db_url, serializer=LlmDoJson(), retry_connection_errors=False)
        except Exception as exc:
            raise RecordProblem(f"{db_url}: cannot open the run database: {' '.join(str(exc).split())[:200]}") from None
        self.engine = self.client._sys_db.engine  # no public API for plain SQL (RULES.md)
        self.tables = self.client._sys_db.tables
        self.refused: list[str] = []
        """Why runs were left out of `runs()`: their rows are not llm-do's format."""

    def close(self) -> None:
        self.client.destroy()

    def _statuses(self, run_id: str | None = None) -> list[Any]:
        t = self.tables
        ws, wi, wo = t.workflow_status, t.workflow_input, t.workflow_output
        query = (sa.select(ws.c.workflow_uuid, ws.c.name, ws.c.status, ws.c.created_at,
                           sa.func.coalesce(wi.c.inputs, ws.c.inputs).label("inputs"),
                           sa.func.coalesce(wo.c.error, ws.c.error).label("error"))
                 .select_from(ws.outerjoin(wi, wi.c.workflow_uuid == ws.c.workflow_uuid)
                              .outerjoin(wo, wo.c.workflow_uuid == ws.c.workflow_uuid))
                 .where(ws.c.parent_workflow_id.is_(None), ws.c.name.startswith(WORKFLOW_PREFIX, autoescape=True)))
        if run_id is not None:
            query = query.where(ws.c.workflow_uuid == run_id)
        try:
            with self.engine.connect() as conn:
                return list(conn.execute(query).all())
        except Exception as exc:  # a database DBOS never set up
            raise RecordProblem(f"cannot read runs: {' '.join(str(exc).split())[:200]}") from None

    def _checked(self, run_id: str) -> None:
        try:
            check_run(self.engine, self.tables, run_id)
        except ForeignRowsRefused as exc:
            raise RecordProblem(str(exc)) from None

    def runs(self) -> list[RunRecord]:
        """Every run this database can show; a run in another format is left out, and why is in `refused`."""
        found = []
        for status in self._statuses():
            try:
                self._checked(status.workflow_uuid)
            except RecordProblem as exc:
                self.refused.append(str(exc))
                continue
            found.append(self._record(status))
        return found

    def run(self, run_id: str) -> RunRecord:
        found = self._statuses(run_id)
        if not found:
            raise RecordProblem(f"no run '{run_id}' in this database (see `llm-do runs`)")
        self._checked(run_id)
        return self._record(found[0])

    def _record(self, status: Any) -> RunRecord:
        inputs = _decoded(status.inputs)
        args = inputs.get("args") if isinstance(inputs, dict) else None
        record = dict(args[0]) if args and isinstance(args[0], dict) else {}
        pending = self.pending(status.workflow_uuid) if status.status == "PENDING" else []
        state = STATES.get(status.status, str(status.status).lower())
        waiting = ""
        if pending:
            state = "waiting"
            waiting = "; ".join(f"approval {p.id}: {p.tool} ({p.worker})" for p in pending)
        started = datetime.fromtimestamp((status.created_at or 0) / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")
        error = None
        if status.error is not None:
            error = " ".join(str(_decoded(status.error)).split())
        return RunRecord(status.workflow_uuid, record.get("bundle", "?"), record.get("digest", ""), record.get("worker", ""),
                         state, started, waiting, record, error)

    def events(self, run_id: str) -> dict[str, object]:
        """The run's events (its approval requests), decoded by `record_format` (call `_checked` first)."""
        table = self.tables.workflow_events
        with self.engine.connect() as conn:
            rows = conn.execute(sa.select(table.c.key, table.c.value).where(table.c.workflow_uuid == run_id)).all()
        return {row.key: _decoded(row.value) for row in rows}

    def answered(self, run_id: str, topic: str) -> bool:
        return message_sent(self.engine, self.tables, run_id, topic)

    def pending(self, run_id: str) -> list[PendingApproval]:
        """Approvals the run asked for that nobody has answered yet."""
        out = []
        for key, info in sorted(self.events(run_id).items(), key=lambda kv: _approval_number(kv[0])):
            if not key.startswith(APPROVAL_PREFIX) or not isinstance(info, dict) or info.get("state") != "pending":
                continue
            if self.answered(run_id, key):
                continue
            out.append(PendingApproval(run_id, str(info["id"]), info["worker"], info["tool"], info.get("args") or {},
                                       str(info.get("question") or "")))
        return out

    def answer(self, run_id: str, approval_id: str, approved: bool, note: str | None,
               feedback: str | None = None) -> PendingApproval:
        """Send the run its answer (denied with `feedback`: a revision request); it continues at once
        in a process still waiting, else on `resume`."""
        run = self.run(run_id)
        topic = f"{APPROVAL_PREFIX}{approval_id}"
        info = self.events(run_id).get(topic)
        if not isinstance(info, dict):
            raise RecordProblem(f"run '{run_id}' has no approval '{approval_id}' (see `llm-do approvals {run_id}`)")
        if info.get("state") != "pending" or self.answered(run_id, topic):
            raise RecordProblem(f"approval {approval_id} of run '{run_id}' is already answered")
        if run.state not in ("waiting", "pending"):
            raise RecordProblem(f"run '{run_id}' is {run.state}; it waits for nothing")
        self.client.send(run_id, {"approved": approved, "note": note, "feedback": feedback}, topic=topic, idempotency_key=f"{run_id}-{topic}")
        return PendingApproval(run_id, approval_id, info["worker"], info["tool"], info.get("args") or {})


def _decoded(text: str | None) -> object:
    """A value of a checked run; a row that is not JSON reads as nothing."""
    if text is None:
        return None
    try:
        return LlmDoJson().deserialize(text)
    except Exception:
        return None


def _approval_number(key: str) -> int:
    tail = key.removeprefix(APPROVAL_PREFIX)
    return int(tail) if tail.isdigit() else 0


def message_sent(engine: sa.Engine, tables: type[SystemSchema], run_id: str, topic: str) -> bool:
    """Whether a message on `topic` was sent to run `run_id` (received or not). DBOS has no public
    API for this: `engine` and `tables` are its private system database's (RULES.md)."""
    table = tables.notifications
    with engine.connect() as conn:
        row = conn.execute(sa.select(table.c.topic).where(table.c.destination_uuid == run_id, table.c.topic == topic)
                           .limit(1)).first()
    return row is not None

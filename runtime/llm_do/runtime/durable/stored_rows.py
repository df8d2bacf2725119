"""The one check every command that reads a run makes first (`runs`, `approvals`, `approve`,
`deny`, `resume`): every row the run has in the database is in llm-do's own format.

DBOS decodes a row by the row's own `serialization` column, whatever serializer is configured, so
a row marked `py_pickle` (recorded by an older llm-do, or forged by whoever can write the
database) would be unpickled, running code. This check reads that column with plain SQL, before
anything of the run is decoded, and refuses the run naming it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import sqlalchemy as sa

from llm_do.bundle.errors import Refused

from .record_format import FORMAT

if TYPE_CHECKING:
    from dbos._schemas.system_database import SystemSchema  # DBOS's private tables (RULES.md)

READABLE = (FORMAT, "portable_json")
"""llm-do's JSON, and DBOS's own portable JSON (`json.loads`; DBOS records a sleep's end so)."""

ROWS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("workflow_status", "workflow_uuid", ()),
    ("operation_outputs", "workflow_uuid", ("output", "error")),
    ("workflow_events", "workflow_uuid", ("value",)),
    ("workflow_events_history", "workflow_uuid", ("value",)),
    ("notifications", "destination_uuid", ("message",)),
    ("streams", "workflow_uuid", ("value",)),
)
"""Every table of DBOS's system database with a `serialization` column, the column naming the run,
and the columns DBOS decodes by it: a row holding none of them (a step that returned nothing,
recorded without a format) has nothing to decode. A run's status row is always checked: its
format decodes the input, output and error kept in `workflow_input`/`workflow_output` too."""


class ForeignRowsRefused(Refused):
    """A run holds rows llm-do does not read: refused before any is decoded (the commands say so, exit 2)."""


def foreign_rows(engine: sa.Engine, tables: type[SystemSchema], run_ids: list[str]) -> list[str]:
    """What rows of runs `run_ids` are in another format: `operation_outputs (py_pickle)` each."""
    found: list[str] = []
    with engine.connect() as conn:
        for name, column, payload in ROWS:
            table: sa.Table = getattr(tables, name)
            query = (sa.select(table.c.serialization).distinct()
                     .where(table.c[column].in_(run_ids))
                     .where(sa.or_(table.c.serialization.is_(None), table.c.serialization.not_in(READABLE))))
            if payload:
                query = query.where(sa.or_(*(table.c[c].is_not(None) for c in payload)))
            found += [f"{name} ({row[0] or 'no format'})" for row in conn.execute(query)]
    return found


def children(engine: sa.Engine, tables: type[SystemSchema], run_id: str) -> list[str]:
    """The run and the workflows it started (their rows are read with it)."""
    status = tables.workflow_status
    with engine.connect() as conn:
        rows = conn.execute(sa.select(status.c.workflow_uuid).where(status.c.parent_workflow_id == run_id)).all()
    return [run_id, *(row[0] for row in rows)]


def check_run(engine: sa.Engine, tables: type[SystemSchema], run_id: str) -> None:
    """Refuse run `run_id` when any of its rows (its children's included) is not llm-do's format."""
    foreign = foreign_rows(engine, tables, children(engine, tables, run_id))
    if foreign:
        raise ForeignRowsRefused(
            f"run '{run_id}' has rows llm-do does not read: {', '.join(foreign)}. llm-do records runs as JSON "
            f"({FORMAT}); these were recorded by an older llm-do or written by someone else, and decoding them could run "
            "code. The run is refused; start it again (a new run), and see who can write this database")

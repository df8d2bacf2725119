"""A durable budget kept in the run database: a durable batch's (`batch --durable DB_URL --max-cost
USD`), so that every process working the batch, on one machine or several sharing Postgres, spends
from one budget (two machines cannot overspend together), and a durable run's (`exec --durable
--max-cost USD`), so that a run killed and resumed spends from what it had already spent.

The same rule as `budget.LocalBudget` (read it first), with its state in two tables of llm-do's
own beside DBOS's, in the database DBOS records the batch or run in:

- `llm_do_budgets`, one row per budget (its key: a batch's id, `batch_queue.batch_prefix`, or a
  run's id): the limit, what is spent, what the requests under way hold, how many are under way
  (and alone), why it stopped;
- `llm_do_budget_holds`, one row per request under way: which process holds how much.

A request starts with one conditional `UPDATE` of its budget's row (spent plus held below the
limit, nothing alone under way), which the database applies atomically whichever process sends
it (Postgres re-checks the condition on the row it locks; SQLite writes one at a time), and the
row of its hold in the same transaction; its response is counted and its hold removed in another.
Amounts are whole nano-dollars (exact on both databases), rounded up.

A process that dies leaves its holds: the next process started on that machine for the batch
(which takes its unfinished inputs back, `batch_queue.work`) or the run (`resume`) counts each at
its worst case (the provider may have billed the request) and removes it. A rerun of the batch,
or a resumed run, spends from the same row (with the limit it is given).
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Callable
from decimal import ROUND_CEILING, Decimal
from typing import Any

import sqlalchemy as sa

from llm_do.pricing.money import usd

from ..budget import WAIT_SECONDS, BudgetSpent, Hold, counted_cost

NANO = Decimal(1_000_000_000)

METADATA = sa.MetaData()
BUDGETS = sa.Table(
    "llm_do_budgets", METADATA,
    sa.Column("batch", sa.String(200), primary_key=True),
    sa.Column("lim", sa.BigInteger, nullable=False),
    sa.Column("spent", sa.BigInteger, nullable=False),
    sa.Column("held", sa.BigInteger, nullable=False),
    sa.Column("under_way", sa.Integer, nullable=False),
    sa.Column("alone", sa.Integer, nullable=False),
    sa.Column("stopped", sa.Text, nullable=True),
)
HOLDS = sa.Table(
    "llm_do_budget_holds", METADATA,
    sa.Column("id", sa.String(36), primary_key=True),
    sa.Column("batch", sa.String(200), nullable=False),
    sa.Column("executor", sa.String(300), nullable=False),
    sa.Column("amount", sa.BigInteger, nullable=False),
    sa.Column("alone", sa.Integer, nullable=False),
)


def nano(amount: Decimal) -> int:
    return int((amount * NANO).to_integral_value(rounding=ROUND_CEILING))


def dollars(amount: int) -> Decimal:
    return Decimal(amount) / NANO


def _create_tables(engine: sa.Engine) -> None:
    """The two tables, unless there (processes starting together may race: the loser finds them made)."""
    for attempt in range(3):
        try:
            with engine.begin() as conn:
                for table in METADATA.sorted_tables:
                    conn.execute(sa.schema.CreateTable(table, if_not_exists=True))
            return
        except sa.exc.DBAPIError:
            if attempt == 2:
                raise


def engine_for(db_url: str) -> sa.Engine:
    """An engine on the run database: Postgres through psycopg (as DBOS reaches it), or SQLite."""
    url = sa.make_url(db_url)
    if url.get_backend_name() in ("postgresql", "postgres"):
        return sa.create_engine(url.set(drivername="postgresql+psycopg"), pool_pre_ping=True)
    return sa.create_engine(url, connect_args={"timeout": 30})


class SharedBudget:
    """The budget keyed `batch` (a batch's id or a run's) in the database `engine` (`engine_for`),
    as this process spends it; `spent_by` says whose requests spent it when it is spent."""

    def __init__(self, engine: sa.Engine, batch: str, limit: Decimal, *, executor: str, accept_unpriced: bool = False,
                 on_note: Callable[[str], None] | None = None, dead: Callable[[list[str]], list[str]] | None = None,
                 spent_by: str = "the batch's runs") -> None:
        self.engine = engine
        self.spent_by = spent_by
        self.batch = batch
        self.limit = limit
        self.executor = executor
        self.accept_unpriced = accept_unpriced
        self.on_note = on_note
        self._dead = dead
        """Which of these executors' processes are gone (`batch_queue.dead_local_executors`)."""
        self._ready = False
        self._ready_lock = threading.Lock()

    def _ensure(self) -> None:
        """The tables and the batch's row, made on first use (after DBOS launched, which makes a
        Postgres database that is not there yet), with this process's limit; holds of dead
        processes released."""
        if self._ready:
            return
        with self._ready_lock:
            if self._ready:
                return
            _create_tables(self.engine)
            limit = nano(self.limit)
            with self.engine.begin() as conn:
                found = conn.execute(sa.update(BUDGETS).where(BUDGETS.c.batch == self.batch).values(lim=limit)).rowcount
                if not found:
                    try:
                        with conn.begin_nested():
                            conn.execute(sa.insert(BUDGETS).values(batch=self.batch, lim=limit, spent=0, held=0, under_way=0, alone=0))
                    except sa.exc.IntegrityError:  # another process made it first: take its row, with this limit
                        conn.execute(sa.update(BUDGETS).where(BUDGETS.c.batch == self.batch).values(lim=limit))
            self._ready = True
        self.release_dead()

    def _row(self) -> Any:
        self._ensure()
        with self.engine.connect() as conn:
            return conn.execute(sa.select(BUDGETS).where(BUDGETS.c.batch == self.batch)).one()

    def spent(self) -> Decimal:
        return dollars(self._row().spent)

    def exhausted(self) -> str | None:
        row = self._row()
        if row.stopped is not None:
            return str(row.stopped)
        if row.spent >= row.lim:
            return f"the budget of {usd(dollars(row.lim))} is spent ({usd(dollars(row.spent))})"
        return None

    async def reserve(self, worst: Decimal | None, worker: str, model: str) -> Hold:
        amount = nano(worst) if worst is not None else 0
        alone = 1 if worst is None else 0
        c = BUDGETS.c
        room = (c.under_way == 0) if alone else (c.spent + c.held < c.lim)
        self._ensure()
        while True:
            hold_id = str(uuid.uuid4())
            with self.engine.begin() as conn:
                taken = conn.execute(
                    sa.update(BUDGETS)
                    .where(c.batch == self.batch, c.stopped.is_(None), c.spent < c.lim, c.alone == 0, room)
                    .values(held=c.held + amount, under_way=c.under_way + 1, alone=c.alone + alone)).rowcount
                if taken:
                    conn.execute(sa.insert(HOLDS).values(id=hold_id, batch=self.batch, executor=self.executor, amount=amount,
                                                         alone=alone))
            if taken:
                return Hold(worst, worker, model, hold_id)
            row = self._row()
            if row.stopped is not None:
                raise BudgetSpent(row.stopped)
            if row.spent >= row.lim and row.under_way == 0:
                raise BudgetSpent(f"the budget of {usd(dollars(row.lim))} is spent ({usd(dollars(row.spent))}) by "
                                  f"{self.spent_by}: this run stopped before a request of '{worker}'")
            if row.under_way:  # requests under way hold the rest: wait for them (a dead process's are released)
                self.release_dead()
            await asyncio.sleep(WAIT_SECONDS)

    def settle(self, hold: Hold, cost: Decimal | None, *, failed: bool = False) -> None:
        counted, note = counted_cost(hold, cost, failed, self.accept_unpriced)
        stop = note if note is not None and not self.accept_unpriced else None
        with self.engine.begin() as conn:
            removed = conn.execute(sa.delete(HOLDS).where(HOLDS.c.id == hold.id)).rowcount
            if removed:  # else: released as a dead process's, at its worst case already
                conn.execute(self._settled(hold, counted, stop))
        if note is not None and self.accept_unpriced and self.on_note is not None:
            self.on_note(note)

    def _settled(self, hold: Hold, counted: Decimal, stop: str | None) -> Any:
        c = BUDGETS.c
        amount = nano(hold.worst) if hold.worst is not None else 0
        values: dict[str, Any] = {"held": c.held - amount, "under_way": c.under_way - 1,
                                  "alone": c.alone - (1 if hold.worst is None else 0), "spent": c.spent + nano(counted)}
        if stop is not None:
            values["stopped"] = sa.func.coalesce(c.stopped, stop)
        return sa.update(BUDGETS).where(c.batch == self.batch).values(**values)

    def release_dead(self) -> None:
        """Count the holds of this budget's dead processes (on this machine) at their worst case
        and remove them."""
        if self._dead is None:
            return
        with self.engine.connect() as conn:
            executors = [r.executor for r in conn.execute(sa.select(HOLDS.c.executor).where(HOLDS.c.batch == self.batch).distinct())]
        for executor in self._dead(executors):
            with self.engine.begin() as conn:
                for hold in conn.execute(sa.select(HOLDS).where(HOLDS.c.batch == self.batch, HOLDS.c.executor == executor)).all():
                    if conn.execute(sa.delete(HOLDS).where(HOLDS.c.id == hold.id)).rowcount:
                        c = BUDGETS.c
                        conn.execute(sa.update(BUDGETS).where(c.batch == self.batch).values(
                            held=c.held - hold.amount, under_way=c.under_way - 1, alone=c.alone - hold.alone,
                            spent=c.spent + hold.amount))

    def close(self) -> None:
        self.engine.dispose()

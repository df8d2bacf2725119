"""`durable.budget_ledger.SharedBudget` in this process on SQLite, fast (the mutation bench runs
this file for every mutant of the ledger; test_budget_ledger.py checks the same rules across
processes and on Postgres): budgets sharing one row spend it and never more than one request's
worst case past it, a dead process's holds count at their worst and are released, a request with
no worst case runs alone, an unpriced response stops every process sharing the budget, and a
budget opened again takes its new limit."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("sqlalchemy")

from llm_do.runtime.budget import BudgetSpent  # noqa: E402
from llm_do.runtime.durable import budget_ledger  # noqa: E402
from llm_do.runtime.durable.budget_ledger import SharedBudget, engine_for  # noqa: E402
from tests.support.budgets import WITHIN, spend_until_stopped, unpriced_runs_alone  # noqa: E402

D = Decimal
WORST = D("0.10")
LIMIT = D("1.00")


@pytest.fixture(autouse=True)
def short_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """A waiting request looks again after a millisecond (the rule is the same)."""
    monkeypatch.setattr(budget_ledger, "WAIT_SECONDS", 0.001)


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Callable[..., SharedBudget]]:
    """`ledger(executor, limit=LIMIT, batch="batch", **options)`: a process's view of a budget in
    one SQLite database."""
    opened: list[SharedBudget] = []

    def _open(executor: str, limit: D = LIMIT, batch: str = "batch", **options: Any) -> SharedBudget:
        budget = SharedBudget(engine_for(f"sqlite:///{tmp_path / 'runs.sqlite'}"), batch, limit, executor=executor, **options)
        opened.append(budget)
        return budget

    yield _open
    for budget in opened:
        budget.close()


def run(awaitable: Any) -> Any:
    async def within() -> Any:
        return await asyncio.wait_for(awaitable, WITHIN)

    return asyncio.run(within())


async def spend_together(sharers: list[SharedBudget], seed: int) -> D:
    """Three requesters in each sharer until the budget stops them; what their responses cost."""
    rnd = random.Random(seed)
    spent: list[D] = []

    await asyncio.gather(*(spend_until_stopped(budget, rnd, spent, worst=WORST, pause=0.002)
                           for budget in sharers for _ in range(3)))
    return sum(spent, D(0))


def test_processes_sharing_a_budget_spend_it_and_never_more_than_one_request_past_it(ledger) -> None:
    for seed in range(3):
        total = asyncio.run(spend_together([ledger(f"spender-{n}", batch=f"batch-{seed}") for n in range(3)], seed))
        assert ledger("check", batch=f"batch-{seed}").spent() == total  # each response counted once
        assert LIMIT <= total <= LIMIT + WORST, (seed, total)


def test_a_dead_process_s_holds_count_at_their_worst_and_are_released(ledger) -> None:
    died = ledger("gone", D("0.35"))
    late = run(died.reserve(WORST, "w", "m"))
    run(died.reserve(WORST, "w", "m"))  # and the process died before either response came
    asked: list[list[str]] = []

    def dead(executors: list[str]) -> list[str]:
        asked.append(sorted(executors))
        return [e for e in executors if e == "gone"]

    survivor = ledger("alive", D("0.35"), dead=dead)
    assert survivor.spent() == 2 * WORST  # released on first use, counted at their worst case
    assert asked == [["gone"]]
    died.settle(late, D("0.01"))  # a response after all, once released: counted once, at the worst case
    assert survivor.spent() == 2 * WORST
    # nothing under way, nothing alone and nothing held is left of them
    survivor.settle(run(survivor.reserve(None, "w", "free")), None, failed=True)
    survivor.settle(run(survivor.reserve(WORST, "w", "m")), D("0.05"))
    assert survivor.spent() == D("0.25")


def test_a_request_waiting_for_a_process_that_died_meanwhile_goes_on(ledger) -> None:
    gone: list[str] = []
    died = ledger("gone")
    run(died.reserve(None, "w", "free"))  # it runs alone, and dies
    survivor = ledger("alive", dead=lambda executors: [e for e in executors if e in gone])
    assert survivor.spent() == 0  # alive at first use

    async def wait_then_die() -> None:
        waiting = asyncio.create_task(survivor.reserve(WORST, "w", "m"))
        await asyncio.sleep(0.05)
        assert not waiting.done()
        gone.append("gone")
        survivor.settle(await asyncio.wait_for(waiting, WITHIN), D("0.05"))

    asyncio.run(wait_then_die())
    assert survivor.spent() == D("0.05")


def test_a_budget_held_by_a_dead_process_stops_the_request_waiting_for_it(ledger) -> None:
    gone: list[str] = []
    run(ledger("gone", D("0.10")).reserve(WORST, "w", "m"))
    survivor = ledger("alive", D("0.10"), dead=lambda executors: [e for e in executors if e in gone])
    assert survivor.spent() == 0

    async def wait_then_die() -> None:
        waiting = asyncio.create_task(survivor.reserve(WORST, "w", "m"))
        await asyncio.sleep(0.05)
        assert not waiting.done()  # the other process may still spend less than its worst
        gone.append("gone")
        with pytest.raises(BudgetSpent, match=r"the budget of \$0.10 is spent \(\$0.10\)"):
            await asyncio.wait_for(waiting, WITHIN)

    asyncio.run(wait_then_die())


def test_a_request_with_no_worst_case_runs_alone_across_processes(ledger) -> None:
    one, other = ledger("one"), ledger("other")

    async def main() -> None:
        await unpriced_runs_alone(one, other, worst=WORST, pause=0.05, unpriced_failed=True)

    asyncio.run(main())
    assert one.spent() == D("0.08")


def test_a_request_that_got_no_response_counts_its_worst_case_and_the_runs_go_on(ledger) -> None:
    budget = ledger("one")
    budget.settle(run(budget.reserve(WORST, "main", "priced")), None, failed=True)
    budget.settle(run(budget.reserve(WORST, "main", "priced")), D("0.02"))
    assert budget.spent() == D("0.12") and budget.exhausted() is None


def test_an_unpriced_response_stops_every_process_sharing_the_budget_unless_accepted(ledger) -> None:
    one, other = ledger("one"), ledger("other")
    first, second = run(one.reserve(WORST, "helper", "ollama:a")), run(other.reserve(WORST, "main", "ollama:b"))
    one.settle(first, None)
    other.settle(second, None)
    note = ("a response of 'ollama:a' (worker 'helper') could not be priced (counted at its worst case, $0.10): the run "
            "stopped before its next request; pass --accept-unpriced (or cost.unpriced: accept) to go on")
    with pytest.raises(BudgetSpent) as stopped:
        run(other.reserve(WORST, "main", "ollama:a"))
    assert str(stopped.value) == note  # the first response that could not be priced
    assert one.exhausted() == note and one.spent() == 2 * WORST

    notes: list[str] = []
    accepting = ledger("accepting", batch="accepted", accept_unpriced=True, on_note=notes.append)
    accepting.settle(run(accepting.reserve(WORST, "helper", "ollama:a")), None)
    accepting.settle(run(accepting.reserve(None, "main", "ollama:free")), None)
    accepting.settle(run(accepting.reserve(WORST, "helper", "ollama:a")), D("0.01"))
    assert notes == [
        "a response of 'ollama:a' (worker 'helper') could not be priced; counted at its worst case, $0.10 (accepted)",
        "a response of 'ollama:free' (worker 'main') could not be priced; counted as nothing: it has no worst case (accepted)",
    ]
    assert accepting.spent() == D("0.11") and accepting.exhausted() is None


def test_a_spent_budget_stops_the_next_request_saying_by_whom(ledger) -> None:
    budget = ledger("one", D("0.15"), spent_by="the batch's runs")
    budget.settle(run(budget.reserve(WORST, "main", "priced")), D("0.09"))
    budget.settle(run(budget.reserve(WORST, "main", "priced")), D("0.07"))  # it started at $0.09
    with pytest.raises(BudgetSpent) as stopped:
        run(budget.reserve(WORST, "helper", "priced"))
    assert str(stopped.value) == ("the budget of $0.15 is spent ($0.16) by the batch's runs: this run stopped before a "
                                  "request of 'helper'")
    assert budget.exhausted() == "the budget of $0.15 is spent ($0.16)"


def test_a_budget_opened_again_spends_on_from_what_it_spent_with_its_new_limit(ledger) -> None:
    """A resumed run (or a rerun batch) with a larger --max-cost goes on."""
    first = ledger("first", D("0.15"))
    first.settle(run(first.reserve(WORST, "main", "priced")), D("0.16"))
    assert first.exhausted() is not None
    again = ledger("again", D("0.30"))
    assert again.exhausted() is None and again.spent() == D("0.16")
    again.settle(run(again.reserve(WORST, "main", "priced")), D("0.05"))
    assert first.spent() == D("0.21") and first.exhausted() is None  # one limit: the latest
    other = ledger("other", D("0.15"), batch="another")  # another budget in the same database
    assert other.spent() == 0 and other.exhausted() is None


def test_amounts_are_counted_in_whole_nano_dollars_rounded_up(ledger) -> None:
    budget = ledger("one")
    budget.settle(run(budget.reserve(WORST, "main", "priced")), D("0.0000000011"))
    assert budget.spent() == D("0.000000002")


def test_a_postgres_url_is_reached_through_psycopg() -> None:
    for url in ("postgresql://u@localhost/runs", "postgres://u@localhost/runs", "postgresql+psycopg2://u@localhost/runs"):
        engine = engine_for(url)
        assert engine.url.drivername == "postgresql+psycopg", url
        engine.dispose()


def test_a_database_the_budget_cannot_write_says_so(tmp_path: Path) -> None:
    import sqlite3

    import sqlalchemy as sa

    sqlite3.connect(tmp_path / "runs.sqlite").close()
    budget = SharedBudget(engine_for(f"sqlite:///file:{tmp_path / 'runs.sqlite'}?mode=ro&uri=true"), "batch", LIMIT,
                          executor="one")
    with pytest.raises(sa.exc.OperationalError, match="readonly database"):  # not "no such table"
        budget.spent()
    budget.close()


def test_a_request_that_found_the_rest_held_goes_on_when_it_is_freed_just_then(ledger, monkeypatch) -> None:
    """The holder settles between this request's attempt and its look at why: it is not stopped
    (the budget is not spent), it tries again."""
    holder, budget = ledger("holder"), ledger("one")
    held = run(holder.reserve(LIMIT, "main", "priced"))
    looked = budget._row

    def freed_then_look() -> Any:
        monkeypatch.setattr(budget, "_row", looked)  # once
        holder.settle(held, D("0.05"))
        return looked()

    monkeypatch.setattr(budget, "_row", freed_then_look)
    budget.settle(run(budget.reserve(WORST, "main", "priced")), D("0.05"))
    assert budget.spent() == D("0.10")


def test_processes_making_the_budget_s_row_at_once_share_one_with_the_latest_limit(ledger) -> None:
    """Another process's row lands between this one's look for it and its own insert (Postgres
    allows that; SQLite writes one at a time, so the test puts it there): this one takes that row,
    with its own limit, and no second row is made."""
    import sqlalchemy as sa

    ledger("other", batch="another").spent()  # the tables
    budget = ledger("one", D("0.30"))
    raced: list[str] = []

    def other_first(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.startswith("SAVEPOINT") and not raced:
            raced.append(statement)
            cursor.execute("INSERT INTO llm_do_budgets (batch, lim, spent, held, under_way, alone) "
                           "VALUES ('batch', 500000000, 100000000, 0, 0, 0)")

    sa.event.listen(budget.engine, "before_cursor_execute", other_first)
    assert budget.spent() == D("0.10") and raced
    budget.settle(run(budget.reserve(WORST, "main", "priced")), D("0.25"))
    assert budget.exhausted() == "the budget of $0.30 is spent ($0.35)"

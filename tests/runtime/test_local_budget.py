"""`LocalBudget` alone, in process and fast (the mutation bench runs this file for every mutant of
`runtime/budget.py`): the promise under many requests at once, with the waiting requests looking
again at once instead of every `WAIT_SECONDS`; test_budget.py holds the budget in runs."""

from __future__ import annotations

import asyncio
import random
from decimal import Decimal

import pytest

from llm_do.runtime import budget as budget_module
from llm_do.runtime.budget import BudgetSpent, LocalBudget, spent_line
from tests.support.budgets import unpriced_runs_alone

D = Decimal


@pytest.fixture(autouse=True)
def no_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """A waiting request looks again at the next turn of the loop (the rule is the same)."""
    monkeypatch.setattr(budget_module, "WAIT_SECONDS", 0)


def test_the_promise_holds_under_many_requests_at_once() -> None:
    """40 requests at once, each costing up to its worst case: never more than the budget plus
    the largest worst case is spent."""

    async def fuzz(seed: int) -> tuple[D, D]:
        rnd = random.Random(seed)
        budget = LocalBudget(D(rnd.randint(1, 30)))
        worsts = [D(rnd.randint(1, 5)) for _ in range(40)]

        async def request(worst: D) -> None:
            try:
                hold = await budget.reserve(worst, "w", "m")
            except BudgetSpent:
                return
            await asyncio.sleep(rnd.random() / 1000)
            budget.settle(hold, worst * rnd.choice([D(1), D(rnd.random())]))

        await asyncio.gather(*(request(w) for w in worsts))
        return budget.spent(), budget.limit + max(worsts)

    for seed in range(200):
        spent, allowed = asyncio.run(fuzz(seed))
        assert spent <= allowed, seed


WORST = D("0.10")


def test_a_request_with_no_worst_case_runs_alone_and_the_others_go_on_after_it() -> None:
    """A model with no price, accepted: its request waits for those under way, nothing starts
    while it runs, and once it is done the requests go on (priced or not)."""

    async def main() -> None:
        budget = LocalBudget(D(1), accept_unpriced=True)
        await unpriced_runs_alone(budget, budget, worst=WORST, pause=0.01, unpriced_failed=False)
        assert budget.spent() == D("0.08")

    asyncio.run(main())


def test_a_request_that_got_no_response_counts_its_worst_case_and_the_runs_go_on() -> None:
    """The provider may have billed it; no response is no unpriced response, so nothing stops."""

    async def main() -> None:
        budget = LocalBudget(D(1))
        budget.settle(await budget.reserve(WORST, "main", "priced"), None, failed=True)
        assert budget.spent() == WORST
        budget.settle(await budget.reserve(WORST, "main", "priced"), D("0.02"))
        assert budget.spent() == D("0.12")
        accepting = LocalBudget(D(1), accept_unpriced=True)
        accepting.settle(await accepting.reserve(None, "helper", "free"), None, failed=True)
        assert accepting.spent() == 0  # it has no worst case

    asyncio.run(main())


def test_an_unpriced_response_stops_the_runs_saying_how_to_go_on_unless_accepted() -> None:
    async def main() -> None:
        budget = LocalBudget(D(1))
        first, second = await budget.reserve(WORST, "helper", "ollama:a"), await budget.reserve(WORST, "main", "ollama:b")
        budget.settle(first, None)
        budget.settle(second, None)
        with pytest.raises(BudgetSpent) as stopped:
            await budget.reserve(WORST, "main", "ollama:a")
        assert str(stopped.value) == (  # the first response that could not be priced
            "a response of 'ollama:a' (worker 'helper') could not be priced (counted at its worst case, $0.10): the run "
            "stopped before its next request; pass --accept-unpriced (or cost.unpriced: accept) to go on")
        assert budget.spent() == 2 * WORST

        notes: list[str] = []
        accepting = LocalBudget(D(1), accept_unpriced=True, on_note=notes.append)
        accepting.settle(await accepting.reserve(WORST, "helper", "ollama:a"), None)
        accepting.settle(await accepting.reserve(None, "main", "ollama:free"), None)
        accepting.settle(await accepting.reserve(WORST, "helper", "ollama:a"), D("0.01"))
        assert notes == [
            "a response of 'ollama:a' (worker 'helper') could not be priced; counted at its worst case, $0.10 (accepted)",
            "a response of 'ollama:free' (worker 'main') could not be priced; counted as nothing: it has no worst case (accepted)",
        ]
        assert accepting.spent() == D("0.11")

    asyncio.run(main())


def test_a_spent_budget_stops_the_next_request_saying_so() -> None:
    async def main() -> None:
        budget = LocalBudget(D("0.15"))
        budget.settle(await budget.reserve(WORST, "main", "priced"), D("0.09"))
        budget.settle(await budget.reserve(WORST, "main", "priced"), D("0.07"))  # it started at $0.09
        with pytest.raises(BudgetSpent) as stopped:
            await budget.reserve(WORST, "helper", "priced")
        assert str(stopped.value) == "the budget of $0.15 is spent ($0.16): the run stopped before a request of 'helper'"

    asyncio.run(main())


def test_the_summary_says_what_was_spent_of_the_budget_and_what_is_left() -> None:
    """Spent rounded up, left rounded down: never less spent nor more left than is so."""
    assert spent_line(D(5), D("0.42")) == "spent $0.42 of $5.00 ($4.58 left)"
    assert spent_line(D(1), D("0.123")) == "spent $0.13 of $1.00 ($0.87 left)"
    assert spent_line(D(1), D("1.05")) == "spent $1.05 of $1.00 ($0.00 left)"

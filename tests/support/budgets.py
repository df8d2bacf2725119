"""What every budget must do, as scenarios the local budget (tests/runtime/test_local_budget.py)
and the shared ledger (test_shared_budget.py in this process, test_budget_ledger.py across
processes, whose spenders import this module) both play."""

from __future__ import annotations

import asyncio
import random
from decimal import Decimal

from llm_do.runtime.budget import Budget, BudgetSpent

WITHIN = 10
"""Seconds a request that should start may take (it waits forever when the rule is broken)."""


async def spend_until_stopped(budget: Budget, rnd: random.Random, spent: list[Decimal], *,
                              worst: Decimal, pause: float) -> None:
    """One requester: a request of `worst` at a time, answered after up to `pause` s at a cost of
    at most `worst` (often all of it), until the budget stops it; each cost appended to `spent`."""
    while True:
        try:
            hold = await budget.reserve(worst, "w", "m")
        except BudgetSpent:
            return
        await asyncio.sleep(rnd.random() * pause)
        cost = Decimal(rnd.choice([100, rnd.randint(0, 100)])) * worst / 100
        budget.settle(hold, cost)
        spent.append(cost)


async def unpriced_runs_alone(first: Budget, second: Budget, *, worst: Decimal, pause: float,
                              unpriced_failed: bool) -> None:
    """A request with no worst case (`second`'s) waits for the priced one under way (`first`'s),
    nothing starts while it runs, and once it is done the requests go on, priced or not; the two
    priced requests cost 0.04 each. `unpriced_failed`: the unpriced requests got no response."""
    priced = await first.reserve(worst, "main", "priced")
    alone = asyncio.create_task(second.reserve(None, "helper", "free"))
    await asyncio.sleep(pause)
    assert not alone.done()  # a priced request is under way
    first.settle(priced, Decimal("0.04"))
    free = await asyncio.wait_for(alone, WITHIN)
    waiting = asyncio.create_task(first.reserve(worst, "main", "priced"))
    await asyncio.sleep(pause)
    assert not waiting.done()  # the unpriced one runs alone
    second.settle(free, None, failed=unpriced_failed)
    first.settle(await asyncio.wait_for(waiting, WITHIN), Decimal("0.04"))
    second.settle(await asyncio.wait_for(second.reserve(None, "helper", "free"), WITHIN), None, failed=unpriced_failed)

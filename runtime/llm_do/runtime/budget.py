"""A budget in dollars (`--max-cost`): what the runs of one command may spend together, and the
promise it keeps (spec/runtime.md, "Budgets"): **the runs never spend more than the budget plus
the worst case of one request.**

How: a request may start only while what is spent plus the worst cases of the requests under way
is below the budget; it holds its worst case (`ceiling.worst_request`) until its response is
priced, and then counts what it cost. So when the last request starts, everything before it is
counted at most at its worst, and only that last request can take the total past the budget, by at
most its own worst case. A request that cannot start because others hold the rest waits for them
to finish (they may cost less than their worst); when nothing is under way and the budget is
spent, the run stops before the request (`BudgetSpent`).

What cannot be priced never counts as free: a model with no known price is refused before its
first request, and a response that cannot be priced (the provider left its usage out, the model is
priced by nothing) is counted at its worst case and stops the runs before their next request,
unless the project (`cost.unpriced: accept`) or the command (`--accept-unpriced`) accepts it: then
it is counted at its worst case (nothing when it has none) with a note, and a model with no price
runs with nothing else under way.

`LocalBudget` serves one process (its runs may run in threads); `durable.budget_ledger` keeps one
in the run database, for durable batches on several machines and durable runs across resumes.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol

from llm_do.pricing.money import usd, usd_left

from .errors import RunFailed

WAIT_SECONDS = 0.05
"""How often a request waiting for others to finish looks again."""
ZERO = Decimal(0)


class BudgetSpent(RunFailed):
    """The budget allows no further request: spent, or a response could not be priced."""


@dataclass
class Hold:
    """What a request under way holds of a budget."""

    worst: Decimal | None
    """Its worst case; None: it has none (a model with no price, accepted): it runs alone."""
    worker: str
    model: str
    id: str = ""
    """Where a shared budget keeps it (`durable.budget_ledger`)."""


class Budget(Protocol):
    limit: Decimal
    accept_unpriced: bool
    on_note: Callable[[str], None] | None

    async def reserve(self, worst: Decimal | None, worker: str, model: str) -> Hold: ...

    def settle(self, hold: Hold, cost: Decimal | None, *, failed: bool = False) -> None:
        """Count what the request cost (None: it could not be priced; `failed`: it got no
        response, and the provider may have billed it)."""
        ...

    def spent(self) -> Decimal: ...


def unpriced_model(worker: str, model: str) -> str:
    return (f"worker '{worker}' runs on '{model}', which has no known price, so --max-cost cannot count what it costs: "
            "declare its price in project.json (cost.prices), or accept it (--accept-unpriced, cost.unpriced: accept)")


def spent_line(limit: Decimal, spent: Decimal) -> str:
    """`spent $0.42 of $5.00 ($4.58 left)`."""
    return f"spent {usd(spent)} of {usd(limit)} ({usd_left(limit - spent)} left)"


class LocalBudget:
    """A budget kept in this process, shared by its runs (and their threads)."""

    def __init__(self, limit: Decimal, *, accept_unpriced: bool = False, on_note: Callable[[str], None] | None = None) -> None:
        self.limit = limit
        self.accept_unpriced = accept_unpriced
        self.on_note = on_note
        self._lock = threading.Lock()
        self._spent = ZERO
        self._held = ZERO
        self._under_way = 0
        self._alone = 0
        self._stopped: str | None = None

    def spent(self) -> Decimal:
        return self._spent

    async def reserve(self, worst: Decimal | None, worker: str, model: str) -> Hold:
        while True:
            with self._lock:
                if self._stopped is not None:
                    raise BudgetSpent(self._stopped)
                if self._spent >= self.limit:
                    raise BudgetSpent(f"the budget of {usd(self.limit)} is spent ({usd(self._spent)}): the run stopped "
                                      f"before a request of '{worker}'")
                if self._alone == 0 and (self._under_way == 0 if worst is None else self._spent + self._held < self.limit):
                    self._under_way += 1
                    if worst is None:
                        self._alone += 1
                    else:
                        self._held += worst
                    return Hold(worst, worker, model)
            await asyncio.sleep(WAIT_SECONDS)

    def settle(self, hold: Hold, cost: Decimal | None, *, failed: bool = False) -> None:
        counted, note = counted_cost(hold, cost, failed, self.accept_unpriced)
        with self._lock:
            self._under_way -= 1
            if hold.worst is None:
                self._alone -= 1
            else:
                self._held -= hold.worst
            self._spent += counted
            if note is not None and not self.accept_unpriced and self._stopped is None:
                self._stopped = note
        if note is not None and self.accept_unpriced and self.on_note is not None:
            self.on_note(note)


def counted_cost(hold: Hold, cost: Decimal | None, failed: bool, accept_unpriced: bool) -> tuple[Decimal, str | None]:
    """What a settled request counts, and what to say of it: its cost; else (no response, or one
    that could not be priced) its worst case, or nothing when it has none."""
    if cost is not None:
        return cost, None
    counted = hold.worst if hold.worst is not None else ZERO
    if failed:
        return counted, None
    at = f"counted at its worst case, {usd(counted)}" if hold.worst is not None else "counted as nothing: it has no worst case"
    if accept_unpriced:
        return counted, f"a response of '{hold.model}' (worker '{hold.worker}') could not be priced; {at} (accepted)"
    return counted, (f"a response of '{hold.model}' (worker '{hold.worker}') could not be priced ({at}): the run stopped "
                     "before its next request; pass --accept-unpriced (or cost.unpriced: accept) to go on")

"""A durable batch's budget in the run database (`durable.budget_ledger`): processes that share it,
on SQLite or on Postgres (machines sharing one server), never spend more together than the budget
plus one request's worst case; a dead process's holds are counted and released; a durable batch
with `--max-cost` spends from it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap
from decimal import Decimal
from pathlib import Path

import pytest

from tests.support.cli import run_cli, worker
from tests.support.postgres import POSTGRES_GROUP
from tests.support.projects import build_project

pytest.importorskip("dbos")

from llm_do.runtime.budget import BudgetSpent  # noqa: E402
from llm_do.runtime.durable.batch_queue import dead_local_executors  # noqa: E402
from llm_do.runtime.durable.budget_ledger import SharedBudget, engine_for  # noqa: E402

D = Decimal
WORST = D("0.10")
LIMIT = D("1.00")
REPO = Path(__file__).resolve().parents[2]

SPENDER = textwrap.dedent('''
    import asyncio, random, sys
    from decimal import Decimal
    url, batch, seed, repository = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    sys.path.insert(0, repository)
    from llm_do.runtime.durable.budget_ledger import SharedBudget, engine_for
    from tests.support.budgets import spend_until_stopped

    budget = SharedBudget(engine_for(url), batch, Decimal("1.00"), executor=f"spender-{seed}")
    rnd = random.Random(seed)
    spent = []

    async def main():
        await asyncio.gather(*(spend_until_stopped(budget, rnd, spent, worst=Decimal("0.10"), pause=0.005) for _ in range(4)))

    asyncio.run(main())
    print(sum(spent, Decimal(0)))
''')
"""A process spending from the budget at `url` with tests/support/budgets.py (the repository's
root, its last argument, is put on its path)."""


def spend_together(url: str, batch: str, processes: int = 3) -> D:
    procs = [subprocess.Popen([sys.executable, "-c", SPENDER, url, batch, str(seed), str(REPO)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for seed in range(processes)]
    outputs = [p.communicate(timeout=180) for p in procs]
    assert [p.returncode for p in procs] == [0] * processes, outputs
    return sum((D(out.strip()) for out, _ in outputs), D(0))


def _check(url: str, batch: str) -> None:
    spent = spend_together(url, batch)
    ledger = SharedBudget(engine_for(url), batch, LIMIT, executor="check")
    assert ledger.spent() == spent  # every response counted once, by whichever process made it
    assert LIMIT <= spent <= LIMIT + WORST, spent
    ledger.close()


@pytest.mark.process
def test_processes_on_one_sqlite_database_share_one_budget(tmp_path: Path) -> None:
    _check(f"sqlite:///{tmp_path / 'runs.sqlite'}", "batch-a")


@POSTGRES_GROUP
@pytest.mark.process
def test_processes_on_one_postgres_server_share_one_budget(postgres_server: str) -> None:
    import sqlalchemy as sa

    admin = engine_for(f"{postgres_server}/postgres").execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text("CREATE DATABASE llmdo_budget"))
    admin.dispose()
    _check(f"{postgres_server}/llmdo_budget", "batch-b")


def test_a_dead_process_s_holds_count_at_their_worst_and_are_released(tmp_path: Path) -> None:
    import asyncio

    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    dead_pid = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True).stdout.strip()
    host = socket.gethostname()
    died = SharedBudget(engine_for(url), "batch-c", D("0.15"), executor=f"llm-do-batch@{host}-{dead_pid}")
    asyncio.run(died.reserve(WORST, "w", "m"))  # and the process died before its response came
    survivor = SharedBudget(engine_for(url), "batch-c", D("0.15"), executor=f"llm-do-batch@{host}-{os.getpid()}",
                            dead=dead_local_executors)
    assert survivor.spent() == WORST  # released on first use, counted at its worst case
    hold = asyncio.run(survivor.reserve(WORST, "w", "m"))
    survivor.settle(hold, D("0.06"))
    with pytest.raises(BudgetSpent, match="spent"):
        asyncio.run(survivor.reserve(WORST, "w", "m"))
    assert survivor.exhausted() is not None


PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"},
                     "defaults": {"model": "test", "model_settings": {"max_tokens": 100}},
                     "cost": {"prices": {"test": {"input_mtok": 1000, "output_mtok": 2000, "context_window": 1000}}}},
    "main.worker": worker("", "Answer."),
}


@pytest.mark.process
def test_a_durable_batch_spends_its_budget_from_the_run_database(tmp_path: Path) -> None:
    bundle = build_project(tmp_path / "proj", PROJECT)
    inputs = tmp_path / "in.jsonl"
    inputs.write_text("\n".join(json.dumps(f"task {i}") for i in range(8)) + "\n")
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    first = run_cli("batch", bundle, inputs, "-o", tmp_path / "a.jsonl", "--concurrency", "1", "--durable", url, "--max-cost", "0.2")
    assert first.exit_code == 1, first.stderr
    lines = [r for r in map(json.loads, (tmp_path / "a.jsonl").read_text().splitlines()) if "line" in r]
    assert any(r["error"] is None for r in lines) and any("budget" in (r["error"] or "") for r in lines)
    batch = next(w for w in first.stderr.split() if w.startswith("llm-do-batch-"))
    ledger = SharedBudget(engine_for(url), batch, D("0.2"), executor="check")
    from llm_do.pricing.ceiling import worst_request
    from llm_do.pricing.sheets import price_sheet

    prices = PROJECT["project.json"]["cost"]["prices"]
    worst = worst_request(price_sheet("test", prices), {"max_tokens": 100}, None).cost
    spent = ledger.spent()
    assert D("0.2") <= spent <= D("0.2") + worst
    assert "of $0.20 ($0.00 left)" in first.stderr
    ledger.close()

"""A durable run's budget (`exec --durable --max-cost USD`, spec/runtime.md "Budgets"): kept in the
run database under the run's id, so a run killed and resumed spends from what it had spent, never
more than the budget plus one request's worst case; `resume` keeps the run's `--max-cost` unless
given anew, and a resumed run already over its budget stops before it starts, saying why."""

from __future__ import annotations

import copy
from decimal import Decimal
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.durable import DURABLE_PROJECT, llm_do, marks, run_id, write
from tests.support.projects import build_project

pytest.importorskip("dbos")

D = Decimal
REQUEST = D("0.10")
"""What each scripted request costs, and its worst case: a price by the request alone."""

PRICED = copy.deepcopy(DURABLE_PROJECT)
PRICED["project.json"] = {**DURABLE_PROJECT["project.json"],  # type: ignore[dict-item]
                          "defaults": {"model_settings": {"max_tokens": 100}},
                          "cost": {"prices": {"script:*": {"input_mtok": 0, "output_mtok": 0, "request": float(REQUEST), "context_window": 1000}}}}

SCRIPT = {"workers": {"main": [{"tool_calls": [{"tool": "mark", "args": {"n": n}}]} for n in range(1, 10)]
                      + [{"text": "done"}]}}
"""Ten requests of `main`, each but the last calling `mark(n)`."""


def _spent(stderr: str) -> D:
    """What the command's summary says the run has spent (`llm-do: spent $0.50 of $0.45 ...`)."""
    return D(stderr.rsplit("llm-do: spent $", 1)[1].split(" ")[0])


@pytest.mark.process
def test_a_killed_run_resumes_with_what_it_spent_and_never_passes_its_budget_by_more_than_one_request(
        tmp_path: Path) -> None:
    bundle = build_project(tmp_path / "proj", PRICED)
    root, log = bundle.parent, tmp_path / "marks.log"
    script = write(tmp_path / "s.json", SCRIPT)
    (tmp_path / "kill-at").write_text("3")
    # requests 1-3 spend $0.30 (the third starts at $0.20, under the budget), then the process dies
    first = llm_do("exec", bundle, "--durable", "--script", script, "--max-cost", "0.25", cwd=root, log=log)
    assert first.returncode == -9, first.stderr
    rid = run_id(first.stderr)
    assert marks(log) == ["mark 1", "mark 2"]

    # resumed with the budget it started with, and over it: it stops before it starts, still pending
    over = run_cli("resume", rid, cwd_to=root, env={"MARK_LOG": str(log)})
    assert over.exit_code == 1, over.stderr
    assert f"llm-do: resume takes the options run '{rid}' started with: --script" in over.stderr
    assert "--max-cost 0.25" in over.stderr
    assert (f"run '{rid}' cannot go on: the budget of $0.25 is spent ($0.30); resume it with a larger --max-cost "
            "to go on") in over.stderr
    assert marks(log) == ["mark 1", "mark 2"]

    # a larger budget, counted from what the run spent: two more requests, then it stops saying why
    resumed = run_cli("resume", rid, "--max-cost", "0.45", cwd_to=root, env={"MARK_LOG": str(log)})
    assert resumed.exit_code == 1, resumed.stderr
    assert ("llm-do: run failed: the budget of $0.45 is spent ($0.50) by the run's requests so far (its processes "
            "before a resume included): this run stopped before a request of 'main'") in resumed.stderr
    assert marks(log) == ["mark 1", "mark 2", "mark 3", "mark 4", "mark 5"]
    assert _spent(resumed.stderr) == D("0.50") <= D("0.45") + REQUEST


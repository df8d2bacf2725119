"""Where a cost bound shows: `lint` (B001, B002), `capabilities`, `graph` and `diff` (spec/cost.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_cli, worker, write_project
from tests.support.lint import lint

PRICES = {"ollama:cheap": {"input_mtok": 1, "output_mtok": 2, "context_window": 1000},
          "ollama:dear": {"input_mtok": 10, "output_mtok": 20, "context_window": 1000}}


def _project(root: Path, workers: dict[str, str], **manifest: Any) -> Path:
    doc = {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}, "defaults": {"model": "ollama:cheap"},
           "cost": {"prices": PRICES}, **manifest}
    return write_project(root, {"project.json": doc, **{f"{n}.worker": t for n, t in workers.items()}})


def test_lint_names_the_worker_and_what_bounds_none_of_its_requests(tmp_path: Path) -> None:
    prices = {**PRICES, "ollama:nowindow": {"input_mtok": 1, "output_mtok": 1}}
    root = _project(tmp_path, {"main": worker("toolsets: [helper, searcher]"),
                               "helper": worker("model: ollama:nowindow\nmodel_settings: {max_tokens: 10}"),
                               "searcher": worker("model: openai:gpt-4o\nserver_side_tools: [{tool_type: web_search}]"),
                               "odd": worker("model: ollama:unknown")},
                    cost={"prices": prices})
    found = lint(root)
    unbounded = found.expect("B001", "helper.worker", "model_settings", mentions=("'helper'", "ollama:nowindow", "input tokens"))
    assert "count_tokens_before_request" in unbounded["message"] and unbounded["hint"]
    found.expect("B001", "searcher.worker", "model:", mentions=("web_search", "max_uses"))
    priced = found.expect("B002", "odd.worker", "ollama:unknown", mentions=("'ollama:unknown'",))
    assert "\"cost\": {\"prices\"" in priced["hint"]
    assert len(found.of("B001")) == 2  # `odd` is no worker the entry reaches


def test_the_project_default_is_where_an_unpriced_default_is_named(tmp_path: Path) -> None:
    root = _project(tmp_path, {"main": worker("")}, defaults={"model": "ollama:mystery"})
    lint(root).expect("B002", "project.json", '"ollama:mystery"', mentions=("ollama:mystery",))


def test_build_leaves_the_review_to_lint(tmp_path: Path) -> None:
    """A build after an edit of `model` is written from the last lock without the check stage:
    its warnings must not depend on which way it went, so the cost warnings are lint's alone."""
    root = _project(tmp_path, {"main": worker("model: ollama:unknown")})
    built = run_cli("build", root)
    assert built.exit_code == 0 and "B002" not in built.stderr
    assert lint(root).of("B002")


def test_a_suppressed_code_is_not_reported(tmp_path: Path) -> None:
    root = _project(tmp_path, {"main": worker("model: ollama:unknown")}, suppress=["B002"])
    lint(root).absent("B002")


def test_capabilities_show_the_bound_of_each_worker(tmp_path: Path, snapshot) -> None:
    root = _project(tmp_path, {"main": worker("toolsets: [helper]\nmodel_settings: {max_tokens: 100}"),
                               "helper": worker("model: ollama:dear")},
                    runtime={"usage_limits": {"request_limit": 10}})
    text = run_cli("capabilities", root)
    assert text.exit_code == 0, text.stderr
    tail = text.stdout[text.stdout.index("cost ("):]
    assert tail.splitlines()[1:] == snapshot
    doc = json.loads(run_cli("capabilities", root, "--format", "json").stdout)
    entry = doc["workers"][0]["cost"]
    assert entry == {"status": "bounded", "usd": "0.30", "requests": 10, "models": ["ollama:cheap", "ollama:dear"],
                     "dominant": {"worker": "helper", "model": "ollama:dear", "request_usd": "0.03", "path": ["main", "helper"]},
                     "limits": ["request_limit 10"]}
    assert doc["cost_prices"].startswith("genai-prices ") and doc["cost_model"] is None
    cheap = json.loads(run_cli("capabilities", root, "--format", "json", "--model", "ollama:cheap").stdout)
    assert cheap["workers"][0]["cost"]["usd"] == "0.03" and cheap["cost_model"] == "ollama:cheap"


def test_graph_annotates_each_worker_s_dearest_request_and_the_entry_s_run(tmp_path: Path) -> None:
    root = _project(tmp_path, {"main": worker("toolsets: [helper]"), "helper": worker("model: ollama:dear")})
    doc = json.loads(run_cli("graph", root, "--format", "json").stdout)
    nodes = {n["id"]: n for n in doc["nodes"]}
    assert nodes["worker:helper"]["cost"] == {"status": "bounded", "request_usd": "0.03", "model": "ollama:dear"}
    assert nodes["worker:main"]["cost"]["run_usd"] == "1.50" and nodes["worker:main"]["cost"]["run_status"] == "bounded"
    text = run_cli("graph", root).stdout
    assert "  cost: request at most $0.03 (ollama:dear)" in text and "  cost: run at most $1.50" in text


def _diff(old: Path, new: Path) -> list[dict[str, Any]]:
    result = run_cli("diff", old, new, "--format", "json")
    assert result.exit_code in (0, 1), result.stderr
    return [c for c in json.loads(result.stdout)["changes"] if c["area"] == "cost"]


@pytest.mark.parametrize(("limit", "severity", "note"), [(30, "medium", None), (31, "high", "more than 3x")])
def test_diff_judges_a_rise_by_the_project_s_factor(tmp_path: Path, limit: int, severity: str, note: str | None) -> None:
    old = _project(tmp_path / "old", {"main": worker("")}, runtime={"usage_limits": {"request_limit": 10}},
                   cost={"prices": PRICES, "rise_factor": 3})
    new = _project(tmp_path / "new", {"main": worker("")}, runtime={"usage_limits": {"request_limit": limit}},
                   cost={"prices": PRICES, "rise_factor": 3})
    [change] = _diff(old, new)
    assert (change["severity"], change["verb"], change["subject"], change["note"]) == (severity, "widened", "cost bound of a run of main", note)
    assert (change["before"], change["worker"]) == ("at most $0.03", "main")


def test_diff_a_bound_lost_is_high_and_a_factor_raised_is_judged_by_the_old_one(tmp_path: Path) -> None:
    old = _project(tmp_path / "old", {"main": worker("")})
    new = _project(tmp_path / "new", {"main": worker("model: ollama:unknown")}, cost={"prices": PRICES, "rise_factor": 50})
    changes = {c["subject"]: c for c in _diff(old, new)}
    lost = changes["cost bound of a run of main"]
    assert (lost["severity"], lost["after"], lost["note"]) == ("high", "unpriced", "now unpriced")
    assert changes["cost.rise_factor"]["severity"] == "medium"
    back = {c["subject"]: c for c in _diff(new, old)}["cost bound of a run of main"]
    assert (back["severity"], back["verb"], back["note"]) == ("low", "narrowed", "now bounded")


def test_diff_says_when_a_declared_price_goes_down(tmp_path: Path) -> None:
    old = _project(tmp_path / "old", {"main": worker("")})
    cheaper = {**PRICES, "ollama:cheap": {**PRICES["ollama:cheap"], "output_mtok": 1}}
    new = _project(tmp_path / "new", {"main": worker("")}, cost={"prices": cheaper})
    changes = {c["subject"]: c for c in _diff(old, new)}
    assert changes["cost.prices of ollama:cheap"]["severity"] == "medium"
    assert changes["cost bound of a run of main"]["severity"] == "low"


def test_the_pr_comment_shows_a_bound_that_rose_with_both_sides(tmp_path: Path) -> None:
    old = _project(tmp_path / "old", {"main": worker("")}, runtime={"usage_limits": {"request_limit": 10}})
    new = _project(tmp_path / "new", {"main": worker("")}, runtime={"usage_limits": {"request_limit": 100}})
    result = run_cli("diff", old, new, "--format", "markdown")
    assert result.exit_code == 1, result.stderr
    [row] = [line for line in result.stdout.splitlines() if line.startswith("| **high** | widened | cost bound of a run of main")]
    assert row.endswith("(more than 2x) | `at most $0.03` | `at most $0.30` |")
    assert "after: request_limit 100; dearest request: 'main' on 'ollama:cheap', $0.01" in result.stdout

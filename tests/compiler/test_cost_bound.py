"""The cost bound of a run (`llm_do.compiler.cost`, spec/cost.md), on projects whose prices they
declare (exact figures, whatever genai-prices' release says)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

from llm_do.compiler.cost.bound import CostAnalysis, CostBound
from llm_do.compiler.cost.inputs import of_bundle, of_project
from llm_do.compiler.cost.models import CHOSEN
from llm_do.compiler.pipeline import compile_project
from tests.support.cli import worker, write_project

D = Decimal
M = D(1_000_000)
PRICES = {"ollama:cheap": {"input_mtok": 1, "output_mtok": 2, "context_window": 1000},
          "ollama:dear": {"input_mtok": 10, "output_mtok": 20, "context_window": 1000}}


def project(tmp_path: Path, workers: dict[str, str], *, runtime: dict[str, Any] | None = None, entry: Any = None,
            prices: dict[str, Any] | None = None, default: str | None = "ollama:cheap", **manifest: Any) -> Path:
    doc: dict[str, Any] = {"version": 1, "worker_files": ["*.worker"], "entry": entry or {"worker": "main"},
                           "cost": {"prices": PRICES if prices is None else prices}, **manifest}
    if default:
        doc["defaults"] = {"model": default}
    if runtime:
        doc["runtime"] = runtime
    files: dict[str, Any] = {"project.json": doc}
    files.update({f"{name}.worker": text for name, text in workers.items()})
    return write_project(tmp_path / "proj", files)


def analysis(root: Path, model: str | None = None) -> CostAnalysis:
    """The analysis of the built bundle, checked equal to the one lint makes of the resolved project."""
    result = compile_project(root, cache=False)
    assert result.bundle is not None, [d.message for d in result.diagnostics]
    from_bundle = CostAnalysis(of_bundle(json.loads(result.bundle), model))
    if model is None:
        assert result.resolved is not None
        assert CostAnalysis(of_project(result.resolved)).entry_bound() == from_bundle.entry_bound()
    return from_bundle


def entry(root: Path, model: str | None = None) -> CostBound:
    return analysis(root, model).entry_bound()


def worst(model: str, in_tokens: int = 1000, out_tokens: int = 1000) -> Decimal:
    price = PRICES[model]
    return (in_tokens * D(price["input_mtok"]) + out_tokens * D(price["output_mtok"])) / M


def test_a_run_costs_at_most_its_requests_at_the_dearest_request(tmp_path: Path) -> None:
    root = project(tmp_path, {"main": worker("toolsets: [helper]"), "helper": worker("model: ollama:dear")})
    bound = entry(root)
    assert bound.usd == 50 * worst("ollama:dear")  # pydantic-ai's default request_limit
    assert bound.dominant is not None and (bound.dominant.worker, bound.dominant.model) == ("helper", "ollama:dear")
    assert bound.path == ("main", "helper") and bound.shaped_by == ("request_limit 50",)
    assert bound.models == ("ollama:cheap", "ollama:dear")
    limited = entry(project(tmp_path / "b", {"main": worker("toolsets: [helper]"), "helper": worker("model: ollama:dear")},
                            runtime={"usage_limits": {"request_limit": 7}}))
    assert limited.usd == 7 * worst("ollama:dear")


def test_max_tokens_bounds_the_output_of_each_request(tmp_path: Path) -> None:
    root = project(tmp_path, {"main": worker("model_settings: {max_tokens: 100}")}, runtime={"usage_limits": {"request_limit": 3}})
    assert entry(root).usd == 3 * worst("ollama:cheap", out_tokens=100)


def test_token_limits_checked_before_each_request_bound_all_but_those_under_way(tmp_path: Path) -> None:
    """One call at a time (tool_calls_limit 1): the input tokens are at most the limit plus the one
    request under way when it is crossed; with calls in parallel, as many as can be under way."""
    limits = {"request_limit": 10, "input_tokens_limit": 2000, "tool_calls_limit": 1}
    workers = {"main": worker("toolsets: [helper]\nmodel_settings: {max_tokens: 100}"),
               "helper": worker("model_settings: {max_tokens: 100}")}
    sequential = entry(project(tmp_path / "a", workers, runtime={"usage_limits": limits}))
    assert sequential.usd == ((2000 + 1000) * D(1) + 10 * 100 * D(2)) / M
    assert sequential.shaped_by == ("request_limit 10", "input_tokens_limit 2000")
    parallel = entry(project(tmp_path / "b", workers, runtime={"usage_limits": {**limits, "tool_calls_limit": None}}))
    assert parallel.usd == (10 * 1000 * D(1) + 10 * 100 * D(2)) / M  # 10 under way at once: the limit does not help
    two = entry(project(tmp_path / "c", workers, runtime={"max_depth": 3, "usage_limits": {**limits, "tool_calls_limit": 2}}))
    assert two.usd == ((2000 + 4 * 1000) * D(1) + 10 * 100 * D(2)) / M  # 2 ** (3 - 1) calls at the bottom


def test_the_total_token_limit_is_spent_on_the_dearer_tokens_first(tmp_path: Path) -> None:
    limits = {"request_limit": 10, "total_tokens_limit": 3000, "tool_calls_limit": 1}
    bound = entry(project(tmp_path, {"main": worker("")}, runtime={"usage_limits": limits}))
    joint = 3000 + 1 * (1000 + 1000)
    assert bound.usd == (joint * D(2)) / M  # output (2 per MTok) before input (1 per MTok): all of it output
    assert "total_tokens_limit 3000" in bound.shaped_by


def test_python_that_calls_workers_can_run_them_all_at_once(tmp_path: Path) -> None:
    limits = {"request_limit": 10, "input_tokens_limit": 2000, "tool_calls_limit": 1}
    root = project(tmp_path, {"main": worker("calls: [helper]\nmodel_settings: {max_tokens: 1}"),
                              "helper": worker("model_settings: {max_tokens: 1}")}, runtime={"usage_limits": limits})
    assert entry(root).usd == (10 * 1000 * D(1) + 10 * 1 * D(2)) / M


def test_recursion_is_bounded_by_the_requests_it_may_make(tmp_path: Path) -> None:
    root = project(tmp_path, {"main": worker("toolsets: [again]"), "again": worker("model: ollama:dear\nrecursive: true\ntoolsets: [again]")},
                   runtime={"max_depth": 20, "usage_limits": {"request_limit": 12}})
    costs = analysis(root)
    assert costs.entry_bound().usd == 12 * worst("ollama:dear")
    assert costs.callee_bounds["again"].usd == 12 * worst("ollama:dear") and costs.callee_bounds["main"].usd == 12 * worst("ollama:dear")


def test_a_worker_without_a_model_runs_on_its_caller_s_when_it_fits(tmp_path: Path) -> None:
    workers = {"main": worker("model: ollama:dear\ntoolsets: [fits, picky]"), "fits": worker(""),
               "picky": worker("compatible_models: ['ollama:cheap']")}
    costs = analysis(project(tmp_path, workers))
    assert costs.models["fits"] == {"ollama:dear", "ollama:cheap"} and costs.models["picky"] == {"ollama:cheap"}


def test_a_run_s_model_puts_every_worker_on_it(tmp_path: Path) -> None:
    root = project(tmp_path, {"main": worker("model: ollama:dear")})
    assert entry(root, "ollama:cheap").usd == 50 * worst("ollama:cheap")


def test_what_leaves_a_run_unbounded_or_unpriced(tmp_path: Path) -> None:
    prices = {**PRICES, "ollama:local": {"input_mtok": 1, "output_mtok": 1}}
    root = project(tmp_path, {"main": worker("toolsets: [a, b, c]"), "a": worker("model: ollama:local"),
                              "b": worker("model: ollama:unpriced"),
                              "c": worker("toolsets: [worker_create]")}, prices=prices,
                   worker_files=["*.worker", "workers/generated/*.worker"])
    bound = entry(root)
    assert bound.usd is None and bound.status == "unbounded"
    by = {(g.kind, g.worker, g.model) for g in bound.gaps}
    assert by == {("unbounded", "a", "ollama:local"), ("unpriced", "b", "ollama:unpriced"), ("unpriced", "c", "*")}
    assert any("no known context window" in g.why for g in bound.gaps if g.worker == "a")
    chosen = entry(project(tmp_path / "b", {"main": worker("")}, default=None))
    assert chosen.status == "unpriced" and chosen.gaps[0].model == CHOSEN


def test_an_entry_function_may_run_its_calls_at_once(tmp_path: Path) -> None:
    files = {"main": worker("model_settings: {max_tokens: 1}"), "other": worker("model: ollama:dear")}
    root = project(tmp_path, files, entry={"function": "flow.py:main", "calls": ["main"]},
                   runtime={"usage_limits": {"request_limit": 4, "input_tokens_limit": 10, "tool_calls_limit": 1}})
    (root / "flow.py").write_text("async def main(ctx, data):\n    return await ctx.call_worker('main', data.input)\n")
    bound = entry(root)
    assert bound.usd == (4 * 1000 * D(1) + 4 * 1 * D(2)) / M  # `other` is not called; 4 requests may be under way
    assert bound.path == ("flow.py:main", "main")


def test_a_worker_deeper_than_the_requests_allow_is_never_reached(tmp_path: Path) -> None:
    """A worker at depth d runs only after d - 1 requests called it: with request_limit 1 only the
    entry's one request can be made; with tool_calls_limit 0 no tool (so no worker) is ever called."""
    workers = {"main": worker("toolsets: [helper]"), "helper": worker("model: ollama:dear")}
    one = entry(project(tmp_path / "one", workers, runtime={"usage_limits": {"request_limit": 1}}))
    assert one.usd == worst("ollama:cheap") and one.path == ("main",)
    two = entry(project(tmp_path / "two", workers, runtime={"usage_limits": {"request_limit": 2}}))
    assert two.usd == 2 * worst("ollama:dear") and two.path == ("main", "helper")
    costs = analysis(project(tmp_path / "none", workers, runtime={"usage_limits": {"tool_calls_limit": 0}}))
    assert costs.entry_bound().usd == 50 * worst("ollama:cheap")
    assert costs.callee_bounds["main"].usd == 50 * worst("ollama:cheap")

"""Budgets (`--max-cost`, `RuntimeConfig.budget`) and requests counted when sent (`metering`,
`budget`; spec/runtime.md, "Budgets"): a run never spends more than its budget plus the worst case
of one request, and never sends more requests than its `request_limit`, whatever runs at once."""

from __future__ import annotations

import asyncio
import json
import random
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage, UsageLimits

from llm_do.pricing.ceiling import worst_request
from llm_do.pricing.sheets import price_sheet
from llm_do.runtime import Runtime, RuntimeConfig
from llm_do.runtime.budget import BudgetSpent, LocalBudget
from llm_do.runtime.errors import RunFailed
from llm_do.runtime.events import RequestPriced
from tests.support.cli import run_cli, worker

D = Decimal
MODEL = "ollama:priced"
PRICES = {MODEL: {"input_mtok": 100, "output_mtok": 300, "context_window": 2000}}
MAX_TOKENS = 500


def project(**manifest: Any) -> dict[str, Any]:
    return {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"},
                         "defaults": {"model": MODEL, "model_settings": {"max_tokens": MAX_TOKENS}},
                         "cost": {"prices": PRICES}, **manifest},
        "main.worker": worker("toolsets: [helper]", "Delegate."),
        "helper.worker": worker("description: Helps.", "Help."),
    }


WORST = worst_request(price_sheet(MODEL, PRICES), {"max_tokens": MAX_TOKENS}, None).cost
assert WORST == (2000 * D(100) + 500 * D(300)) / D(10**6)


def model(fan_out: int, seed: int, seen: list[tuple[str, D]] | None = None) -> FunctionModel:
    """The entry calls `helper` `fan_out` times in one response, then answers; every response
    reports tokens up to what one request can have."""
    rnd = random.Random(seed)

    async def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
        await asyncio.sleep(rnd.random() / 500)
        usage = RequestUsage(input_tokens=rnd.choice([2000, rnd.randint(1, 2000)]),
                             output_tokens=rnd.choice([MAX_TOKENS, rnd.randint(1, MAX_TOKENS)]))
        if seen is not None:
            seen.append((info.function_tools[0].name if info.function_tools else "", (usage.input_tokens * D(100) + usage.output_tokens * D(300)) / D(10**6)))
        calls = [t for t in info.function_tools if t.name == "helper"]
        first = not any(isinstance(p, ToolCallPart) for m in messages for p in getattr(m, "parts", ()))
        if calls and first:
            return ModelResponse(parts=[ToolCallPart("helper", {"input": f"part {i}"}) for i in range(fan_out)], usage=usage)
        return ModelResponse(parts=[TextPart("done")], usage=usage)

    return FunctionModel(respond, model_name=MODEL)


@pytest.mark.parametrize("seed", range(12))
def test_a_run_never_spends_more_than_its_budget_and_one_request(build, seed: int) -> None:
    rnd = random.Random(seed)
    budget = LocalBudget(D(rnd.choice(["0.05", "0.3", "1", "3"])))
    seen: list[tuple[str, D]] = []
    runtime = Runtime.load(build(project()), RuntimeConfig(model=model(rnd.randint(1, 8), seed, seen), budget=budget))
    try:
        runtime.run("go")
    except RunFailed as exc:
        assert "budget" in str(exc), exc
    spent = sum((cost for _, cost in seen), D(0))
    assert budget.spent() == spent  # each response counted at what it cost
    assert spent <= budget.limit + WORST, (spent, budget.limit)


def test_requests_are_counted_when_sent_so_parallel_calls_cannot_pass_the_limit(build) -> None:
    """Six calls of `helper` in one response start together; pydantic-ai counts a request when its
    response comes back, so each would see one request made and go on."""
    asked: list[str] = []

    async def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
        asked.append("x")
        await asyncio.sleep(0.01)
        if any(t.name == "helper" for t in info.function_tools) and len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("helper", {"input": str(i)}) for i in range(6)])
        return ModelResponse(parts=[TextPart("done")])

    runtime = Runtime.load(build(project()), RuntimeConfig(model=FunctionModel(respond), usage_limits=UsageLimits(request_limit=3)))
    with pytest.raises(Exception, match="request_limit of 3"):
        runtime.run("go")
    assert len(asked) == 3


def test_a_model_with_no_price_is_refused_before_its_first_request(build) -> None:
    asked: list[int] = []

    def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
        asked.append(1)
        return ModelResponse(parts=[TextPart("done")])

    bundle = build(project())
    refused = Runtime.load(bundle, RuntimeConfig(model=FunctionModel(respond, model_name="ollama:unknown"), budget=LocalBudget(D(1))))
    with pytest.raises(BudgetSpent, match="'ollama:unknown', which has no known price"):
        refused.run("go")
    assert asked == []
    notes: list[str] = []
    accepted = LocalBudget(D(1), accept_unpriced=True, on_note=notes.append)
    Runtime.load(bundle, RuntimeConfig(model=FunctionModel(respond, model_name="ollama:unknown"), budget=accepted)).run("go")
    assert asked == [1] and accepted.spent() == 0 and "accepted" in notes[0]


def test_a_response_that_cannot_be_priced_stops_the_run_before_the_next_request(build) -> None:
    asked: list[int] = []

    def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
        asked.append(1)
        if len(messages) == 1 and any(t.name == "helper" for t in info.function_tools):
            return ModelResponse(parts=[ToolCallPart("helper", {"input": "x"})], usage=RequestUsage(unmeasured_requests=1))
        return ModelResponse(parts=[TextPart("done")], usage=RequestUsage(input_tokens=10, output_tokens=10))

    bundle = build(project())
    budget = LocalBudget(D(5))
    with pytest.raises(RunFailed, match="could not be priced"):
        Runtime.load(bundle, RuntimeConfig(model=FunctionModel(respond, model_name=MODEL), budget=budget)).run("go")
    assert asked == [1] and budget.spent() == WORST  # counted at its worst case, never as free
    notes: list[str] = []
    accepting = LocalBudget(D(5), accept_unpriced=True, on_note=notes.append)
    Runtime.load(bundle, RuntimeConfig(model=FunctionModel(respond, model_name=MODEL), budget=accepting)).run("go")
    assert len(asked) == 4 and "counted at its worst case" in notes[0]


def test_each_priced_response_is_an_event(build) -> None:
    events: list[Any] = []

    def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("done")], usage=RequestUsage(input_tokens=1000, output_tokens=100))

    bundle = build(project())
    Runtime.load(bundle, RuntimeConfig(model=FunctionModel(respond, model_name=MODEL), on_event=events.append)).run("go")
    [priced] = [e for e in events if isinstance(e, RequestPriced)]
    assert (priced.worker, priced.model, priced.cost, priced.run_cost, priced.budget_left) == ("main", MODEL, "0.13", "0.13", None)
    quiet: list[Any] = []
    Runtime.load(bundle, RuntimeConfig(model=FunctionModel(respond), on_event=quiet.append)).run("go")  # no price: nothing to say
    assert not [e for e in quiet if isinstance(e, RequestPriced)]


def test_the_cost_is_on_each_request_s_span(build) -> None:
    pytest.importorskip("opentelemetry.sdk")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from llm_do.runtime.telemetry import instrument

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))

    def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("done")], usage=RequestUsage(input_tokens=1000, output_tokens=100))

    stop = instrument(provider)
    try:
        Runtime.load(build(project()), RuntimeConfig(model=FunctionModel(respond, model_name=MODEL), budget=LocalBudget(D(1)))).run("go")
    finally:
        stop()
    [chat] = [s for s in exporter.get_finished_spans() if s.name.startswith("chat")]
    assert chat.attributes["llm_do.worker"] == "main" and chat.attributes["llm_do.cost_usd"] == pytest.approx(0.13)
    assert chat.attributes["llm_do.budget_left_usd"] == pytest.approx(0.87)
    assert chat.attributes["gen_ai.usage.input_tokens"] == 1000  # pydantic-ai's, by the gen_ai conventions


PRICED_TEST = {"test": {"input_mtok": 1000, "output_mtok": 2000, "context_window": 1000}}


def test_exec_max_cost_says_what_was_spent_and_stops_when_it_is(build) -> None:
    files = project(cost={"prices": PRICED_TEST})
    files["project.json"]["defaults"] = {"model": "test", "model_settings": {"max_tokens": 100}}
    bundle = build(files)
    ok = run_cli("exec", bundle, "hi", "--max-cost", "1")
    assert ok.exit_code == 0, ok.stderr
    assert ok.stderr.strip().startswith("llm-do: spent $0.") and "of $1.00" in ok.stderr
    stopped = run_cli("exec", bundle, "hi", "--max-cost", "0.1")
    assert stopped.exit_code == 1 and "the budget of $0.10 is spent" in stopped.stderr
    events = run_cli("exec", bundle, "hi", "--max-cost", "5", "--events", "-")
    priced = [json.loads(line) for line in events.stdout.splitlines() if '"request_priced"' in line]
    assert [p["worker"] for p in priced] == ["main", "helper", "main"] and priced[-1]["budget_left"]
    assert run_cli("exec", bundle, "hi", "--accept-unpriced").exit_code == 2  # it needs --max-cost


def test_a_batch_spends_one_budget_across_its_inputs(build, tmp_path: Path) -> None:
    files = project(cost={"prices": PRICED_TEST})
    files["project.json"]["defaults"] = {"model": "test", "model_settings": {"max_tokens": 100}}
    bundle = build(files)
    inputs = tmp_path / "in.jsonl"
    inputs.write_text("\n".join(json.dumps(f"task {i}") for i in range(12)) + "\n")
    out = tmp_path / "out.jsonl"
    result = run_cli("batch", bundle, inputs, "-o", out, "--concurrency", "1", "--max-cost", "0.5")
    assert result.exit_code == 1, result.stderr
    lines = [r for r in map(json.loads, out.read_text().splitlines()) if "line" in r]
    done = [r for r in lines if r["error"] is None]
    stopped = [r for r in lines if r["error"] and "budget" in r["error"]]
    assert done and stopped and len(done) + len(stopped) == 12
    spent = D(result.stderr.split("spent $")[1].split(" ")[0])
    worst = worst_request(price_sheet("test", PRICED_TEST), {"max_tokens": 100}, None).cost
    assert spent <= D("0.5") + worst

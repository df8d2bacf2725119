"""The Python API: run_worker / run_worker_async, delegation from Python tools (ctx.deps.call_worker,
the .agent-era call_agent, call_worker_async, a bound handle), approval callbacks, and the async
event stream a host drives, answering approval requests as they come."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.messages import ModelRequest, ToolReturnPart, UserPromptPart
from pydantic_ai.messages import ModelResponse as Response
from pydantic_ai.models.function import FunctionModel

from llm_do.runtime import (
    ApprovalDecision,
    Runtime,
    RuntimeConfig,
    approve_all,
    reject_all,
    run_worker,
    run_worker_async,
    strict,
)
from llm_do.runtime.events import ApprovalRequested, RunFinished, RuntimeEvent
from tests.support.cli import run_cli
from tests.support.events import of_kind, read_events

pytestmark = pytest.mark.process


class Models:
    """Per-worker FunctionModels answering from queues; `judge` always gives a Verdict."""

    def __init__(self, main: list[list[Any]]) -> None:
        self.main = list(main)
        self.seen: dict[str, list[list[Any]]] = {}

    def model_for(self, name: str) -> FunctionModel:
        def respond(messages: list[Any], info: Any) -> ModelResponse:
            self.seen.setdefault(name, []).append(list(messages))
            if name == "judge":
                return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"score": 8, "reason": "judged"})])
            return ModelResponse(parts=self.main.pop(0))

        return FunctionModel(respond)

    def config(self, **kwargs: Any) -> RuntimeConfig:
        return RuntimeConfig(model_for=self.model_for, **kwargs)


def returned(messages: list[Any], tool: str) -> list[str]:
    return [p.model_response_str() for m in messages for p in getattr(m, "parts", [])
            if isinstance(p, ToolReturnPart) and p.tool_name == tool]


def test_run_worker_returns_output_messages_and_usage(py_bundle: Path) -> None:
    models = Models([[ToolCallPart("echo_prompt", {})], [TextPart("finished")]])
    result = run_worker(py_bundle, "hello", config=models.config())
    assert result.output == "finished"
    assert isinstance(result.messages[0], ModelRequest) and isinstance(result.messages[-1], Response)
    prompts = [p.content for m in result.messages for p in m.parts if isinstance(p, UserPromptPart)]
    assert prompts == ["hello"]
    assert returned(result.messages, "echo_prompt") == ["hello"]
    assert result.usage["requests"] == 2


def test_run_worker_async_is_the_same_in_an_event_loop(py_bundle: Path) -> None:
    models = Models([[TextPart("async finished")]])
    result = asyncio.run(run_worker_async(py_bundle, input="hello", config=models.config()))
    assert result.output == "async finished"
    assert len(result.messages) == 2


def test_run_worker_runs_any_worker_of_the_bundle(py_bundle: Path) -> None:
    models = Models([])
    result = run_worker(py_bundle, text="cats", worker="judge", config=models.config())
    assert (result.output.score, result.output.reason) == (8, "judged")


@pytest.mark.parametrize(
    ("tool", "label"),
    [("ask_judge", "call_worker"), ("ask_judge_agent", "call_agent"), ("ask_judge_api", "call_worker_async"),
     ("ask_judge_handle", "handle")],
)
def test_a_python_tool_delegates_to_a_worker(py_bundle: Path, tool: str, label: str) -> None:
    models = Models([[ToolCallPart(tool, {"text": "dogs"})], [TextPart("done")]])
    events: list[RuntimeEvent] = []
    result = run_worker(py_bundle, "go", config=models.config(on_event=events.append))
    assert result.output == "done"
    assert returned(models.seen["main"][1], tool) == [f"{label}: 8 judged"]
    [judge_prompt] = [p.content for m in models.seen["judge"][0] for p in m.parts if isinstance(p, UserPromptPart)]
    assert judge_prompt == "Topic: dogs"
    started = [(e.worker, e.depth) for e in events if e.kind == "worker_started"]
    assert started == [("main", 1), ("judge", 2)]


def test_delegation_from_a_tool_respects_max_depth(py_bundle: Path) -> None:
    models = Models([[ToolCallPart("ask_judge", {"text": "dogs"})], [TextPart("went on")]])
    result = run_worker(py_bundle, "go", config=models.config(max_depth=1))
    assert result.output == "went on"
    assert "judge" not in models.seen
    [message] = returned(models.seen["main"][1], "ask_judge")
    assert "max_depth" in message


def test_delegation_from_a_tool_through_the_cli(py_bundle: Path, script, tmp_path: Path) -> None:
    s = script({"workers": {
        "main": [{"tool_calls": [{"tool": "ask_judge_api", "args": {"text": "owls"}}]}, {"text": "done"}],
        "judge": [{"output": {"score": 4, "reason": "owls are fine"}}],
    }})
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", py_bundle, "go", "--script", s, "--events", events)
    assert result.exit_code == 0, result.stderr
    [ret] = of_kind(read_events(events), "tool_returned", tool="ask_judge_api")
    assert ret["result"] == "call_worker_async: 4 owls are fine"
    [finished] = of_kind(read_events(events), "worker_finished", worker="judge")
    assert finished["depth"] == 2 and finished["output"] == {"score": 4, "reason": "owls are fine"}


def test_python_tools_are_asked_by_default(py_bundle: Path) -> None:
    """`add` has no rule: a Python tool needs approval, so reject_all denies it."""
    models = Models([[ToolCallPart("add", {"a": 2, "b": 3})], [TextPart("done")]])
    run_worker(py_bundle, "go", config=models.config(approval_mode="reject_all"))
    [message] = returned(models.seen["main"][1], "add")
    assert "denied" in message


@pytest.mark.parametrize(("callback", "approved"), [(approve_all, True), (reject_all, False), (strict, False)])
def test_ready_made_callbacks(py_bundle: Path, callback: Any, approved: bool) -> None:
    models = Models([[ToolCallPart("add", {"a": 2, "b": 3})], [TextPart("done")]])
    run_worker(py_bundle, "go", config=models.config(approval_mode="prompt", approval_callback=callback))
    [message] = returned(models.seen["main"][1], "add")
    assert (message == "5") is approved, message


def test_two_runtimes_in_one_process_keep_their_own_configuration(py_bundle: Path) -> None:
    """No global runtime: each call is bound to the runtime it came from."""
    yes = Models([[ToolCallPart("add", {"a": 1, "b": 1})], [TextPart("yes done")]])
    no = Models([[ToolCallPart("add", {"a": 1, "b": 1})], [TextPart("no done")]])
    approving = Runtime.load(py_bundle, yes.config(approval_mode="approve_all"))
    rejecting = Runtime.load(py_bundle, no.config(approval_mode="reject_all"))

    async def both() -> None:
        await asyncio.gather(approving.run_async("go"), rejecting.run_async("go"))

    asyncio.run(both())
    assert returned(yes.seen["main"][1], "add") == ["2"]
    assert "denied" in returned(no.seen["main"][1], "add")[0]


def test_a_sync_handle_inside_an_event_loop_says_to_await(py_bundle: Path) -> None:
    runtime = Runtime.load(py_bundle, Models([]).config())

    async def inside() -> None:
        with pytest.raises(RuntimeError, match="call_async"):
            runtime.worker("judge")(text="x")
        verdict = await runtime.worker("judge").call_async(text="x")
        assert verdict.score == 8

    asyncio.run(inside())


# --- the event stream ------------------------------------------------------------------------------


def test_a_host_drives_the_event_stream_and_answers_approvals(py_bundle: Path) -> None:
    models = Models([[ToolCallPart("add", {"a": 2, "b": 3})], [ToolCallPart("add", {"a": 40, "b": 2})],
                     [TextPart("done")]])
    runtime = Runtime.load(py_bundle, models.config(approval_mode="prompt"))
    seen: list[RuntimeEvent] = []

    async def host() -> None:
        async for event in runtime.events("go"):
            seen.append(event)
            if isinstance(event, ApprovalRequested):
                assert (event.worker, event.depth, event.tool) == ("main", 1, "add")
                event.respond(ApprovalDecision(event.args["a"] == 2, note="only small sums"))

    asyncio.run(host())
    kinds = [e.kind for e in seen]
    assert kinds[0] == "worker_started" and kinds[-1] == "run_finished"
    assert kinds.count("approval_requested") == 2
    assert [(e.approved, e.by) for e in seen if e.kind == "approval_decided"] == [(True, "host"), (False, "host")]
    assert [e.outcome for e in seen if e.kind == "tool_returned"] == ["ok", "denied"]
    assert isinstance(seen[-1], RunFinished) and seen[-1].output == "done"
    assert "only small sums" in returned(models.seen["main"][2], "add")[1]


def test_the_event_stream_with_a_mode_needs_no_answers(py_bundle: Path) -> None:
    models = Models([[ToolCallPart("ask_judge", {"text": "x"})], [TextPart("done")]])
    runtime = Runtime.load(py_bundle, models.config(approval_mode="approve_all"))

    async def collect() -> list[RuntimeEvent]:
        return [e async for e in runtime.events("go")]

    events = asyncio.run(collect())
    assert [(e.kind, getattr(e, "worker", None), getattr(e, "depth", None)) for e in events if "worker" in e.kind] == [
        ("worker_started", "main", 1), ("worker_started", "judge", 2), ("worker_finished", "judge", 2),
        ("worker_finished", "main", 1)]
    assert events[-1].kind == "run_finished"


def test_a_failing_run_raises_from_the_event_stream(py_bundle: Path) -> None:
    models = Models([[ToolCallPart("boom", {})], [TextPart("never")]])
    runtime = Runtime.load(py_bundle, models.config())

    async def collect() -> list[str]:
        return [e.kind async for e in runtime.events("go")]

    from llm_do.runtime import RunFailed

    with pytest.raises(RunFailed, match="'boom'.*'main'"):
        asyncio.run(collect())

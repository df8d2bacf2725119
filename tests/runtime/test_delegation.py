"""Workers calling workers: callees as tools with their input schema, the bundle's edges as the
allowlist, depth limits, fresh history per call, shared usage, invalid arguments from a model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.messages import ModelRequest, RetryPromptPart, ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from llm_do.runtime import RuntimeConfig, run_worker
from tests.support.cli import one_line_error, run_cli, worker
from tests.support.events import of_kind, read_events

TEAM = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker("toolsets: [helper]", "You lead."),
    "helper.worker": worker("description: Helps with anything.\ntoolsets: [filesystem_project_ro]", "You help."),
    "other.worker": worker("", "Nobody calls me."),
}


class Recorder:
    """FunctionModels per worker, answering from a queue and recording what each request saw."""

    def __init__(self, **queues: list[list[Any]]) -> None:
        self.queues = {name: list(q) for name, q in queues.items()}
        self.seen: dict[str, list[list[Any]]] = {name: [] for name in queues}
        self.infos: dict[str, list[AgentInfo]] = {name: [] for name in queues}

    def model_for(self, name: str) -> FunctionModel:
        def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
            self.seen[name].append(list(messages))
            self.infos[name].append(info)
            return ModelResponse(parts=self.queues[name].pop(0))

        return FunctionModel(respond, model_name=name)

    def config(self, **kwargs: Any) -> RuntimeConfig:
        return RuntimeConfig(model_for=self.model_for, **kwargs)


def parts_of(messages: list[Any], kind: type) -> list[Any]:
    return [p for m in messages for p in getattr(m, "parts", []) if isinstance(p, kind)]


@pytest.mark.process
def test_a_callee_is_a_tool_named_after_it_with_its_input_schema(schema_bundle: Path) -> None:
    models = Recorder(
        boss=[[ToolCallPart("judge", {"text": "cats"})], [TextPart("boss done")]],
        judge=[[ToolCallPart("final_result", {"score": 7, "reason": "good"})]],
    )
    result = run_worker(schema_bundle, "start", worker="boss", config=models.config())
    assert result.output == "boss done"
    tools = {t.name: t for t in models.infos["boss"][0].function_tools}
    assert set(tools) == {"judge"}  # the bundle's edges, nothing else
    schema = tools["judge"].parameters_json_schema
    assert set(schema["properties"]) == {"text"} and schema["required"] == ["text"]
    assert "Scores a topic." in (tools["judge"].description or "")
    # The callee got its prompt from its own WorkerArgs.prompt_messages().
    [prompt] = parts_of(models.seen["judge"][0], UserPromptPart)
    assert prompt.content == "Topic: cats"
    # and its structured output came back to the caller as the tool's result.
    [ret] = parts_of(models.seen["boss"][1], ToolReturnPart)
    assert ret.tool_name == "judge" and "7" in ret.model_response_str() and "good" in ret.model_response_str()


def test_only_the_bundles_edges_can_be_called(build) -> None:
    bundle = build(TEAM)
    models = Recorder(main=[[ToolCallPart("other", {"input": "psst"})], [TextPart("done")]], other=[[TextPart("ran")]])
    result = run_worker(bundle, "go", config=models.config())
    assert result.output == "done"
    assert models.seen["other"] == []  # never ran


def test_child_calls_get_fresh_message_history(build) -> None:
    bundle = build(TEAM)
    models = Recorder(
        main=[[ToolCallPart("helper", {"input": "for the helper"})], [TextPart("main done")]],
        helper=[[TextPart("helped")]],
    )
    result = run_worker(bundle, "secret main prompt", config=models.config())
    assert result.output == "main done"
    [helper_request] = models.seen["helper"]
    assert len(helper_request) == 1 and isinstance(helper_request[0], ModelRequest)
    assert [p.content for p in parts_of(helper_request, UserPromptPart)] == ["for the helper"]
    assert "secret main prompt" not in repr(helper_request)
    assert "You lead." not in repr(helper_request)
    # The caller's own history is whole: its prompt, the call, the result.
    assert "secret main prompt" in repr(models.seen["main"][1])
    assert [p.model_response_str() for p in parts_of(models.seen["main"][1], ToolReturnPart)] == ["helped"]
    # run_worker returns the entry's messages, not the helper's.
    assert "secret main prompt" in repr(result.messages) and "for the helper" in repr(result.messages)


def test_two_calls_of_one_worker_do_not_share_history(build) -> None:
    bundle = build(TEAM)
    models = Recorder(
        main=[[ToolCallPart("helper", {"input": "first"})], [ToolCallPart("helper", {"input": "second"})],
              [TextPart("done")]],
        helper=[[TextPart("one")], [TextPart("two")]],
    )
    run_worker(bundle, "go", config=models.config())
    first, second = models.seen["helper"]
    assert [p.content for p in parts_of(first, UserPromptPart)] == ["first"]
    assert [p.content for p in parts_of(second, UserPromptPart)] == ["second"]


def test_usage_is_shared_across_the_run(build) -> None:
    bundle = build(TEAM)
    models = Recorder(
        main=[[ToolCallPart("helper", {"input": "x"})], [TextPart("done")]],
        helper=[[ToolCallPart("list_files", {})], [TextPart("helped")]],
    )
    result = run_worker(bundle, "go", config=models.config())
    assert result.usage["requests"] == 4  # main 2 + helper 2
    assert result.usage["tool_calls"] == 2  # helper (by main) + list_files (by helper)


def test_usage_limits_count_the_nested_calls(build) -> None:
    from pydantic_ai.exceptions import UsageLimitExceeded
    from pydantic_ai.usage import UsageLimits

    bundle = build(TEAM)
    models = Recorder(
        main=[[ToolCallPart("helper", {"input": "x"})], [TextPart("done")]],
        helper=[[TextPart("helped")]],
    )
    with pytest.raises(UsageLimitExceeded, match="request_limit"):
        run_worker(bundle, "go", config=models.config(usage_limits=UsageLimits(request_limit=2)))
    assert models.queues["main"] == [[TextPart("done")]]  # main's second request was never made


def test_invalid_arguments_from_a_model_come_back_as_a_retry_and_the_callee_does_not_run(build) -> None:
    bundle = build(TEAM)
    models = Recorder(
        main=[[ToolCallPart("helper", {"inptu": "typo"})], [TextPart("gave up")]],
        helper=[[TextPart("should not run")]],
    )
    result = run_worker(bundle, "go", config=models.config())
    assert result.output == "gave up"
    assert models.seen["helper"] == []
    last = models.seen["main"][1][-1]
    feedback = " ".join(p.model_response_str() for p in last.parts if isinstance(p, (ToolReturnPart, RetryPromptPart)))
    assert "input" in feedback and "inptu" in feedback, feedback


def test_invalid_arguments_from_a_script_end_the_run_naming_worker_turn_and_error(build, script, tmp_path: Path) -> None:
    """A model would be asked to try again; a script is a test, so its mistake fails the run."""
    bundle = build(TEAM)
    s = script({"workers": {"main": [{"tool_calls": [{"tool": "helper", "args": {"input": 42}}]}, {"text": "done"}]}})
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", bundle, "go", "--script", s, "--events", events)
    assert result.exit_code == 1, result.stderr
    line = one_line_error(result)
    assert "worker 'main', turn 1 of the script" in line, line
    assert "the arguments of 'helper' do not validate: input: Input should be a valid string" in line, line
    assert result.stdout == ""
    assert of_kind(read_events(events), "worker_started", worker="helper") == []


RECURSIVE = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "rec"},
                     "runtime": {"max_depth": 3}},
    "rec.worker": worker("recursive: true\ntoolsets: [rec]", "Recurse."),
}


def dive(level: int) -> dict[str, Any]:
    return {"tool_calls": [{"tool": "rec", "args": {"input": f"level {level}"}}]}


def test_recursion_stops_at_max_depth_and_the_run_goes_on(build, script, tmp_path: Path) -> None:
    bundle = build(RECURSIVE)
    # Depths 1, 2 and 3 each try to go one deeper; the call from depth 3 is refused.
    s = script({"workers": {"rec": [dive(2), dive(3), dive(4), {"text": "bottom"}, {"text": "middle"}, {"text": "top"}]}})
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", bundle, "go", "--script", s, "--events", events)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "top"
    evs = read_events(events)
    assert [e["depth"] for e in of_kind(evs, "worker_started")] == [1, 2, 3]
    refused = [e for e in of_kind(evs, "tool_returned", tool="rec") if e["outcome"] != "ok"]
    assert [(e["depth"], e["outcome"]) for e in refused] == [(3, "failed")]
    assert "max_depth" in refused[0]["result"] and "4" in refused[0]["result"]
    assert [e["output"] for e in of_kind(evs, "worker_finished")] == ["bottom", "middle", "top"]


def test_the_model_sees_the_depth_refusal_as_a_tool_error(build) -> None:
    bundle = build(RECURSIVE)
    models = Recorder(rec=[[ToolCallPart("rec", {"input": "deeper"})], [ToolCallPart("rec", {"input": "too deep"})],
                           [TextPart("inner")], [TextPart("outer")]])
    result = run_worker(bundle, "go", config=models.config(max_depth=2))  # the run's max_depth wins
    assert result.output == "outer"
    assert len(models.seen["rec"]) == 4  # depth 3 never asked its model
    [refusal] = parts_of(models.seen["rec"][2][-1:], ToolReturnPart)
    assert refusal.tool_name == "rec" and "max_depth" in refusal.model_response_str()

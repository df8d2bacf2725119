"""A recorded run replays to the same output and the same event stream; parallel calls of one worker
find their recordings by where they were made, not by the order they ran in; identical runs record
identical bytes; what a model is shown that changed is stale, any other change of a request a
mismatch with a diff."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.models.test import TestModel

from llm_do.runtime.bundle import load_bundle
from llm_do.runtime.config import RuntimeConfig
from llm_do.runtime.recording.cassette import Cassette, cassette_text
from llm_do.runtime.recording.recorder import Recorder
from llm_do.runtime.recording.redaction import Redactor
from llm_do.runtime.recording.replay import Replayer
from llm_do.runtime.runtime import Runtime
from tests.support.cli import worker

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker("description: Plans.\ntoolsets: [helper, filesystem_project]\n"
                          "approvals: [ask write_file]", "Ask the helper about each topic."),
    "helper.worker": worker("description: Looks one topic up.\ntoolsets: [filesystem_project_ro]", "Read notes.txt."),
    "notes.txt": "the notes\n",
}


def models(parallel: bool) -> Callable[[str], Any]:
    """main: both helpers in one response (parallel) or one after another, then a write, then text;
    helper: reads notes.txt, then answers (the first topic slowly, so the second finishes first)."""

    async def main(messages: list[Any], info: Any) -> ModelResponse:
        turn = sum(1 for m in messages if m.kind == "response")
        if turn == 0:
            calls = [ToolCallPart("helper", {"input": "alpha"}, tool_call_id="ca"),
                     ToolCallPart("helper", {"input": "beta"}, tool_call_id="cb")]
            return ModelResponse(parts=calls if parallel else calls[:1])
        if turn == 1 and not parallel:
            return ModelResponse(parts=[ToolCallPart("helper", {"input": "beta"}, tool_call_id="cb")])
        if not any(getattr(p, "tool_name", None) == "write_file" for m in messages for p in m.parts):
            return ModelResponse(parts=[ToolCallPart("write_file", {"path": "out.txt", "content": "done"}, tool_call_id="cw")])
        return ModelResponse(parts=[TextPart("all done")])

    async def helper(messages: list[Any], info: Any) -> ModelResponse:
        topic = messages[0].parts[-1].content
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("read_file", {"path": "notes.txt"}, tool_call_id="r")])
        if "alpha" in topic:
            await asyncio.sleep(0.05)
        return ModelResponse(parts=[TextPart(f"about {topic.split()[-1]}")])

    table = {"main": FunctionModel(main, model_name="fn-main"), "helper": FunctionModel(helper, model_name="fn-helper")}
    return table.__getitem__


def record(bundle_path: Path, parallel: bool, **config: Any) -> tuple[Cassette, list[dict[str, Any]], Any]:
    bundle = load_bundle(bundle_path)
    recorder = Recorder(bundle, "main")
    events: list[dict[str, Any]] = []

    def hear(event: Any) -> None:
        recorder.on_event(event)
        events.append(event.to_dict())

    runtime = Runtime(bundle, RuntimeConfig(model_for=models(parallel), wrap_model=recorder.wrap, on_event=hear, **config))
    output = runtime.run("go").output
    recorder.inputs.append({"input": "go"})
    recorder.outputs.append(output)
    return recorder.cassette(Redactor({}, [])), events, output


def replay(bundle_path: Path, cassette: Cassette, **config: Any) -> tuple[list[dict[str, Any]], Any, Replayer]:
    bundle = load_bundle(bundle_path)
    replayer = Replayer(cassette, bundle)
    events: list[dict[str, Any]] = []
    runtime = Runtime(bundle, RuntimeConfig(model_for=lambda _: TestModel(), wrap_model=replayer.wrap,
                                            on_event=lambda e: events.append(e.to_dict()), **config))
    return events, runtime.run("go").output, replayer


def test_a_recorded_run_replays_to_the_same_output_and_event_stream(build: Callable[..., Path]) -> None:
    bundle = build(PROJECT)
    cassette, recorded, output = record(bundle, parallel=False, approval_mode="approve_all")
    (bundle.parent / "out.txt").unlink()
    replayed, again, replayer = replay(bundle, cassette, approval_mode="approve_all")
    assert again == output == "all done"
    assert replayed == recorded
    assert replayer.unused() == []
    assert [c.path for c in cassette.calls] == ["main", "main/helper@1.1", "main/helper@2.1"]
    main = cassette.calls[0]
    assert main.model == "fn-main" and main.node is not None and main.node.startswith("sha256:")
    assert [(t.at, t.tool, t.outcome) for t in main.tool_calls] == [
        ("1.1", "helper", "success"), ("2.1", "helper", "success"), ("3.1", "write_file", "success")]
    assert [(a.at, a.tool, a.approved, a.by) for a in main.approvals] == [("3.1", "write_file", True, "mode")]
    shown = main.requests[0].shown
    assert shown.instructions == "Ask the helper about each topic."
    assert sorted(t.name for t in shown.tools) == ["helper", "list_files", "read_file", "write_file"]
    assert next(t for t in shown.tools if t.name == "helper").description == "Call the worker 'helper': Looks one topic up."


def test_parallel_calls_of_one_worker_match_by_where_they_were_made(build: Callable[..., Path]) -> None:
    bundle = build(PROJECT)
    cassette, recorded, output = record(bundle, parallel=True, approval_mode="approve_all")
    helpers = {c.path: c for c in cassette.calls if c.worker == "helper"}
    assert sorted(helpers) == ["main/helper@1.1", "main/helper@1.2"]
    assert "alpha" in str(helpers["main/helper@1.1"].requests[0].messages)
    # the slow first call finished last while recording; replayed, both answer at once
    finished = [e["output"] for e in recorded if e["event"] == "worker_finished" and e["worker"] == "helper"]
    assert finished == ["about beta", "about alpha"]
    replayed, again, _ = replay(bundle, cassette, approval_mode="approve_all")
    assert again == output
    # the same events, in an order (and with usage so far) that depends on which call finished first
    def key(events: list[dict[str, Any]]) -> list[str]:
        return sorted(str(sorted((k, v) for k, v in e.items() if k != "usage")) for e in events)

    assert key(replayed) == key(recorded)


def test_identical_runs_record_identical_bytes(build: Callable[..., Path]) -> None:
    bundle = build(PROJECT)
    first = cassette_text(record(bundle, parallel=False, approval_mode="approve_all")[0])
    second = cassette_text(record(bundle, parallel=False, approval_mode="approve_all")[0])
    assert first == second
    assert "timestamp" not in first and "run_id" not in first
    assert '"tool_call_id": "main:1.1"' in first


def test_a_changed_tool_result_fails_the_replay_with_a_diff_of_the_requests(build: Callable[..., Path]) -> None:
    bundle = build(PROJECT)
    cassette = record(bundle, parallel=False, approval_mode="approve_all")[0]
    (bundle.parent / "notes.txt").write_text("other notes\n")
    with pytest.raises(Exception) as caught:
        replay(bundle, cassette, approval_mode="approve_all")
    text = str(caught.value)
    assert "request 2 of worker 'helper' (main/helper@1.1) differs from the recorded one" in text
    assert '-        "content": "the notes\\n",' in text and '+        "content": "other notes\\n",' in text


def test_what_the_model_is_shown_changed_is_stale_in_the_words_of_diff() -> None:
    from llm_do.runtime.recording.cassette import Shown, ToolShown
    from llm_do.runtime.recording.replay import shown_changes

    then = Shown(model="openai:gpt-4o", instructions="a", tools=[ToolShown(name="x", description="d", parameters={"p": 1}),
                                                                 ToolShown(name="gone")])
    now = Shown(model="openai:gpt-4o-mini", instructions="b", tools=[ToolShown(name="x", description="e", parameters={"p": 2}),
                                                                     ToolShown(name="new")])
    assert shown_changes("main", then, now) == [
        "model of main changed (openai:gpt-4o -> openai:gpt-4o-mini)",
        "instructions of main changed",
        "tool gone of main removed",
        "tool new of main added",
        "description of tool x offered to main changed",
        "input schema of tool x offered to main changed",
    ]


def test_a_streamed_run_records_its_parts_and_replays_the_same_stream(build: Callable[..., Path]) -> None:
    from llm_do.runtime.script import Script, ScriptPlayer

    bundle_path = build(PROJECT)
    script = Script.model_validate({"workers": {
        "main": [{"tool_calls": [{"tool": "helper", "args": {"input": "alpha"}}]}, {"text": "all done, thank you"}],
        "helper": [{"text": "about alpha"}]}})
    bundle = load_bundle(bundle_path)
    recorder = Recorder(bundle, "main")
    recorded: list[dict[str, Any]] = []
    config = RuntimeConfig(model_for=ScriptPlayer(script).model_for, stream=True, on_event=lambda e: recorded.append(e.to_dict()))
    output = Runtime(bundle, recorder.config(config)).run("go").output
    cassette = recorder.cassette(Redactor({}, []))
    assert all(exchange.streamed for call in cassette.calls for exchange in call.requests)
    deltas = [e["text"] for e in recorded if e["event"] == "output_delta" and e["worker"] == "main"]
    assert len(deltas) > 1 and "".join(deltas) == "all done, thank you"

    replayed, again, _ = replay(bundle_path, cassette, stream=True)
    assert again == output == "all done, thank you"
    assert replayed == recorded

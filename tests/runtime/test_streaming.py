"""Streamed runs: the scripted model plays the same turns when the run streams (text in chunks,
tool calls as deltas), and `OutputDelta` events carry the text only in runs that stream."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from llm_do.runtime import Runtime, RuntimeConfig
from llm_do.runtime.script import Script, ScriptPlayer, ScriptTurnRejected, split_text
from tests.support.cli import worker

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker("toolsets: [filesystem_project, helper]", "Work."),
    "helper.worker": worker("", "Help."),
}


def scripted_run(bundle: Path, workers: dict[str, Any], *, stream: bool, approve: bool = True) -> tuple[Any, list[Any]]:
    player = ScriptPlayer(Script.model_validate({"workers": workers}))
    events: list[Any] = []
    config = RuntimeConfig(model_for=player.model_for, stream=stream, on_event=events.append,
                           approval_mode="approve_all" if approve else None)
    result = Runtime.load(bundle, config).run("go")
    assert not player.unplayed()
    return result, events


def deltas(events: list[Any], **match: Any) -> list[str]:
    return [e.text for e in events if e.kind == "output_delta" and all(getattr(e, k) == v for k, v in match.items())]


def test_a_streamed_text_turn_arrives_in_a_few_chunks_that_make_the_output(build) -> None:
    text = "The scripted reply, long enough to be cut into a few chunks at word boundaries."
    result, events = scripted_run(build(PROJECT), {"main": [{"text": text}]}, stream=True)
    chunks = deltas(events, worker="main", depth=1)
    assert result.output == text
    assert len(chunks) > 1
    assert "".join(chunks) == text


def test_streamed_tool_calls_run_in_order_and_nested_workers_stream_too(build) -> None:
    bundle = build(PROJECT)
    workers = {
        "main": [
            {"tool_calls": [{"tool": "write_file", "args": {"path": "a.txt", "content": "one"}},
                            {"tool": "read_file", "args": {"path": "a.txt"}},
                            {"tool": "helper", "args": {"input": "check"}}]},
            {"text": "all done"},
        ],
        "helper": [{"text": "helper says hi"}],
    }
    result, events = scripted_run(bundle, workers, stream=True)
    assert result.output == "all done"
    returned = [(e.tool, e.outcome, e.result) for e in events if e.kind == "tool_returned"]
    assert [r[:2] for r in returned] == [("write_file", "ok"), ("read_file", "ok"), ("helper", "ok")]
    assert "one" in returned[1][2]
    assert "".join(deltas(events, worker="helper", depth=2)) == "helper says hi"
    assert (bundle.parent / "a.txt").read_text() == "one"


def test_a_streamed_turn_the_run_rejects_is_named_with_its_turn(build) -> None:
    workers = {"main": [{"text": "first"}]}
    bundle = build(PROJECT)
    bad = {"main": [{"tool_calls": [{"tool": "read_file", "args": {"path": 7, "nonsense": True}}]}, {"text": "x"}]}
    with pytest.raises(ScriptTurnRejected) as caught:
        scripted_run(bundle, bad, stream=True)
    assert caught.value.turn == 1
    assert "read_file" in str(caught.value)
    assert scripted_run(bundle, workers, stream=True)[0].output == "first"


@pytest.mark.process
def test_a_structured_output_turn_streams_through_the_output_tool(build) -> None:
    files = {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["schemas.py"],
                         "entry": {"worker": "main"}},
        "schemas.py": "from pydantic import BaseModel\n\n\nclass Verdict(BaseModel):\n    score: int\n",
        "main.worker": worker("schema_out_ref: schemas.py:Verdict", "Judge."),
    }
    result, events = scripted_run(build(files), {"main": [{"output": {"score": 4}}]}, stream=True)
    assert result.output.score == 4
    assert deltas(events) == []


def test_without_streaming_no_output_delta_is_sent(build) -> None:
    result, events = scripted_run(build(PROJECT), {"main": [{"text": "quiet reply"}]}, stream=False)
    assert result.output == "quiet reply"
    assert deltas(events) == []
    assert [e.kind for e in events][-1] == "run_finished"


@pytest.mark.parametrize("text", ["", "x", "two words", "a b c d e f g h", "nospacesatallinthisratherlongword",
                                  "line one\nline two\nline three and more"])
def test_split_text_gives_the_text_back_in_at_most_the_pieces_asked(text: str) -> None:
    chunks = split_text(text, 3)
    assert "".join(chunks) == text
    assert 1 <= len(chunks)
    assert all(chunks) or chunks == [""]


def test_a_scripted_model_serves_pydantic_ais_run_stream_too() -> None:
    import asyncio

    from pydantic_ai import Agent

    player = ScriptPlayer(Script.model_validate({"workers": {"main": [{"text": "streamed by run_stream, chunk by chunk"}]}}))
    agent = Agent(player.model_for("main"))

    async def collect() -> list[str]:
        async with agent.run_stream("go") as result:
            return [text async for text in result.stream_text(delta=True, debounce_by=None)]

    chunks = asyncio.run(collect())
    assert len(chunks) > 1
    assert "".join(chunks) == "streamed by run_stream, chunk by chunk"


def test_a_model_that_cannot_stream_answers_whole_in_a_streaming_run(build) -> None:
    from pydantic_ai import ModelResponse, TextPart
    from pydantic_ai.models.function import FunctionModel

    events: list[Any] = []
    model = FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart("whole")]))
    result = Runtime.load(build(PROJECT), RuntimeConfig(model=model, stream=True, on_event=events.append)).run("go")
    assert result.output == "whole"
    assert deltas(events) == []

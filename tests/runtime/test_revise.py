"""Approvals: revise with feedback. The tool does not run; the model reads the feedback as the
call's result, marked as a revision request, and tries again. From a callback, from a host on the
event stream, and the seed API's names for decisions, callbacks and `run_worker`'s keywords."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic_ai import TextPart

from llm_do.runtime import (
    ApprovalDecision,
    ApprovalRequest,
    InputProblem,
    Runtime,
    RuntimeConfig,
    approve_all,
    approve_all_callback,
    reject_all,
    run_worker,
    run_worker_async,
    strict_mode_callback,
)
from llm_do.runtime.events import ApprovalRequested, RuntimeEvent
from tests.support.approvals import project, tool_returns, turns, write_part
from tests.support.cli import worker

FEEDBACK = "write it to notes/b.txt instead, and in French"


def test_a_revise_answer_reaches_the_model_and_the_tool_does_not_run(build) -> None:
    bundle = build(project("toolsets: [filesystem_project]"))
    asked: list[str] = []

    def callback(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request.args["path"])
        return ApprovalDecision.revise(FEEDBACK) if request.args["path"] == "a.txt" else ApprovalDecision(True)

    seen: list[list[Any]] = []
    events: list[RuntimeEvent] = []
    model = turns([write_part("a.txt")], [write_part("notes/b.txt", "bonjour")], [TextPart("done")], seen=seen)
    result = run_worker(bundle, "go", config=RuntimeConfig(model=model, approval_mode="prompt", approval_callback=callback,
                                                           on_event=events.append))
    assert result.output == "done"
    assert asked == ["a.txt", "notes/b.txt"]
    assert not (bundle.parent / "a.txt").exists()
    assert (bundle.parent / "notes" / "b.txt").read_text() == "bonjour"
    [revised] = tool_returns(seen[1], "write_file")  # what the model read before its second try
    text = revised.model_response_str()
    assert revised.outcome == "failed" and "revision requested: the user did not let" in text and FEEDBACK in text and "denied" not in text
    decided = [e.to_dict() for e in events if e.kind == "approval_decided"]
    assert [(d["approved"], d["by"], d["note"], d["feedback"]) for d in decided] == [
        (False, "callback", None, FEEDBACK), (True, "callback", None, None)]
    outcomes = [(e.to_dict()["outcome"], e.to_dict()["result"]) for e in events if e.kind == "tool_returned"]
    assert outcomes[0] == ("revised", FEEDBACK)
    assert outcomes[1][0] == "ok"


def test_a_denial_is_not_a_revision(build) -> None:
    bundle = build(project("toolsets: [filesystem_project]"))
    events: list[RuntimeEvent] = []
    seen: list[list[Any]] = []
    model = turns([write_part("a.txt")], [TextPart("done")], seen=seen)
    run_worker(bundle, "go", config=RuntimeConfig(model=model, approval_mode="prompt", on_event=events.append,
                                                  approval_callback=lambda r: ApprovalDecision(False, note="not today")))
    [ret] = tool_returns(seen[1], "write_file")
    assert "not today" in ret.model_response_str() and "revision" not in ret.model_response_str()
    assert [e.to_dict()["outcome"] for e in events if e.kind == "tool_returned"] == ["denied"]
    assert [e.to_dict()["feedback"] for e in events if e.kind == "approval_decided"] == [None]


def test_a_host_on_the_event_stream_can_ask_for_a_revision(build) -> None:
    bundle = build(project("toolsets: [filesystem_project]"))
    seen: list[list[Any]] = []
    model = turns([write_part("a.txt")], [TextPart("revised")], seen=seen)
    runtime = Runtime.load(bundle, RuntimeConfig(model=model, approval_mode="prompt"))
    kinds: list[str] = []

    async def host() -> None:
        async for event in runtime.events("go"):
            kinds.append(event.kind)
            if isinstance(event, ApprovalRequested):
                event.respond(ApprovalDecision(approved=False, feedback="use a shorter name"))

    asyncio.run(host())
    assert not (bundle.parent / "a.txt").exists()
    [ret] = tool_returns(seen[1], "write_file")
    assert "revision requested" in ret.model_response_str() and "use a shorter name" in ret.model_response_str()
    assert kinds[-3:] == ["tool_returned", "worker_finished", "run_finished"]


def test_decisions_take_the_seed_api_names_and_refuse_contradictions() -> None:
    assert ApprovalDecision(approved=True, approve_for_session=True) == ApprovalDecision(True, "session")
    assert ApprovalDecision(True, "session").approve_for_session is True
    assert ApprovalDecision(True).approve_for_session is False and ApprovalDecision(True).remember == "once"
    assert ApprovalDecision(False, feedback="x").revised and not ApprovalDecision(False, note="x").revised
    with pytest.raises(ValueError, match="contradicts"):
        ApprovalDecision(True, "once", approve_for_session=True)
    with pytest.raises(ValueError, match="cannot also be approved"):
        ApprovalDecision(True, feedback="do it differently")
    with pytest.raises(ValueError, match="feedback is empty"):
        ApprovalDecision.revise("  ")
    assert approve_all_callback is approve_all and strict_mode_callback is reject_all


# --- run_worker's keywords and a worker's input fields never collide -------------------------------

KEYWORD_PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["schemas.py", "tools.py"],
                     "entry": {"worker": "main"}},
    "schemas.py": '''
        from llm_do.runtime import WorkerArgs


        class Job(WorkerArgs):
            worker: str
            config: str = "none"
            name: str = "-"
            parent: str = "-"

            def prompt_messages(self):
                return [f"worker={self.worker} config={self.config} name={self.name} parent={self.parent}"]
    ''',
    "tools.py": '''
        from pydantic_ai import RunContext

        from llm_do.runtime import call_worker_async


        async def delegate(ctx: RunContext) -> str:
            """Call main three ways with fields named like the call machinery's keywords."""
            a = await ctx.deps.call_worker("main", worker="w", name="n", parent="p")
            b = await ctx.deps.worker("main").call_async(worker="w", name="n2", parent="p2")
            c = await call_worker_async(ctx, "main", worker="w", name="n3")
            return " | ".join([a, b, c])


        TOOLS = {"delegate": delegate}
    ''',
    "main.worker": worker("schema_in_ref: schemas.py:Job", "Do the job."),
    "other.worker": worker("", "Other."),
    "boss.worker": worker("tools: [delegate]\ncalls: [main]\napprovals:\n  - allow delegate", "Delegate."),
}


def echo_prompt() -> Any:
    """A model that answers with the prompt it was given."""
    from pydantic_ai import ModelResponse
    from pydantic_ai.models.function import FunctionModel

    def respond(messages: list[Any], info: Any) -> ModelResponse:
        return ModelResponse(parts=[TextPart(str(messages[0].parts[-1].content))])

    return FunctionModel(respond)


@pytest.mark.process
def test_run_keywords_are_never_input_fields(build) -> None:
    bundle = build(KEYWORD_PROJECT)
    config = RuntimeConfig(model=echo_prompt())
    # a field named like a run keyword travels in input_data (or a positional mapping)
    assert run_worker(bundle, input_data={"worker": "w1", "config": "c1"}, config=config).output == "worker=w1 config=c1 name=- parent=-"
    assert run_worker(bundle, {"worker": "w2"}, config=config).output == "worker=w2 config=none name=- parent=-"
    # `worker=` is always the run's keyword: it picks the worker to run
    assert run_worker(bundle, "hi", worker="other", config=config).output == "hi"
    with pytest.raises(InputProblem, match="the bundle has no worker 'w3'"):
        run_worker(bundle, worker="w3", config=config)
    with pytest.raises(InputProblem, match="give the input once"):
        run_worker(bundle, {"worker": "w"}, input_data={"worker": "w"}, config=config)


@pytest.mark.process
def test_input_fields_named_like_call_keywords_reach_the_worker(build) -> None:
    """`name`, `parent`, `worker`: a Python call's keyword arguments are all input fields."""
    from pydantic_ai import ModelResponse, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    bundle = build(KEYWORD_PROJECT)

    def boss(messages: list[Any], info: Any) -> ModelResponse:
        returned = [p for m in messages for p in m.parts if p.part_kind == "tool-return"]
        if not returned:
            return ModelResponse(parts=[ToolCallPart("delegate", {})])
        return ModelResponse(parts=[TextPart(returned[0].model_response_str())])

    config = RuntimeConfig(model_for=lambda w: FunctionModel(boss) if w == "boss" else echo_prompt())
    assert run_worker(bundle, "go", worker="boss", config=config).output == (
        "worker=w config=none name=n parent=p | worker=w config=none name=n2 parent=p2 | "
        "worker=w config=none name=n3 parent=-")


@pytest.mark.process
def test_message_callback_is_on_message(build) -> None:
    bundle = build(KEYWORD_PROJECT)
    got: list[tuple[str, int, int]] = []
    result = asyncio.run(run_worker_async(bundle, input_data={"worker": "w"}, config=RuntimeConfig(model=echo_prompt()),
                                          message_callback=lambda w, d, m: got.append((w, d, len(m)))))
    assert got == [("main", 1, len(result.messages))]
    with pytest.raises(InputProblem, match="give one"):
        run_worker(bundle, input_data={"worker": "w"}, message_callback=print,
                   config=RuntimeConfig(model=echo_prompt(), on_message=print))
    with pytest.raises(InputProblem, match="loaded Runtime"):
        run_worker(Runtime.load(bundle, RuntimeConfig(model=echo_prompt())), input_data={"worker": "w"},
                   message_callback=print)

"""Conversations: `Runtime.chat` and `message_history=` through the Python API, threads on disk,
and `llm-do chat` piped (one message a line, one reply a line)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import ModelRequest, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.usage import UsageLimits

from llm_do.runtime import ApprovalDecision, Runtime, RuntimeConfig, run_worker
from llm_do.runtime.conversation_store import ThreadProblem
from tests.support.cli import one_line_error, run_cli, worker

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker("toolsets: [filesystem_project, helper]", "Talk."),
    "helper.worker": worker("", "Help."),
}


def prompts(messages: list[Any]) -> list[str]:
    """The user prompts among `messages`, in order."""
    return [p.content for m in messages if isinstance(m, ModelRequest) for p in m.parts if isinstance(p, UserPromptPart)]


class Recorder:
    """A model that answers with what it was shown: the prompts so far, joined."""

    def __init__(self) -> None:
        self.seen: list[list[str]] = []

    def __call__(self, messages: list[Any], info: Any) -> ModelResponse:
        shown = prompts(messages)
        self.seen.append(shown)
        return ModelResponse(parts=[TextPart(" / ".join(shown))])


# --- the Python API ----------------------------------------------------------------------------------


def test_the_second_turn_is_answered_with_the_first_in_its_history(build) -> None:
    model = Recorder()
    conversation = Runtime.load(build(PROJECT), RuntimeConfig(model=FunctionModel(model))).chat()
    assert conversation.send("my name is Ada") == "my name is Ada"
    assert conversation.send("what is my name?") == "my name is Ada / what is my name?"
    assert model.seen == [["my name is Ada"], ["my name is Ada", "what is my name?"]]
    assert conversation.turns == 2
    assert conversation.usage == {"requests": 2, "tool_calls": 0, "input_tokens": conversation.usage["input_tokens"],
                                  "output_tokens": conversation.usage["output_tokens"]}  # a dict, as RunResult.usage
    conversation.reset()
    assert (conversation.messages, conversation.turns, conversation.usage["requests"]) == ([], 0, 0)


def test_send_async_and_reset(build) -> None:
    model = Recorder()
    conversation = Runtime.load(build(PROJECT), RuntimeConfig(model=FunctionModel(model))).chat()

    async def talk() -> str:
        await conversation.send_async("one")
        conversation.reset()
        return await conversation.send_async("two")

    assert asyncio.run(talk()) == "two"


def test_run_worker_continues_from_message_history(build) -> None:
    bundle = build(PROJECT)
    model = FunctionModel(Recorder())
    first = run_worker(bundle, "hello", config=RuntimeConfig(model=model))
    second = run_worker(bundle, "again", config=RuntimeConfig(model=model), message_history=first.messages)
    assert second.output == "hello / again"
    assert prompts(second.messages) == ["hello", "again"]


def test_a_called_worker_starts_fresh_on_every_turn(build) -> None:
    seen: dict[str, list[list[str]]] = {"main": [], "helper": []}

    def model_for(name: str) -> FunctionModel:
        def respond(messages: list[Any], info: Any) -> ModelResponse:
            seen[name].append(prompts(messages))
            last = messages[-1].parts[-1]
            if name == "main" and isinstance(last, UserPromptPart):
                from pydantic_ai import ToolCallPart

                return ModelResponse(parts=[ToolCallPart("helper", {"input": f"help with {last.content}"})])
            return ModelResponse(parts=[TextPart("ok")])

        return FunctionModel(respond)

    conversation = Runtime.load(build(PROJECT), RuntimeConfig(model_for=model_for, approval_mode="approve_all")).chat()
    conversation.send("a")
    conversation.send("b")
    assert seen["helper"] == [["help with a"], ["help with b"]]
    assert seen["main"][-1] == ["a", "b"]


def test_usage_limits_apply_per_turn(build) -> None:
    config = RuntimeConfig(model=FunctionModel(Recorder()), usage_limits=UsageLimits(request_limit=1))
    conversation = Runtime.load(build(PROJECT), config).chat()
    for n in range(3):
        conversation.send(f"turn {n}")
    assert conversation.usage["requests"] == 3


def test_an_approval_for_the_session_lasts_across_turns(build) -> None:
    asked: list[str] = []

    def callback(request: Any) -> ApprovalDecision:
        asked.append(request.tool)
        return ApprovalDecision(True, "session")

    def respond(messages: list[Any], info: Any) -> ModelResponse:
        from pydantic_ai import ToolCallPart

        if isinstance(messages[-1].parts[-1], UserPromptPart):
            return ModelResponse(parts=[ToolCallPart("write_file", {"path": "x.txt", "content": "same"})])
        return ModelResponse(parts=[TextPart("written")])

    bundle = build(PROJECT)
    conversation = Runtime.load(bundle, RuntimeConfig(model=FunctionModel(respond), approval_mode="prompt",
                                                      approval_callback=callback)).chat()
    conversation.send("write it")
    conversation.send("write it again")
    assert asked == ["write_file"]


@pytest.mark.filterwarnings("error")  # pydantic 2.12.0-2.12.1 warned on every thread written
def test_a_thread_is_written_after_every_turn_and_continued_by_another_runtime(build) -> None:
    bundle = build(PROJECT)
    config = RuntimeConfig(model=FunctionModel(Recorder()))
    first = Runtime.load(bundle, config).chat(thread="t-1")
    first.send("remember 42")
    path = bundle.parent / ".llm-do" / "threads" / "t-1.json"
    stored = json.loads(path.read_text())
    assert stored["worker"] == "main"
    assert stored["bundle_digest"] == json.loads(bundle.read_text())["digest"]
    assert len(stored["messages"]) == 2
    later = Runtime.load(bundle, config).chat(thread="t-1")
    assert later.note is None
    assert later.send("what number?") == "remember 42 / what number?"
    assert len(json.loads(path.read_text())["messages"]) == 4
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_a_thread_made_with_another_bundle_says_so(build) -> None:
    bundle = build(PROJECT)
    config = RuntimeConfig(model=FunctionModel(Recorder()))
    Runtime.load(bundle, config).chat(thread="t").send("hi")
    changed = dict(PROJECT, **{"main.worker": worker("toolsets: [filesystem_project, helper]", "Talk more.")})
    rebuilt = build(changed)
    assert rebuilt == bundle
    conversation = Runtime.load(bundle, config).chat(thread="t")
    assert conversation.note is not None and "another bundle" in conversation.note
    assert conversation.send("still there?") == "hi / still there?"


@pytest.mark.parametrize("thread", ["../escape", "a/b", "", "sp ace", "x" * 101])
def test_a_thread_id_that_is_no_plain_name_is_refused(build, thread: str) -> None:
    with pytest.raises(ThreadProblem, match="letters, digits"):
        Runtime.load(build(PROJECT)).chat(thread=thread)


def test_an_unreadable_thread_file_is_a_clear_problem(build) -> None:
    """Signed as llm-do signs threads (so the checksum is not what fails), but no messages."""
    from llm_do.runtime.conversation_store import CHECKSUM, _checksum
    from llm_do.toolkit.user_state import state_key

    bundle = build(PROJECT)
    path = bundle.parent / ".llm-do" / "threads" / "bad.json"
    path.parent.mkdir(parents=True)
    doc = {"thread_format": 1, "id": "bad", "worker": "main", "messages": [{"nonsense": 1}]}
    path.write_text(json.dumps({**doc, CHECKSUM: _checksum(state_key(create=True), doc)}))
    with pytest.raises(ThreadProblem, match="not a usable thread"):
        Runtime.load(bundle).chat(thread="bad")
    path.write_text("{not json")
    with pytest.raises(ThreadProblem, match="not a usable thread"):
        Runtime.load(bundle).chat(thread="bad")


def test_a_thread_of_another_worker_is_refused(build) -> None:
    bundle = build(PROJECT)
    Runtime.load(bundle, RuntimeConfig(model=FunctionModel(Recorder()))).chat(thread="h", worker="helper").send("x")
    with pytest.raises(ThreadProblem, match="worker 'helper', not 'main'"):
        Runtime.load(bundle).chat(thread="h")


# --- llm-do chat, piped ------------------------------------------------------------------------------


def test_a_thread_written_leaves_the_lock_the_build_of_its_sources(build, monkeypatch: pytest.MonkeyPatch) -> None:
    """The build record leaves `.llm-do/` out of its listing (no search of the build enters it), so
    the next load is answered by the record, with no compile in a child."""
    from llm_do.runtime import built_lock

    bundle = build(PROJECT)
    config = RuntimeConfig(model=FunctionModel(Recorder()))
    Runtime.load(bundle, config).chat(thread="t-1").send("remember 42")
    assert (bundle.parent / ".llm-do" / "threads" / "t-1.json").is_file()
    compared: list[Path] = []
    monkeypatch.setattr(built_lock, "compare_in_child", lambda lock, data, project: compared.append(project))
    Runtime.load(bundle, config)
    assert compared == []
    (bundle.parent / "notes.txt").write_text("a file a build may find")
    with pytest.raises(AttributeError):  # the stand-in's answer: a compile was asked for
        Runtime.load(bundle, config)
    assert compared == [bundle.parent / "project.json"]


def two_turns(first: str = "first reply", second: str = "second reply") -> dict[str, Any]:
    return {"workers": {"main": [{"text": first}, {"text": second}]}}


def test_a_piped_chat_answers_each_line_and_keeps_the_thread(build, script) -> None:
    bundle = build(PROJECT)
    result = run_cli("chat", bundle, "--thread", "demo", "--script", script(two_turns()), input="hello\n\nagain\n")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == ["first reply", "second reply"]
    assert result.stderr == ""
    thread = json.loads((bundle.parent / ".llm-do" / "threads" / "demo.json").read_text())
    assert len(thread["messages"]) == 4
    assert prompts_of(thread) == ["hello", "again"]


def test_a_chat_turn_leaves_the_next_run_uncompiled(build, script, monkeypatch: pytest.MonkeyPatch) -> None:
    from llm_do.compiler.build import lock_check

    compared: list[Path] = []
    real = lock_check.compare_with_build
    monkeypatch.setattr(lock_check, "compare_with_build", lambda project, *a, **k: compared.append(project) or real(project, *a, **k))
    bundle = build(PROJECT)
    assert run_cli("chat", bundle, "--thread", "demo", "--script", script(two_turns()), input="hello\n").exit_code == 0
    result = run_cli("exec", bundle, "go", "--script", script({"workers": {"main": [{"text": "done"}]}}))
    assert result.exit_code == 0, result.stderr
    assert (bundle.parent / ".llm-do" / "threads" / "demo.json").is_file()
    assert compared == []


def prompts_of(thread: dict[str, Any]) -> list[str]:
    return [p["content"] for m in thread["messages"] for p in m["parts"] if p["part_kind"] == "user-prompt"]


def test_a_second_process_continues_the_thread(build, script) -> None:
    bundle = build(PROJECT)
    assert run_cli("chat", bundle, "--thread", "demo", "--script", script(two_turns("a", "b")),
                   input="one\ntwo\n").exit_code == 0
    result = run_cli("chat", "--thread", "demo", "--script", script({"workers": {"main": [{"text": "c"}]}}),
                     input="three\n", cwd_to=bundle.parent)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "c\n"
    thread = json.loads((bundle.parent / ".llm-do" / "threads" / "demo.json").read_text())
    assert prompts_of(thread) == ["one", "two", "three"]
    assert len(thread["messages"]) == 6


def test_a_thread_continued_on_a_rebuilt_bundle_says_so_on_stderr(build, script) -> None:
    bundle = build(PROJECT)
    assert run_cli("chat", bundle, "--thread", "t", "--script", script(two_turns()), input="x\n").exit_code == 0
    build(dict(PROJECT, **{"main.worker": worker("toolsets: [filesystem_project, helper]", "Changed.")}))
    result = run_cli("chat", bundle, "--thread", "t", "--model", "test", input="y\n")
    assert result.exit_code == 0, result.stderr
    assert "thread 't' was made with another bundle" in one_line_error(result)


def test_slash_commands_in_a_piped_chat(build, script) -> None:
    bundle = build(PROJECT)
    result = run_cli("chat", bundle, "--thread", "s", "--script", script(two_turns()),
                     input="hello\n/usage\n/reset\n/usage\nagain\n/exit\nnever sent\n")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == ["first reply", "second reply"]  # one reply per line; /usage is not one
    usage = [line for line in result.stderr.splitlines() if " · " in line]
    assert usage[0].startswith("1 turn · 1 request · 0 tool calls · ")
    assert usage[1] == "0 turns · 0 requests · 0 tool calls · 0 input tokens · 0 output tokens"  # after /reset
    thread = json.loads((bundle.parent / ".llm-do" / "threads" / "s.json").read_text())
    assert prompts_of(thread) == ["again"]


def test_script_turns_are_consumed_across_chat_turns_and_leftovers_reported(build, script) -> None:
    bundle = build(PROJECT)
    s = script({"workers": {"main": [{"text": "1"}, {"text": "2"}, {"text": "3"}]}})
    result = run_cli("chat", bundle, "--script", s, input="a\nb\n")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == ["1", "2"]
    assert "script turns not used: 'main' 1 of 3" in result.stderr
    strict = run_cli("chat", bundle, "--script", s, "--strict-script", input="a\nb\n")
    assert strict.exit_code == 1


def test_a_failed_turn_ends_a_piped_chat_with_exit_1(build, script) -> None:
    bundle = build(PROJECT)
    result = run_cli("chat", bundle, "--script", script({"workers": {"main": [{"text": "only one"}]}}), input="a\nb\n")
    assert result.exit_code == 1
    assert result.stdout == "only one\n"
    assert "no more turns for worker 'main'" in one_line_error(result)


@pytest.mark.parametrize("thread", ["../x", "a b"])
def test_a_bad_thread_id_is_a_usage_error(build, thread: str) -> None:
    result = run_cli("chat", build(PROJECT), "--thread", thread, "--model", "test", input="")
    assert result.exit_code == 2
    assert "letters, digits" in one_line_error(result)


@pytest.mark.process
def test_an_entry_worker_without_a_prompt_cannot_chat(build, tmp_path: Path) -> None:
    files = {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["schemas.py"],
                         "entry": {"worker": "main"}},
        "schemas.py": "from llm_do.runtime import WorkerArgs\n\n\nclass Job(WorkerArgs):\n    size: int\n\n"
                      "    def prompt_messages(self):\n        return [str(self.size)]\n",
        "main.worker": worker("schema_in_ref: schemas.py:Job", "Do it."),
    }
    result = run_cli("chat", build(files), "--model", "test", input="hi\n")
    assert result.exit_code == 2
    assert "takes size, not a message" in one_line_error(result)


def test_chat_with_no_bundle_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli("chat", "--model", "test", input="", cwd_to=tmp_path)
    assert result.exit_code == 2
    assert "no such bundle" in one_line_error(result)


def test_a_worker_file_edited_since_the_build_refuses_the_chat_unless_as_built(build, script) -> None:
    bundle = build(PROJECT)
    edited = bundle.parent / "main.worker"
    edited.write_text(edited.read_text() + "Edited.\n")
    stamp = bundle.stat().st_mtime + 10
    os.utime(edited, (stamp, stamp))
    refused = run_cli("chat", bundle, "--script", script(two_turns()), input="a\nb\n")
    assert refused.exit_code == 3
    assert refused.stdout == ""
    assert "changed: main.worker" in one_line_error(refused)
    result = run_cli("chat", bundle, "--script", script(two_turns()), "--as-built", input="a\nb\n")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == ["first reply", "second reply"]
    assert "main.worker" in one_line_error(result) and "it runs as built (--as-built)" in result.stderr


FUNCTION_ENTRY = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"function": "flow.py:main", "calls": ["helper"]}},
    "helper.worker": worker("", "Help."),
    "flow.py": "async def main(ctx, input):\n    return await ctx.call_worker('helper', input)\n",
}


@pytest.mark.process
def test_a_project_whose_entry_is_a_function_chats_with_a_worker_it_names(build, script) -> None:
    bundle = build(FUNCTION_ENTRY)
    refused = run_cli("chat", bundle, "--script", script({"workers": {"helper": [{"text": "x"}]}}), input="hi\n")
    assert refused.exit_code == 2
    assert one_line_error(refused) == ("llm-do: the entry is a Python function, which takes no conversation: chat with one "
                                       "of its workers (`llm-do chat --worker NAME`, `runtime.chat(worker=NAME)`)")
    result = run_cli("chat", bundle, "--worker", "helper", "--script", script({"workers": {"helper": [{"text": "one"}, {"text": "two"}]}}),
                     input="hi\nagain\n")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == ["one", "two"]

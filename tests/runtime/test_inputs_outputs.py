"""A run's input (PROMPT, --input-json, entry.args, --attach; Python-call arguments) and output
(text, or structured output validated against schema_out_ref and printed as JSON)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.messages import UserPromptPart
from pydantic_ai.models.function import FunctionModel

from llm_do.runtime import InputProblem, Runtime, RuntimeConfig, run_worker
from llm_do.runtime.script import Script, ScriptPlayer, ScriptTurnRejected
from tests.support.cli import one_line_error, run_cli
from tests.support.events import of_kind, read_events

pytestmark = pytest.mark.process

ECHO = {"workers": {"main": [{"tool_calls": [{"tool": "echo_prompt", "args": {}}]}, {"text": "done"}]}}


def prompt_seen(py_bundle: Path, script, tmp_path: Path, *args: str) -> str:
    """Run the Python project's `main` with `args`; return the prompt its model was given."""
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", py_bundle, *args, "--script", script(ECHO), "--events", events)
    assert result.exit_code == 0, result.stderr
    [returned] = of_kind(read_events(events), "tool_returned", tool="echo_prompt")
    return returned["result"]


# --- CLI input --------------------------------------------------------------------------------------


def test_prompt_sets_input(py_bundle: Path, script, tmp_path: Path) -> None:
    assert prompt_seen(py_bundle, script, tmp_path, "summarize the notes") == "summarize the notes"


def test_entry_args_are_the_default_input(py_bundle: Path, script, tmp_path: Path) -> None:
    assert prompt_seen(py_bundle, script, tmp_path) == "from entry.args"


def test_input_json_replaces_entry_args(py_bundle: Path, script, tmp_path: Path) -> None:
    assert prompt_seen(py_bundle, script, tmp_path, "--input-json", '{"input": "from json"}') == "from json"


def test_input_json_replaces_rather_than_merges(py_bundle: Path, script) -> None:
    result = run_cli("exec", py_bundle, "--input-json", "{}", "--script", script(ECHO))
    assert result.exit_code == 2
    assert "input" in one_line_error(result)


def test_prompt_sets_input_over_input_json(py_bundle: Path, script, tmp_path: Path) -> None:
    seen = prompt_seen(py_bundle, script, tmp_path, "from prompt", "--input-json", '{"input": "from json"}')
    assert seen == "from prompt"


def test_attach_adds_files_to_the_prompt(py_bundle: Path, script, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("twelve bytes")
    (tmp_path / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 8)
    seen = prompt_seen(py_bundle, script, tmp_path, "look", "--attach", tmp_path / "notes.txt",
                       "--attach", tmp_path / "pic.png")
    assert seen == "look | <text/plain 12 bytes> | <image/png 16 bytes>"


def test_attach_paths_are_relative_to_the_working_directory(py_bundle: Path, script, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "here.txt").write_text("abc")
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", py_bundle, "look", "--attach", "here.txt", "--script", script(ECHO),
                     "--events", events, cwd_to=work)
    assert result.exit_code == 0, result.stderr
    [returned] = of_kind(read_events(events), "tool_returned", tool="echo_prompt")
    assert returned["result"] == "look | <text/plain 3 bytes>"


@pytest.mark.parametrize(
    ("value", "says"),
    [("{not json", "--input-json"), ("[1, 2]", "object"), ('{"input": 5}', "input"),
     ('{"input": "x", "extra": 1}', "extra")],
)
def test_bad_input_json_is_a_usage_error(py_bundle: Path, script, value: str, says: str) -> None:
    result = run_cli("exec", py_bundle, "--input-json", value, "--script", script(ECHO))
    assert result.exit_code == 2
    assert says in one_line_error(result)


# --- an entry with its own schemas ----------------------------------------------------------------


def test_an_entry_without_input_refuses_a_prompt(schema_bundle: Path, script) -> None:
    s = script({"workers": {"judge": [{"output": {"score": 1, "reason": "r"}}]}})
    result = run_cli("exec", schema_bundle, "just some text", "--script", s)
    assert result.exit_code == 2
    line = one_line_error(result)
    assert "text" in line and "--input-json" in line, line


def test_an_entry_without_attachments_refuses_attach(schema_bundle: Path, script, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    s = script({"workers": {"judge": [{"output": {"score": 1, "reason": "r"}}]}})
    result = run_cli("exec", schema_bundle, "--input-json", '{"text": "x"}', "--attach", tmp_path / "a.txt", "--script", s)
    assert result.exit_code == 2
    assert "attach" in one_line_error(result)


def test_structured_output_is_printed_as_json(schema_bundle: Path, script) -> None:
    s = script({"workers": {"judge": [{"output": {"score": 9, "reason": "fine"}}]}})
    result = run_cli("exec", schema_bundle, "--input-json", '{"text": "cats"}', "--script", s)
    assert result.exit_code == 0, result.stderr
    assert result.json() == {"score": 9, "reason": "fine"}


def test_structured_output_is_validated(schema_bundle: Path) -> None:
    """An output that does not fit the schema goes back to the model; its next answer is taken."""
    answers = [{"score": "very high", "reason": "x"}, {"score": 3, "reason": "fixed"}]

    def respond(messages: list[Any], info: Any) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, answers.pop(0))])

    result = run_worker(schema_bundle, text="cats", config=RuntimeConfig(model=FunctionModel(respond)))
    assert result.output.model_dump() == {"score": 3, "reason": "fixed"}
    assert answers == []


@pytest.mark.parametrize("turns", [1, 2], ids=["last-turn", "more-turns-left"])
def test_a_scripted_output_that_does_not_fit_fails_the_run_with_the_validation_error(schema_bundle: Path, script,
                                                                                     turns: int) -> None:
    """Not "no more turns", and never the next turn: the script's mistake is the error."""
    s = script({"workers": {"judge": [{"output": {"score": "high", "reason": "x"}},
                                      {"output": {"score": 3, "reason": "fixed"}}][:turns]}})
    result = run_cli("exec", schema_bundle, "--input-json", '{"text": "cats"}', "--script", s)
    assert result.exit_code == 1
    line = one_line_error(result)
    assert "worker 'judge', turn 1 of the script: the output does not validate: score:" in line, line
    assert "valid integer" in line and "no more turns" not in line, line
    assert result.stdout == ""


def test_a_scripted_text_for_a_structured_worker_is_refused_before_the_run(schema_bundle: Path, script) -> None:
    s = script({"workers": {"judge": [{"text": "just words"}, {"output": {"score": 3, "reason": "x"}}]}})
    result = run_cli("exec", schema_bundle, "--input-json", '{"text": "cats"}', "--script", s)
    assert result.exit_code == 2
    line = one_line_error(result)
    assert "turn 1 of worker 'judge' is text, but the worker returns structured output" in line, line


def test_a_scripted_text_for_a_structured_worker_fails_a_run_from_python(schema_bundle: Path) -> None:
    """Played without `check_script`, the text reaches the run, which cannot use it as output."""
    player = ScriptPlayer(Script.model_validate({"workers": {"judge": [{"text": "just words"},
                                                                       {"output": {"score": 3, "reason": "x"}}]}}))
    with pytest.raises(ScriptTurnRejected, match=r"worker 'judge', turn 1 of the script: the output does not validate"):
        run_worker(schema_bundle, text="cats", config=RuntimeConfig(model_for=player.model_for))


def test_freeform_text_is_printed_as_is(py_bundle: Path, script) -> None:
    s = script({"workers": {"main": [{"text": "line one\nline two"}]}})
    result = run_cli("exec", py_bundle, "hi", "--script", s)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "line one\nline two\n"


# --- Python calls -----------------------------------------------------------------------------------


class Recorded:
    def __init__(self) -> None:
        self.prompts: list[Any] = []

    def model(self) -> FunctionModel:
        def respond(messages: list[Any], info: Any) -> ModelResponse:
            self.prompts.extend(p.content for m in messages for p in getattr(m, "parts", [])
                                if isinstance(p, UserPromptPart))
            if info.output_tools:
                return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"score": 5, "reason": "ok"})])
            return ModelResponse(parts=[TextPart("text out")])

        return FunctionModel(respond)


class SameFields(BaseModel):
    text: str


def test_a_runtime_bound_worker_is_called_like_a_function(schema_bundle: Path) -> None:
    rec = Recorded()
    runtime = Runtime.load(schema_bundle, RuntimeConfig(model=rec.model()))
    judge = runtime.worker("judge")
    verdict = judge(text="cats")
    assert (verdict.score, verdict.reason) == (5, "ok")
    assert type(verdict).__name__ == "Verdict"
    assert rec.prompts == ["Topic: cats"]


@pytest.mark.parametrize(
    "value",
    [{"text": "dogs"}, SameFields(text="dogs")],
    ids=["mapping", "basemodel"],
)
def test_a_mapping_or_a_model_is_normalized_to_the_schema(schema_bundle: Path, value: Any) -> None:
    rec = Recorded()
    runtime = Runtime.load(schema_bundle, RuntimeConfig(model=rec.model()))
    assert runtime.worker("judge")(value).score == 5
    assert rec.prompts == ["Topic: dogs"]


def test_an_instance_of_the_schema_is_passed_as_is(schema_bundle: Path) -> None:
    rec = Recorded()
    runtime = Runtime.load(schema_bundle, RuntimeConfig(model=rec.model()))
    topic_class = runtime.input_class(runtime.bundle.worker("judge"))
    runtime.worker("judge")(topic_class(text="birds"))
    assert rec.prompts == ["Topic: birds"]


def test_a_plain_string_is_mapped_to_input(schema_bundle: Path) -> None:
    rec = Recorded()
    result = run_worker(schema_bundle, "plain words", worker="boss", config=RuntimeConfig(model=rec.model()))
    assert result.output == "text out"
    assert rec.prompts == ["plain words"]


@pytest.mark.parametrize(
    ("args", "kwargs", "says"),
    [
        (("just a string",), {}, "not a plain string"),
        ((42,), {}, "int"),
        ((), {"txt": "typo"}, "text"),
        ((), {"text": "x", "extra": 1}, "extra"),
        (({"text": "a"},), {"text": "b"}, "not both"),
        ((), {"text": ["not", "a", "string"]}, "text"),
    ],
    ids=["string-without-input", "int", "missing-field", "extra-field", "both", "wrong-type"],
)
def test_arguments_that_do_not_fit_give_a_clear_error(schema_bundle: Path, args: tuple, kwargs: dict, says: str) -> None:
    rec = Recorded()
    runtime = Runtime.load(schema_bundle, RuntimeConfig(model=rec.model()))
    with pytest.raises(InputProblem) as info:
        runtime.worker("judge")(*args, **kwargs)
    message = str(info.value)
    assert "judge" in message and says in message, message
    assert "\n" not in message
    assert rec.prompts == []  # the model was never called


def test_an_unknown_worker_is_a_clear_error(schema_bundle: Path) -> None:
    runtime = Runtime.load(schema_bundle, RuntimeConfig(model="test"))
    with pytest.raises(InputProblem, match="'nobody'"):
        runtime.worker("nobody")


def test_run_without_input_uses_entry_args(py_bundle: Path) -> None:
    rec = Recorded()
    run_worker(py_bundle, config=RuntimeConfig(model=rec.model(), approval_mode="reject_all"))
    assert rec.prompts == ["from entry.args"]


def test_structured_output_from_the_python_api_is_the_schema_class(schema_bundle: Path) -> None:
    rec = Recorded()
    result = run_worker(schema_bundle, text="x", config=RuntimeConfig(model=rec.model()))
    assert result.output.model_dump() == {"score": 5, "reason": "ok"}
    assert json.loads(result.output.model_dump_json()) == {"score": 5, "reason": "ok"}

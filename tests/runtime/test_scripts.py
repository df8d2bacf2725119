"""`--script FILE`: scripted model turns for offline, deterministic runs (JSON or YAML), checked
against the bundle before the run, consumed per worker in order across all of its calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from llm_do.runtime import Runtime, RuntimeConfig
from llm_do.runtime.script import Script, ScriptPlayer, ScriptTurnRejected
from tests.support.cli import one_line_error, run_cli, worker
from tests.support.events import of_kind, read_events

TEAM = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"},
                     "runtime": {"approval_mode": "approve_all"}},
    "main.worker": worker("toolsets: [filesystem_project, helper]", "You lead."),
    "helper.worker": worker("toolsets: [filesystem_project_ro]", "You help."),
    "notes.txt": "some notes\n",
}


@pytest.fixture
def team(build) -> Path:
    return build(TEAM)


def call(tool: str, **args: Any) -> dict[str, Any]:
    return {"tool": tool, "args": args}


def exec_(bundle: Path, s: Path, *more: str):
    return run_cli("exec", bundle, "go", "--script", s, *more)


def test_a_json_script_drives_the_whole_flow(team: Path, script, tmp_path: Path) -> None:
    s = script({"workers": {
        "main": [{"tool_calls": [call("write_file", path="a.txt", content="A"), call("helper", input="read it")]},
                 {"text": "all done"}],
        "helper": [{"tool_calls": [call("read_file", path="a.txt")]}, {"text": "read A"}],
    }})
    events = tmp_path / "events.jsonl"
    result = exec_(team, s, "--events", events)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "all done"
    assert (team.parent / "a.txt").read_text() == "A"
    evs = read_events(events)
    # tool calls run in the order given: the write lands before the helper reads it.
    assert [e["tool"] for e in of_kind(evs, "tool_called")] == ["write_file", "helper", "read_file"]
    [read] = of_kind(evs, "tool_returned", tool="read_file")
    assert read["result"].startswith("A")


def test_a_yaml_script_works_the_same(team: Path, script) -> None:
    s = script(
        """
workers:
  main:
    - tool_calls:
        - tool: write_file
          args: {path: y.txt, content: from yaml}
    - text: yaml done
""",
        name="s.yaml",
    )
    result = exec_(team, s)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "yaml done"
    assert (team.parent / "y.txt").read_text() == "from yaml"


def test_a_yml_suffix_is_yaml_too(team: Path, script) -> None:
    s = script("workers:\n  main:\n    - text: yml done\n", name="s.yml")
    result = exec_(team, s)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "yml done"


@pytest.mark.parametrize(
    "turn",
    [
        {},
        {"text": "hi", "tool_calls": [call("read_file", path="notes.txt")]},
        {"text": "hi", "output": "x"},
        {"tool_calls": [], "output": {"a": 1}},
        {"txt": "typo"},
    ],
    ids=["none", "text+tool_calls", "text+output", "tool_calls+output", "unknown-key"],
)
def test_a_turn_holds_exactly_one_of_text_tool_calls_or_output(team: Path, script, turn: dict[str, Any]) -> None:
    s = script({"workers": {"main": [turn]}})
    result = exec_(team, s)
    assert result.exit_code == 2, result.stdout + result.stderr
    line = one_line_error(result)
    assert "main" in line or "turn" in line or "txt" in line, line


def test_an_unknown_worker_is_refused_before_the_run(team: Path, script, tmp_path: Path) -> None:
    s = script({"workers": {"main": [{"tool_calls": [call("write_file", path="a.txt", content="A")]}, {"text": "x"}],
                            "hlper": [{"text": "x"}]}})
    events = tmp_path / "events.jsonl"
    result = exec_(team, s, "--events", events)
    assert result.exit_code == 2
    line = one_line_error(result)
    assert "'hlper'" in line
    assert not (team.parent / "a.txt").exists()
    assert not events.exists() or read_events(events) == []


def test_an_unknown_tool_is_refused_before_the_run(team: Path, script) -> None:
    s = script({"workers": {"main": [{"tool_calls": [call("write_file", path="a.txt", content="A")]}, {"text": "x"}],
                            "helper": [{"tool_calls": [call("write_file", path="b.txt", content="B")]}]}})
    result = exec_(team, s)
    assert result.exit_code == 2
    line = one_line_error(result)
    assert "'write_file'" in line and "'helper'" in line  # helper has the read-only toolset
    assert not (team.parent / "a.txt").exists()


@pytest.mark.parametrize(
    ("name", "text"),
    [("bad.json", "{not json"), ("bad.yaml", "workers: [unclosed"), ("list.json", "[1, 2]"),
     ("nowork.json", '{"workers": {"main": "text"}}')],
)
def test_a_malformed_script_is_a_usage_error(team: Path, script, name: str, text: str) -> None:
    result = exec_(team, script(text, name=name))
    assert result.exit_code == 2
    assert name in one_line_error(result)


def test_a_missing_script_is_a_usage_error(team: Path, tmp_path: Path) -> None:
    result = exec_(team, tmp_path / "nothere.json")
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr


def test_an_exhausted_queue_ends_the_run_naming_the_worker(team: Path, script) -> None:
    s = script({"workers": {"main": [{"tool_calls": [call("helper", input="x")]}, {"text": "done"}],
                            "helper": [{"tool_calls": [call("read_file", path="notes.txt")]}]}})
    result = exec_(team, s)
    assert result.exit_code == 1
    # The nested worker's failure ends the run as it is, not as a crash of the tool that called it.
    assert one_line_error(result) == "llm-do: run failed: the script has no more turns for worker 'helper'"


def test_a_worker_missing_from_the_script_is_exhausted_at_once(team: Path, script) -> None:
    s = script({"workers": {"main": [{"tool_calls": [call("helper", input="x")]}, {"text": "done"}]}})
    result = exec_(team, s)
    assert result.exit_code == 1
    assert "'helper'" in one_line_error(result)


def test_each_workers_queue_is_consumed_in_order_across_its_calls(team: Path, script, tmp_path: Path) -> None:
    s = script({"workers": {
        "main": [{"tool_calls": [call("helper", input="first")]}, {"tool_calls": [call("helper", input="second")]},
                 {"text": "done"}],
        # The first call uses turns 1-2, the second turns 3-4.
        "helper": [{"tool_calls": [call("read_file", path="notes.txt")]}, {"text": "answer 1"},
                   {"tool_calls": [call("list_files")]}, {"text": "answer 2"}],
    }})
    events = tmp_path / "events.jsonl"
    result = exec_(team, s, "--events", events)
    assert result.exit_code == 0, result.stderr
    evs = read_events(events)
    assert [e["result"] for e in of_kind(evs, "tool_returned", tool="helper")] == ["answer 1", "answer 2"]
    assert [e["tool"] for e in of_kind(evs, "tool_called", worker="helper")] == ["read_file", "list_files"]


def test_unused_turns_are_reported_in_one_line(team: Path, script) -> None:
    s = script({"workers": {"main": [{"text": "done"}, {"text": "never played"}],
                            "helper": [{"text": "never called"}]}})
    result = exec_(team, s)
    assert result.exit_code == 0
    assert result.stdout.strip() == "done"
    assert result.stderr == "llm-do: script turns not used: 'helper' 1 of 1, 'main' 1 of 2\n"


def test_strict_script_fails_a_run_that_leaves_turns_unused(team: Path, script) -> None:
    s = script({"workers": {"main": [{"text": "done"}, {"text": "never played"}]}})
    result = exec_(team, s, "--strict-script")
    assert result.exit_code == 1
    line = one_line_error(result)
    assert "script turns not used: 'main' 1 of 2" in line and "--strict-script" in line, line


def test_strict_script_passes_a_run_that_plays_every_turn(team: Path, script) -> None:
    s = script({"workers": {"main": [{"tool_calls": [call("helper", input="x")]}, {"text": "done"}],
                            "helper": [{"text": "helped"}]}})
    result = exec_(team, s, "--strict-script")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "done" and result.stderr == ""


def test_strict_script_without_a_script_is_a_usage_error(team: Path) -> None:
    result = run_cli("exec", team, "go", "--model", "test", "--strict-script")
    assert result.exit_code == 2
    assert "--strict-script needs --script" in result.stderr


def test_run_takes_strict_script_too(team: Path, script) -> None:
    s = script({"workers": {"main": [{"text": "done"}, {"text": "never played"}]}})
    result = run_cli("run", team.parent, "go", "--script", s, "--strict-script")
    assert result.exit_code == 1
    assert "script turns not used: 'main' 1 of 2" in result.stderr


def test_invalid_tool_arguments_end_the_run_naming_worker_turn_and_error(team: Path, script, tmp_path: Path) -> None:
    s = script({"workers": {"main": [{"tool_calls": [call("write_file", path="a.txt")]}, {"text": "done"}]}})
    events = tmp_path / "events.jsonl"
    result = exec_(team, s, "--events", events)
    assert result.exit_code == 1
    line = one_line_error(result)
    assert line.startswith("llm-do: run failed: worker 'main', turn 1 of the script: the arguments of 'write_file' do not "
                           "validate: content: Field required"), line
    assert not (team.parent / "a.txt").exists()
    assert of_kind(read_events(events), "tool_returned") == []


def test_the_turn_is_counted_across_a_workers_calls(team: Path, script) -> None:
    s = script({"workers": {
        "main": [{"tool_calls": [call("helper", input="first")]}, {"tool_calls": [call("helper", input="second")]},
                 {"text": "done"}],
        "helper": [{"text": "answer 1"}, {"tool_calls": [call("read_file", path=["not", "a", "path"])]}, {"text": "x"}],
    }})
    result = exec_(team, s)
    assert result.exit_code == 1
    line = one_line_error(result)
    assert "worker 'helper', turn 2 of the script: the arguments of 'read_file' do not validate: path:" in line, line


def test_a_tool_the_worker_lacks_ends_a_scripted_run_from_python(build) -> None:
    """`check_script` refuses it before an `exec`; a script played from Python fails when it is called."""
    bundle = build(TEAM)
    player = ScriptPlayer(Script.model_validate({"workers": {"main": [{"tool_calls": [call("rm", path="a.txt")]},
                                                                      {"text": "done"}]}}))
    with pytest.raises(ScriptTurnRejected, match=r"worker 'main', turn 1 of the script: the worker has no tool 'rm'"):
        Runtime.load(bundle, RuntimeConfig(model_for=player.model_for)).run("go")


@pytest.mark.process
def test_the_tool_calls_of_a_turn_run_one_after_another_in_order(py_bundle: Path, script, tmp_path: Path) -> None:
    """`nap` sleeps before it returns and `add` returns at once: run together, `add` would finish first."""
    s = script({"workers": {"main": [{"tool_calls": [call("nap", seconds=0.3), call("add", a=1, b=2), call("nap", seconds=0)]},
                                     {"text": "done"}]}})
    events = tmp_path / "events.jsonl"
    result = exec_(py_bundle, s, "--approve-all", "--events", events)
    assert result.exit_code == 0, result.stderr
    evs = [e for e in read_events(events) if e["event"] in ("tool_called", "tool_returned")]
    assert [(e["event"], e["tool"]) for e in evs] == [
        ("tool_called", "nap"), ("tool_returned", "nap"), ("tool_called", "add"), ("tool_returned", "add"),
        ("tool_called", "nap"), ("tool_returned", "nap"),
    ]


def test_script_and_model_together_is_a_usage_error(team: Path, script) -> None:
    result = exec_(team, script({"workers": {"main": [{"text": "x"}]}}), "--model", "test")
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(("turns", "where"), [
    ([{"text": "ok"}, {"txt": "typo"}], "turn 2 of worker 'main': txt: Extra inputs are not permitted"),
    ([{"tool_calls": [call("read_file", path="a"), {"tol": "read_file"}]}], "turn 1 of worker 'main': tool call 2: tool: "),
])
def test_a_malformed_turn_is_counted_from_1_like_every_script_message(tmp_path: Path, turns: list[Any], where: str) -> None:
    from llm_do.runtime.script import ScriptProblem, load_script

    path = tmp_path / "s.json"
    path.write_text(json.dumps({"workers": {"main": turns}}))
    with pytest.raises(ScriptProblem) as caught:
        load_script(path)
    assert str(caught.value).startswith(f"{path}: {where}"), str(caught.value)


def test_a_script_file_plays_from_python_as_spec_runtime_md_says(build, script) -> None:
    from llm_do.runtime.script import ScriptPlayer, check_script, load_script

    bundle = build(TEAM)
    loaded = load_script(script({"workers": {"main": [{"text": "played from Python"}]}}))
    runtime = Runtime.load(bundle)
    check_script(loaded, runtime.bundle)
    runtime = Runtime.load(bundle, RuntimeConfig(model_for=ScriptPlayer(loaded).model_for))
    assert runtime.run("go").output == "played from Python"

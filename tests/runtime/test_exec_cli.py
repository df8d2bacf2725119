"""`llm-do exec` and `llm-do run` at the command line: positionals, exit codes with one stderr line,
usage limits, timeouts, crashing tools, in-memory runs, and the stdlib toolsets through a run."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_cli, worker

from .conftest import of_kind, one_line_error, read_events

SIMPLE = {
    "project.json": {"version": 1, "worker_files": ["*.worker"],
                     "entry": {"worker": "main", "args": {"input": "from entry.args"}}},
    "main.worker": worker("toolsets: [filesystem_project]", "Work."),
}


def text(value: str) -> dict[str, Any]:
    return {"workers": {"main": [{"text": value}]}}


# --- positionals --------------------------------------------------------------------------------------


def test_a_lone_positional_naming_a_file_is_the_bundle(build, script, tmp_path: Path) -> None:
    bundle = build(SIMPLE)
    renamed = bundle.with_name("other.lock")
    bundle.rename(renamed)
    result = run_cli("exec", renamed, "--script", script(text("ran the named bundle")))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "ran the named bundle"


def test_a_lone_positional_that_is_no_file_is_the_prompt_for_the_default_bundle(py_bundle: Path, script,
                                                                                tmp_path: Path) -> None:
    echo = {"workers": {"main": [{"tool_calls": [{"tool": "echo_prompt", "args": {}}]}, {"text": "ok"}]}}
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", "not a file", "--script", script(echo), "--events", events, cwd_to=py_bundle.parent)
    assert result.exit_code == 0, result.stderr
    [ret] = of_kind(read_events(events), "tool_returned", tool="echo_prompt")
    assert ret["result"] == "not a file"


def test_no_positional_runs_the_default_bundle_with_entry_args(build, script) -> None:
    bundle = build(SIMPLE)
    result = run_cli("exec", "--script", script(text("default")), cwd_to=bundle.parent)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "default"


def test_three_positionals_are_a_usage_error(build) -> None:
    bundle = build(SIMPLE)
    result = run_cli("exec", bundle, "a", "b", "--model", "test")
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr


# --- exit codes ------------------------------------------------------------------------------------


def test_success_is_exit_0_with_a_quiet_stderr(build) -> None:
    result = run_cli("exec", build(SIMPLE), "hi", "--model", "test", "--reject-all")
    assert result.exit_code == 0
    assert result.stderr == ""


@pytest.mark.parametrize(
    "args",
    [["--no-such-flag"], ["--timeout", "0"], ["--timeout", "soon"], ["--input-json", "{"], ["--model"]],
    ids=["unknown-flag", "timeout-zero", "timeout-text", "bad-json", "missing-value"],
)
def test_usage_errors_are_exit_2(build, args: list[str]) -> None:
    result = run_cli("exec", build(SIMPLE), "hi", *args)
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip()


def test_a_tool_that_raises_fails_the_run_naming_tool_and_worker(py_bundle: Path, script) -> None:
    s = script({"workers": {"main": [{"tool_calls": [{"tool": "boom", "args": {}}]}, {"text": "never"}]}})
    result = run_cli("exec", py_bundle, "go", "--script", s)
    assert result.exit_code == 1
    line = one_line_error(result)
    assert "'boom'" in line and "'main'" in line and "kaboom" in line, line
    assert result.stdout == ""


def test_usage_limits_of_the_project_are_enforced(build, script) -> None:
    files = dict(SIMPLE)
    files["project.json"] = {**SIMPLE["project.json"], "runtime": {"usage_limits": {"request_limit": 1}}}
    bundle = build(files)
    two_requests = {"workers": {"main": [{"tool_calls": [{"tool": "list_files", "args": {}}]}, {"text": "done"}]}}
    result = run_cli("exec", bundle, "go", "--script", script(two_requests))
    assert result.exit_code == 1
    assert "request_limit" in one_line_error(result)
    # One request fits.
    assert run_cli("exec", bundle, "go", "--script", script(text("one"))).exit_code == 0


def test_timeout_stops_the_run(py_bundle: Path, script) -> None:
    s = script({"workers": {"main": [{"tool_calls": [{"tool": "nap", "args": {"seconds": 30}}]}, {"text": "late"}]}})
    started = time.monotonic()
    result = run_cli("exec", py_bundle, "go", "--script", s, "--timeout", "0.3")
    assert time.monotonic() - started < 10
    assert result.exit_code == 1
    line = one_line_error(result)
    assert "0.3" in line, line
    assert result.stdout == ""


def test_a_run_within_its_timeout_finishes(py_bundle: Path, script) -> None:
    s = script({"workers": {"main": [{"tool_calls": [{"tool": "nap", "args": {"seconds": 0.01}}]}, {"text": "on time"}]}})
    result = run_cli("exec", py_bundle, "go", "--script", s, "--timeout", "30")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "on time"


# --- llm-do run --------------------------------------------------------------------------------------


def test_run_builds_in_memory_and_writes_no_bundle(tmp_path: Path, script) -> None:
    from tests.helpers import write_project

    root = write_project(tmp_path / "proj", SIMPLE)
    result = run_cli("run", root, "--script", script(text("ran from source")))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "ran from source"
    assert not (root / "bundle.lock").exists()


def test_run_takes_a_prompt_and_the_current_directory(tmp_path: Path, script) -> None:
    from tests.helpers import write_project

    root = write_project(tmp_path / "proj", {**SIMPLE, "main.worker": worker("model: test", "Work.")})
    result = run_cli("run", "hello", cwd_to=root)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "success (no tool calls)"
    assert not (root / "bundle.lock").exists()


def test_run_sees_an_edit_at_once(build, script) -> None:
    """The edit-run loop: `run` compiles the sources as they are now, a stale lock is irrelevant."""
    bundle = build(SIMPLE)
    (bundle.parent / "main.worker").write_text(worker("toolsets: [filesystem_project_ro]", "Read only now."))
    s = script({"workers": {"main": [{"tool_calls": [{"tool": "write_file", "args": {"path": "a", "content": "b"}}]}]}})
    result = run_cli("run", bundle.parent, "--script", s)
    assert result.exit_code == 2  # the script is checked against what the sources say now
    assert "write_file" in one_line_error(result)


def test_run_refuses_a_project_with_errors(tmp_path: Path, script) -> None:
    from tests.helpers import write_project

    root = write_project(tmp_path / "proj", {**SIMPLE, "main.worker": worker("toolsets: [no_such_toolset]", "Work.")})
    result = run_cli("run", root, "--script", script(text("never")))
    assert result.exit_code == 1
    assert "no_such_toolset" in result.stdout + result.stderr
    assert "never" not in result.stdout
    assert "Traceback" not in result.stderr


# --- the stdlib through a run ------------------------------------------------------------------------


def test_filesystem_project_write_and_read_round_trip(build, script, tmp_path: Path) -> None:
    bundle = build(SIMPLE)
    s = script({"workers": {"main": [
        {"tool_calls": [{"tool": "write_file", "args": {"path": "notes/today.md", "content": "héllo\nworld"}}]},
        {"tool_calls": [{"tool": "read_file", "args": {"path": "notes/today.md"}}]},
        {"text": "done"},
    ]}})
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", bundle, "go", "--script", s, "--approve-all", "--events", events, cwd_to=elsewhere)
    assert result.exit_code == 0, result.stderr
    assert (bundle.parent / "notes" / "today.md").read_text(encoding="utf-8") == "héllo\nworld"
    assert list(elsewhere.iterdir()) == []  # rooted at the project, not the working directory
    [read] = of_kind(read_events(events), "tool_returned", tool="read_file")
    assert read["outcome"] == "ok" and read["result"] == "héllo\nworld"


def test_filesystem_project_refuses_an_escape_and_the_run_goes_on(build, script, tmp_path: Path) -> None:
    bundle = build(SIMPLE)
    s = script({"workers": {"main": [
        {"tool_calls": [{"tool": "write_file", "args": {"path": "../escaped.txt", "content": "x"}}]},
        {"text": "went on"},
    ]}})
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", bundle, "go", "--script", s, "--approve-all", "--events", events)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "went on"
    assert not (bundle.parent.parent / "escaped.txt").exists()
    [ret] = of_kind(read_events(events), "tool_returned", tool="write_file")
    assert ret["outcome"] == "failed"


def test_filesystem_cwd_is_rooted_at_the_working_directory(build, script, tmp_path: Path) -> None:
    bundle = build({
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
        "main.worker": worker("toolsets: [filesystem_cwd]", "Work here."),
    })
    work = tmp_path / "work"
    work.mkdir()
    (work / "input.txt").write_text("from the working directory")
    s = script({"workers": {"main": [
        {"tool_calls": [{"tool": "read_file", "args": {"path": "input.txt"}},
                        {"tool": "write_file", "args": {"path": "output.txt", "content": "written here"}}]},
        {"text": "done"},
    ]}})
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", bundle, "go", "--script", s, "--approve-all", "--events", events, cwd_to=work)
    assert result.exit_code == 0, result.stderr
    assert (work / "output.txt").read_text() == "written here"
    assert not (bundle.parent / "output.txt").exists()
    [read] = of_kind(read_events(events), "tool_returned", tool="read_file")
    assert read["result"] == "from the working directory"

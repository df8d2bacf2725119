"""`llm-do exec` and `llm-do run` at the command line: positionals, exit codes with one stderr line,
usage limits, timeouts, crashing tools, in-memory runs, and the stdlib toolsets through a run."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import one_line_error, run_cli, worker, write_project
from tests.support.events import of_kind, read_events

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


@pytest.mark.process
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


@pytest.mark.process
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


@pytest.mark.process
def test_timeout_stops_the_run(py_bundle: Path, script) -> None:
    s = script({"workers": {"main": [{"tool_calls": [{"tool": "nap", "args": {"seconds": 30}}]}, {"text": "late"}]}})
    started = time.monotonic()
    result = run_cli("exec", py_bundle, "go", "--script", s, "--timeout", "0.3")
    assert time.monotonic() - started < 10
    assert result.exit_code == 1
    line = one_line_error(result)
    assert "0.3" in line, line
    assert result.stdout == ""


@pytest.mark.process
def test_a_run_within_its_timeout_finishes(py_bundle: Path, script) -> None:
    s = script({"workers": {"main": [{"tool_calls": [{"tool": "nap", "args": {"seconds": 0.01}}]}, {"text": "on time"}]}})
    result = run_cli("exec", py_bundle, "go", "--script", s, "--timeout", "30")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "on time"


# --- llm-do run --------------------------------------------------------------------------------------


def test_run_builds_in_memory_and_writes_no_bundle(tmp_path: Path, script) -> None:
    root = write_project(tmp_path / "proj", SIMPLE)
    result = run_cli("run", root, "--script", script(text("ran from source")))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "ran from source"
    assert not (root / "bundle.lock").exists()


def test_run_takes_a_prompt_and_the_current_directory(tmp_path: Path, script) -> None:
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


# --- what exec runs --------------------------------------------------------------------------------


def test_a_directory_runs_its_bundle_lock(build, script) -> None:
    bundle = build(SIMPLE)
    result = run_cli("exec", bundle.parent, "--script", script(text("ran the directory's lock")))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "ran the directory's lock"
    result = run_cli("exec", bundle.parent, "a prompt", "--script", script(text("with a prompt")))
    assert result.exit_code == 0, result.stderr


def test_a_directory_without_a_lock_says_to_build_or_run_it(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    result = run_cli("exec", tmp_path / "proj", "--model", "test")
    assert result.exit_code == 2
    line = one_line_error(result)
    assert f"llm-do build {tmp_path / 'proj'}" in line and f"llm-do run {tmp_path / 'proj'}" in line, line


def test_a_bundle_that_exists_but_is_refused_stays_exit_3(build) -> None:
    bundle = build(SIMPLE)
    bundle.write_text(bundle.read_text(encoding="utf-8").replace('"main"', '"mian"'), encoding="utf-8")
    assert run_cli("exec", bundle, "hi", "--model", "test").exit_code == 3


def test_attaching_a_directory_is_a_usage_error(tmp_path: Path, build) -> None:
    bundle = build({**SIMPLE, "main.worker": worker("attachments: {max_count: 2}", "Look.")})
    result = run_cli("exec", bundle, "hi", "--attach", tmp_path, "--model", "test")
    assert result.exit_code == 2
    line = one_line_error(result)
    assert "--attach" in line and "directory" in line, line


# --- a Python tool that fails -----------------------------------------------------------------------


def crash_script(script) -> Path:
    return script({"workers": {"main": [{"tool_calls": [{"tool": "boom", "args": {}}]}, {"text": "never"}]}})


def boom_line(bundle: Path) -> int:
    lines = (bundle.parent / "tools.py").read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if 'raise ValueError("kaboom")' in line)


@pytest.mark.process
def test_a_crashed_tool_names_its_file_and_line(py_bundle: Path, script) -> None:
    result = run_cli("exec", py_bundle, "go", "--script", crash_script(script))
    assert result.exit_code == 1
    line = one_line_error(result)
    assert f"(tools.py:{boom_line(py_bundle)})" in line, line


@pytest.mark.parametrize("how", ["-v", "LLM_DO_DEBUG"])
@pytest.mark.process
def test_verbose_shows_the_tools_traceback_in_project_code_only(py_bundle: Path, script, how: str) -> None:
    flags = ["-v"] if how == "-v" else []
    env = {"LLM_DO_DEBUG": "1"} if how == "LLM_DO_DEBUG" else None
    result = run_cli("exec", py_bundle, "go", "--script", crash_script(script), *flags, env=env)
    assert result.exit_code == 1
    err = result.stderr
    assert f'File "tools.py", line {boom_line(py_bundle)}, in boom' in err, err
    assert "ValueError: kaboom" in err
    assert "pydantic_ai" not in err and "llm_do" not in err and "anyio" not in err, err
    assert err.strip().splitlines()[-1].startswith("llm-do: run failed: tool 'boom'")


@pytest.mark.process
def test_without_verbose_no_traceback_is_shown(py_bundle: Path, script) -> None:
    result = run_cli("exec", py_bundle, "go", "--script", crash_script(script), env={"LLM_DO_DEBUG": None})
    assert 'File "' not in result.stderr


@pytest.mark.process
def test_a_result_that_cannot_be_serialized_names_the_tool(build, script, tmp_path: Path) -> None:
    bundle = build({
        "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"],
                         "entry": {"worker": "main"}},
        "tools.py": '''
            def odd() -> object:
                """Returns something no model can read."""
                return object()


            TOOLS = [odd]
        ''',
        "main.worker": worker("tools: [odd]\napprovals:\n  - allow odd", "Go."),
    })
    s = script({"workers": {"main": [{"tool_calls": [{"tool": "odd", "args": {}}]}, {"text": "never"}]}})
    result = run_cli("exec", bundle, "go", "--script", s)
    assert result.exit_code == 1
    line = one_line_error(result)
    assert "tool 'odd' of worker 'main'" in line and "object" in line, line


# --- a stale lock ------------------------------------------------------------------------------------


def test_a_lock_whose_worker_files_changed_is_refused_or_run_as_built_with_one_note(build, script) -> None:
    """Not the build of the sources beside it (tests/runtime/test_lock_sources.py): refused, naming
    every file that changed; `--as-built` runs it as built and says so once, before the run."""
    bundle = build(SIMPLE)
    (bundle.parent / "main.worker").write_text(worker("toolsets: [filesystem_project]", "Work harder."), encoding="utf-8")
    (bundle.parent / "project.json").write_text('{"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}}\n')
    s = script({"workers": {"main": [{"text": "as built"}]}})
    refused = run_cli("exec", bundle, "go", "--script", s)
    assert refused.exit_code == 3
    [line] = refused.stderr.splitlines()
    assert "changed: main.worker" in line and "changed: project.json" in line and "--as-built" in line, line
    result = run_cli("exec", bundle, "go", "--script", s, "--as-built")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "as built"
    [line] = result.stderr.splitlines()
    assert "not the build of the sources beside it" in line and "main.worker" in line and "project.json" in line, line
    assert "llm-do build" in line


def test_a_lock_shipped_without_its_sources_runs_quietly(build, script) -> None:
    bundle = build(SIMPLE)
    (bundle.parent / "main.worker").unlink()
    (bundle.parent / "project.json").unlink()
    result = run_cli("exec", bundle, "go", "--script", script(text("fine")))
    assert result.exit_code == 0
    assert result.stderr == ""


def test_an_edit_whose_modification_time_is_set_back_is_still_seen(build, script) -> None:
    """The record's stamp of a file holds its change time too, which no tool sets back: an edit dated
    before the lock is seen (the stale note once read only files modified since the lock)."""
    import os

    bundle = build(SIMPLE)
    source = bundle.parent / "main.worker"
    source.write_text(worker("toolsets: [filesystem_project]", "Changed."), encoding="utf-8")
    old = bundle.stat().st_mtime - 3600
    os.utime(source, (old, old))
    result = run_cli("exec", bundle, "go", "--script", script(text("fine")))
    assert result.exit_code == 3
    assert "changed: main.worker" in result.stderr


def test_a_source_in_a_folder_edited_in_place_is_seen(build, script) -> None:
    """An edit in place changes no directory (its folder's times are set back here too): the file's
    own stamp shows it."""
    import os

    files = {**SIMPLE, "project.json": {**SIMPLE["project.json"], "worker_files": ["*.worker", "team/*.worker"]},
             "main.worker": worker("toolsets: [filesystem_project, helper]", "Work."),
             "team/helper.worker": worker("description: Helps", "Help.")}
    bundle = build(files)
    folder = bundle.parent / "team"
    before = folder.stat()
    with open(folder / "helper.worker", "r+", encoding="utf-8") as f:  # in place: same inode
        f.seek(0, os.SEEK_END)
        f.write("Help more.\n")
    os.utime(folder, ns=(before.st_atime_ns, before.st_mtime_ns))
    result = run_cli("exec", bundle, "go", "--script", script(text("fine")))
    assert result.exit_code == 3, result.stderr
    [line] = result.stderr.splitlines()
    assert "it is stale, not the build of the sources beside it (changed: team/helper.worker" in line, line


def test_a_failure_whose_causes_loop_back_is_reported_not_walked_forever() -> None:
    from llm_do.cli.session import broken_pipe as _broken_pipe

    first, second = RuntimeError("first"), ValueError("second")
    first.__context__, second.__context__ = second, first
    assert _broken_pipe(first) is None
    pipe = BrokenPipeError()
    second.__cause__ = pipe
    assert _broken_pipe(first) is pipe

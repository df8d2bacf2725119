"""`llm-do batch BUNDLE INPUTS.jsonl -o RESULTS.jsonl`: one run per input line, results appended
as inputs finish, reruns that skip what is done, foreign results refused, Ctrl-C that loses nothing."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from llm_do.runtime.batch.results import BatchIdentity, ResultsProblem, read_results
from llm_do.runtime.batch.runs import BatchResult, InputsProblem, parse_inputs
from tests.support.batch import inputs_file, results_of
from tests.support.cli import one_line_error, run_cli, worker
from tests.support.projects import build_project, copy_project

TOOLS = '''
    import asyncio
    import os

    from pydantic_ai import RunContext


    async def echo_slowly(ctx: RunContext) -> str:
        """Wait a little (BATCH_TOOL_SECONDS), and until the file BATCH_GATE exists if it is set,
        then return the prompt; fail on 'boom'."""
        await asyncio.sleep(float(os.environ.get("BATCH_TOOL_SECONDS", "0")))
        gate = os.environ.get("BATCH_GATE")
        while gate and not os.path.exists(gate):
            await asyncio.sleep(0.05)
        if "boom" in str(ctx.prompt):
            raise ValueError("the input said boom")
        return f"echo {ctx.prompt}"


    TOOLS = {"echo_slowly": echo_slowly}
'''

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"],
                     "entry": {"worker": "main"}},
    "tools.py": TOOLS,
    "main.worker": worker("tools: [echo_slowly]\napprovals:\n  - allow echo_slowly", "Echo."),
}


@pytest.fixture(scope="module")
def _template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_project(tmp_path_factory.mktemp("batch") / "proj", PROJECT)


@pytest.fixture
def bundle(_template: Path, tmp_path: Path) -> Path:
    return copy_project(_template, tmp_path / "proj")


@pytest.mark.process
def test_one_result_per_input_with_the_failures_saying_why(bundle: Path, tmp_path: Path) -> None:
    inputs = inputs_file(tmp_path / "in.jsonl", ["alpha", {"input": "beta"}, "boom now", "gamma"])
    out = tmp_path / "out.jsonl"
    result = run_cli("batch", bundle, inputs, "-o", out, "--model", "test", "--concurrency", "2")
    assert result.exit_code == 1
    assert one_line_error(result) == (f"llm-do: 1 of 4 inputs failed; their lines in {out} say why; "
                                      "--retry-failed runs them again")
    assert result.stdout == ""
    by_line = {r["line"]: r for r in results_of(out)}
    assert sorted(by_line) == [1, 2, 3, 4]
    assert all(set(r) == {"line", "output", "error", "usage"} for r in by_line.values())
    assert json.loads(by_line[1]["output"]) == {"echo_slowly": "echo alpha"}
    assert json.loads(by_line[2]["output"]) == {"echo_slowly": "echo beta"}
    assert by_line[3]["output"] is None and "the input said boom" in by_line[3]["error"]
    assert by_line[4]["error"] is None
    assert by_line[1]["usage"]["requests"] == 2 and by_line[1]["usage"]["tool_calls"] == 1  # its own usage only


@pytest.mark.process
def test_a_rerun_skips_what_is_done_and_retry_failed_replaces_failed_lines(bundle: Path, tmp_path: Path) -> None:
    inputs = inputs_file(tmp_path / "in.jsonl", ["alpha", "boom", "gamma"])
    out = tmp_path / "out.jsonl"
    assert run_cli("batch", bundle, inputs, "-o", out, "--model", "test").exit_code == 1
    first = out.read_text()
    again = run_cli("batch", bundle, inputs, "-o", out, "--model", "test")
    assert again.exit_code == 1  # the failed input still stands
    assert one_line_error(again) == (f"llm-do: nothing to run: every input has a line in {out} already; 1 of 3 are "
                                     "failures (their lines say why); --retry-failed runs them again")
    assert out.read_text() == first
    retried = run_cli("batch", bundle, inputs, "-o", out, "--model", "test", "--retry-failed")
    assert retried.exit_code == 1
    lines = [r["line"] for r in results_of(out)]
    assert sorted(lines) == [1, 2, 3]  # the failed line replaced, not duplicated
    assert lines[-1] == 2


@pytest.mark.process
def test_a_results_file_of_another_batch_is_refused_and_left_alone(bundle: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    first = inputs_file(tmp_path / "a.jsonl", ["alpha"])
    assert run_cli("batch", bundle, first, "-o", out, "--model", "test").exit_code == 0
    before = out.read_bytes()
    other = inputs_file(tmp_path / "b.jsonl", ["beta"])
    result = run_cli("batch", bundle, other, "-o", out, "--model", "test")
    assert result.exit_code == 2
    assert "written for another inputs file" in one_line_error(result)
    assert out.read_bytes() == before
    stranger = tmp_path / "notes.jsonl"
    stranger.write_text('{"some": "data"}\n')
    result = run_cli("batch", bundle, first, "-o", stranger, "--model", "test")
    assert result.exit_code == 2
    assert "not the results file of an llm-do batch" in one_line_error(result)


@pytest.mark.process
def test_a_bad_inputs_line_is_a_usage_error_before_anything_runs(bundle: Path, tmp_path: Path) -> None:
    inputs = tmp_path / "in.jsonl"
    inputs.write_text('"fine"\n\n[1, 2]\n')
    out = tmp_path / "out.jsonl"
    result = run_cli("batch", bundle, inputs, "-o", out, "--model", "test")
    assert result.exit_code == 2
    assert one_line_error(result).startswith(f"llm-do: {inputs}:3: an input is a JSON object")
    assert not out.exists()
    inputs.write_text('"fine"\n{"input": ' + "[" * 3000 + "]" * 3000 + "}\n")  # valid JSON Python cannot hold
    result = run_cli("batch", bundle, inputs, "-o", out, "--model", "test")
    assert result.exit_code == 2
    assert one_line_error(result) == f"llm-do: {inputs}:2: JSON nested too deeply to read"
    assert not out.exists()


@pytest.mark.process
def test_usage_errors_write_no_results_file(bundle: Path, tmp_path: Path, script) -> None:
    inputs = inputs_file(tmp_path / "in.jsonl", ["a"])
    out = tmp_path / "out.jsonl"
    both = run_cli("batch", bundle, inputs, "-o", out, "--model", "test", "--script", script({"workers": {}}))
    assert both.exit_code == 2 and not out.exists()
    missing = run_cli("batch", bundle, tmp_path / "none.jsonl", "-o", out, "--model", "test")
    assert missing.exit_code == 2 and "none.jsonl: cannot read it" in one_line_error(missing)
    nowhere = run_cli("batch", bundle, inputs, "-o", tmp_path / "no" / "dir" / "out.jsonl", "--model", "test")
    assert nowhere.exit_code == 2 and "cannot write it" in one_line_error(nowhere)


@pytest.mark.process
def test_script_turns_are_consumed_in_order_across_the_runs(bundle: Path, tmp_path: Path, script) -> None:
    inputs = inputs_file(tmp_path / "in.jsonl", ["a", "b", "c"])
    out = tmp_path / "out.jsonl"
    turns = script({"workers": {"main": [{"text": "one"}, {"text": "two"}, {"text": "three"}, {"text": "left"}]}})
    result = run_cli("batch", bundle, inputs, "-o", out, "--script", turns, "--concurrency", "1")
    assert result.exit_code == 0, result.stderr
    assert [(r["line"], r["output"]) for r in results_of(out)] == [(1, "one"), (2, "two"), (3, "three")]
    assert "script turns not used: 'main' 1 of 4" in result.stderr


@pytest.mark.process
def test_verbose_labels_each_trace_line_with_its_input(bundle: Path, tmp_path: Path) -> None:
    inputs = inputs_file(tmp_path / "in.jsonl", ["a", "b"])
    result = run_cli("batch", bundle, inputs, "-o", tmp_path / "out.jsonl", "--model", "test", "-v")
    assert result.exit_code == 0, result.stderr
    assert "#1 ▸ main (test)" in result.stderr and "#2 ▸ main (test)" in result.stderr


@pytest.mark.process
def test_stopped_halfway_and_rerun_yields_every_input_once(bundle: Path, tmp_path: Path) -> None:
    inputs = inputs_file(tmp_path / "in.jsonl", [f"input {n}" for n in range(1, 51)])
    out = tmp_path / "out.jsonl"
    command = [sys.executable, "-m", "llm_do.cli.main", "batch", str(bundle), str(inputs), "-o", str(out),
               "--model", "test", "--concurrency", "4"]
    env = {**os.environ, "BATCH_TOOL_SECONDS": "0.2"}
    proc = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if out.exists() and len(out.read_text().splitlines()) > 12:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    assert b"Traceback" not in err
    cut = results_of(out)
    assert 12 <= len(cut) < 50
    assert all(r["error"] is None for r in cut)  # inputs cut off got no line (no "interrupted" results)
    rerun = run_cli(*command[3:], env={"BATCH_TOOL_SECONDS": "0"})  # the rerun needs no process of its own
    assert rerun.exit_code == 0, rerun.stderr
    lines = [r["line"] for r in results_of(out)]
    assert sorted(lines) == list(range(1, 51))
    assert lines[: len(cut)] == [r["line"] for r in cut]  # the first run's lines kept as they were


@pytest.mark.process
def test_a_second_batch_process_on_the_same_results_file_is_refused(bundle: Path, tmp_path: Path) -> None:
    inputs = inputs_file(tmp_path / "in.jsonl", [f"input {n}" for n in range(1, 9)])
    out = tmp_path / "out.jsonl"
    command = [sys.executable, "-m", "llm_do.cli.main", "batch", str(bundle), str(inputs), "-o", str(out),
               "--model", "test", "--concurrency", "2"]
    gate = tmp_path / "gate"  # the first batch's tool waits for it: the first is still writing when the second starts
    first = subprocess.Popen(command, env={**os.environ, "BATCH_GATE": str(gate)}, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not out.exists() and first.poll() is None:  # the header is written once the lock is held
            assert time.monotonic() < deadline, "the first batch never started its results"
            time.sleep(0.05)
        second = run_cli("batch", bundle, inputs, "-o", out, "--model", "test")
        gate.touch()
        _, err = first.communicate(timeout=120)
    finally:
        first.kill()
        first.wait()
    assert first.returncode == 0, err.decode()
    assert second.exit_code == 2
    assert one_line_error(second) == (f"llm-do: {out}: another batch process is writing it; wait for it to end "
                                      "(a rerun then runs only the inputs it has no line for)")
    assert sorted(r["line"] for r in results_of(out)) == list(range(1, 9))  # each input once
    assert not (tmp_path / ".out.jsonl.lock").exists()  # released at the end
    assert run_cli("batch", bundle, inputs, "-o", out, "--model", "test").exit_code == 0  # and free again


def test_a_denied_call_names_its_input_line(build, script, tmp_path: Path) -> None:
    bundle = build({"project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
                    "main.worker": worker("toolsets: [filesystem_project]", "Write.")})
    write = {"tool_calls": [{"tool": "write_file", "args": {"path": "note.txt", "content": "x"}}]}
    turns = script({"workers": {"main": [write, {"text": "ok"}, write, {"text": "ok"}]}})
    inputs = inputs_file(tmp_path / "in.jsonl", ["one", "two"])
    result = run_cli("batch", bundle, inputs, "-o", tmp_path / "out.jsonl", "--script", turns, "--concurrency", "1")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"llm-do: #{line} denied write_file (main@1): approval needed and no terminal to ask; pass --approve-all to allow it"
        for line in (1, 2)]


# --- the pieces, without processes ---------------------------------------------------------------------


def test_inputs_are_objects_or_prompt_strings_blank_lines_skipped() -> None:
    items = parse_inputs('{"text": "x"}\n\n"a prompt"\n', "in.jsonl")
    assert [(i.line, i.data) for i in items] == [(1, {"text": "x"}), (3, {"input": "a prompt"})]


IDENTITY = BatchIdentity.of("sha256:abc", b'"a"\n', "bundle.lock", "in.jsonl")


def results_text(*results: BatchResult, tail: str = "") -> str:
    return IDENTITY.header() + "\n" + "".join(r.to_json() + "\n" for r in results) + tail


def test_a_line_cut_by_a_killed_process_is_dropped() -> None:
    ok = BatchResult(1, "x", None, {})
    existing = read_results(results_text(ok, tail='{"line": 2, "outp'), IDENTITY, "out.jsonl", False)
    assert existing.succeeded == {1} and existing.rewrite


@pytest.mark.parametrize("line, why", [
    ("[" * 3000 + "]" * 3000, "JSON nested too deeply to read"),
    ('{"a": ' * 50000 + "1" + "}" * 50000, "JSON nested too deeply to read"),
    ('{"input": "x", "n": ' + "7" * 5000 + "}", "a JSON number longer than 4300 digits; give it as a string"),
], ids=["deep-array", "deep-object", "long-integer"])
def test_json_python_cannot_hold_names_its_line(line: str, why: str) -> None:
    with pytest.raises(InputsProblem) as caught:
        parse_inputs(f'"fine"\n{line}\n', "in.jsonl")
    assert str(caught.value) == f"in.jsonl:2: {why}"
    with pytest.raises(ResultsProblem, match="^out.jsonl:3: not a result line of an llm-do batch$"):
        read_results(results_text(BatchResult(1, "x", None, {}), tail=line + "\n"), IDENTITY, "out.jsonl", False)


@pytest.mark.parametrize("identity, why", [
    (BatchIdentity.of("sha256:def", b'"a"\n', "bundle.lock", "in.jsonl"),
     "written for bundle.lock as it was built before (sha256:abc); the bundle was rebuilt since"),
    (BatchIdentity.of("sha256:def", b'"a"\n', "other.lock", "in.jsonl"),
     "written for another bundle (bundle.lock sha256:abc, inputs in.jsonl)"),
    (BatchIdentity.of("sha256:abc", b'"a"\n"b"\n', "bundle.lock", "in.jsonl"),
     "written for in.jsonl as it was before: the inputs file was edited since the results were started"),
    (BatchIdentity.of("sha256:abc", b'"b"\n', "bundle.lock", "b.jsonl"), "written for another inputs file (in.jsonl)"),
], ids=["rebuilt", "other-bundle", "edited-inputs", "other-inputs"])
def test_the_refusal_says_whether_the_bundle_or_inputs_changed_or_are_others(identity: BatchIdentity, why: str) -> None:
    with pytest.raises(ResultsProblem) as caught:
        read_results(results_text(), identity, "out.jsonl", False)
    assert str(caught.value) == f"out.jsonl: {why}; give another -o, or remove it to start over"


def test_the_progress_bar_counts_done_failed_and_tokens() -> None:
    from rich.console import Console

    from llm_do.cli.display.batch_progress import BatchProgress

    console = Console(file=io.StringIO(), force_terminal=True, width=120)
    progress = BatchProgress(5, 1, console=console)
    with progress:
        progress.advance(BatchResult(2, "x", None, {"input_tokens": 10, "output_tokens": 5}))
        progress.advance(BatchResult(3, None, "failed", {"input_tokens": 3, "output_tokens": 0}))
    shown = console.file.getvalue()
    assert "3/5" in shown and "1 failed" in shown and "18 tokens" in shown and "/s" in shown


@pytest.mark.process
def test_on_a_terminal_the_batch_shows_a_progress_bar(bundle: Path, tmp_path: Path) -> None:
    import pty

    inputs = inputs_file(tmp_path / "in.jsonl", ["a", "b", "boom"])
    out = tmp_path / "out.jsonl"
    controller, terminal = pty.openpty()
    command = [sys.executable, "-m", "llm_do.cli.main", "batch", str(bundle), str(inputs), "-o", str(out), "--model", "test"]
    proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=terminal,
                            env={**os.environ, "COLUMNS": "120", "TERM": "xterm"})
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the process closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(controller)
    assert proc.wait(timeout=60) == 1
    text = shown.decode("utf-8", "replace")
    assert "3/3" in text and "1 failed" in text and "tokens" in text and "ETA" in text
    assert text.rstrip().endswith("1 of 3 inputs failed; their lines in " + str(out) + " say why; "
                                  "--retry-failed runs them again")

"""`llm-do batch ... --durable [DB_URL]`: each input a workflow on the batch's DBOS queue, so a
rerun (or a process started beside another) takes only what is not recorded, a killed process's
inputs resume, and two processes on one Postgres queue share the inputs without running any twice.

Inputs are counted by the tool itself (`start`/`done` lines in BATCH_LOG, with the process id)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from llm_do.runtime.batch.runs import BatchInput
from tests.support.batch import inputs_file, results_of
from tests.support.cli import one_line_error, run_cli, worker
from tests.support.postgres import POSTGRES_GROUP
from tests.support.projects import build_project, copy_project

pytest.importorskip("dbos")

from llm_do.runtime.durable.batch_queue import (  # noqa: E402  (needs dbos)
    Recorded,
    dead_local_executors,
    executor_id,
    input_id,
    parse_input_id,
    plan,
    recorded,
)

TOOLS = '''
    import asyncio
    import os
    from pathlib import Path

    from pydantic_ai import RunContext


    def _note(text: str) -> None:
        with Path(os.environ["BATCH_LOG"]).open("a") as f:
            f.write(f"{text} {os.getpid()}\\n")


    async def work(ctx: RunContext) -> str:
        """Note the start, wait (for the file `go` beside the log when BATCH_GATE is set, then
        BATCH_TOOL_SECONDS), fail on 'boom', note the end."""
        prompt = str(ctx.prompt)
        _note(f"start {prompt}")
        if os.environ.get("BATCH_GATE"):
            while not Path(os.environ["BATCH_LOG"]).with_name("go").exists():
                await asyncio.sleep(0.05)
        await asyncio.sleep(float(os.environ.get("BATCH_TOOL_SECONDS", "0")))
        if "boom" in prompt:
            raise ValueError("the input said boom")
        _note(f"done {prompt}")
        return f"echo {prompt}"


    TOOLS = {"work": work}
'''

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"],
                     "entry": {"worker": "main"}},
    "tools.py": TOOLS,
    "main.worker": worker("tools: [work]\napprovals:\n  - allow work", "Work."),
}


@pytest.fixture(scope="module")
def _template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_project(tmp_path_factory.mktemp("dbatch") / "proj", PROJECT)


@pytest.fixture
def bundle(_template: Path, tmp_path: Path) -> Path:
    return copy_project(_template, tmp_path / "proj")


def notes(log: Path, kind: str) -> Counter[str]:
    """How often each prompt was noted as `kind` (start, done)."""
    found: Counter[str] = Counter()
    for line in log.read_text().splitlines() if log.exists() else []:
        word, rest = line.split(" ", 1)
        if word == kind:
            found[rest.rsplit(" ", 1)[0]] += 1
    return found


def pids(log: Path, kind: str) -> set[str]:
    return {line.rsplit(" ", 1)[1] for line in log.read_text().splitlines() if line.startswith(kind + " ")}


def llm_do(*args: str | Path, log: Path, wait: bool = True, **env: str) -> Any:
    argv = [sys.executable, "-m", "llm_do.cli.main", *map(str, args)]
    full_env = {**os.environ, "BATCH_LOG": str(log), **env}
    if not wait:
        return subprocess.Popen(argv, env=full_env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
    return subprocess.run(argv, env=full_env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=240)


# --- SQLite, in this process ---------------------------------------------------------------------


@pytest.mark.process
def test_a_durable_batch_completes_and_a_rerun_runs_nothing_again(bundle: Path, tmp_path: Path) -> None:
    prompts = ["alpha", "beta", "gamma", "boom", "delta", "epsilon"]
    inputs = inputs_file(tmp_path / "in.jsonl", prompts)
    out = tmp_path / "out.jsonl"
    log = tmp_path / "work.log"
    env = {"BATCH_LOG": str(log)}
    args = ("batch", bundle, inputs, "-o", out, "--model", "test", "--concurrency", "3", "--durable")

    first = run_cli(*args, env=env)
    assert first.exit_code == 1, first.stderr
    assert "llm-do: batch id: llm-do-batch-" in first.stderr
    assert (bundle.parent / ".llm-do" / "runs.sqlite").is_file()  # the default database, beside the bundle
    results = {r["line"]: r for r in results_of(out)}
    assert sorted(results) == [1, 2, 3, 4, 5, 6]
    assert results[4]["output"] is None and "the input said boom" in results[4]["error"]
    assert all(results[n]["error"] is None and f"echo {prompts[n - 1]}" in results[n]["output"] for n in (1, 2, 3, 5, 6))
    assert results[1]["usage"]["requests"] == 2
    assert notes(log, "done") == Counter(p for p in prompts if p != "boom")
    before = log.read_text()
    written = out.read_text()

    again = run_cli(*args, env=env)  # everything has a line: nothing to do
    assert again.exit_code == 1 and out.read_text() == written and log.read_text() == before

    out.unlink()  # a new results file: the lines come from the recorded runs, none runs again
    recorded_only = run_cli(*args, env=env)
    assert recorded_only.exit_code == 1, recorded_only.stderr
    assert sorted(r["line"] for r in results_of(out)) == [1, 2, 3, 4, 5, 6]
    assert {r["line"]: r for r in results_of(out)}[2] == results[2]
    assert log.read_text() == before

    retried = run_cli(*args, "--retry-failed", env=env)  # the failed input alone runs again, as a new workflow
    assert retried.exit_code == 1, retried.stderr
    assert notes(log, "start") == Counter({**{p: 1 for p in prompts}, "boom": 2})
    assert sorted(r["line"] for r in results_of(out)) == [1, 2, 3, 4, 5, 6]


@pytest.mark.process
def test_script_turns_go_to_the_runs_that_run_not_to_inputs_read_back(bundle: Path, tmp_path: Path, script) -> None:
    inputs = inputs_file(tmp_path / "in.jsonl", ["a", "b", "c"])
    out = tmp_path / "out.jsonl"
    turns = script({"workers": {"main": [{"text": "one"}, {"text": "two"}, {"text": "three"}, {"text": "left"}]}})
    args = ("batch", bundle, inputs, "-o", out, "--script", turns, "--concurrency", "1", "--durable")
    result = run_cli(*args)
    assert result.exit_code == 0, result.stderr
    assert sorted(r["output"] for r in results_of(out)) == ["one", "three", "two"]
    assert "script turns not used: 'main' 1 of 4" in result.stderr
    out.unlink()
    again = run_cli(*args)  # every input is recorded: its output is read back, no turn is asked for
    assert again.exit_code == 0, again.stderr
    assert sorted(r["output"] for r in results_of(out)) == ["one", "three", "two"]
    assert "script turns not used: 'main' 4 of 4" in again.stderr


@pytest.mark.process
def test_a_database_url_llm_do_cannot_use_is_a_usage_error(bundle: Path, tmp_path: Path) -> None:
    inputs = inputs_file(tmp_path / "in.jsonl", ["a"])
    out = tmp_path / "out.jsonl"
    result = run_cli("batch", bundle, inputs, "-o", out, "--model", "test", "--durable", "ftp://host/db")
    assert result.exit_code == 2
    assert one_line_error(result).startswith("llm-do: ftp://host/db: not a database URL")
    assert not out.exists()


@pytest.mark.process
def test_without_dbos_durable_says_how_to_get_it(bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = inputs_file(tmp_path / "in.jsonl", ["a"])
    monkeypatch.setitem(sys.modules, "dbos", None)  # as if not installed
    result = run_cli("batch", bundle, inputs, "-o", tmp_path / "out.jsonl", "--model", "test", "--durable")
    assert result.exit_code == 1
    assert one_line_error(result) == "llm-do: durable runs need DBOS, which is not installed: pip install 'llm-do[durable]'"
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("command", [["exec", "BUNDLE", "hi", "--model", "test", "--durable"], ["runs"], ["resume", "r-1"],
                                     ["approvals"]])
@pytest.mark.process
def test_every_durable_command_without_dbos_says_how_to_get_it(command: list[str], bundle: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "dbos", None)  # as if not installed
    monkeypatch.chdir(tmp_path)
    result = run_cli(*[bundle if part == "BUNDLE" else part for part in command])
    assert result.exit_code == 1
    assert one_line_error(result) == "llm-do: durable runs need DBOS, which is not installed: pip install 'llm-do[durable]'"
    assert not (tmp_path / ".llm-do").exists()


@pytest.mark.process
def test_a_second_process_on_the_same_results_file_is_refused(tmp_path: Path) -> None:
    from llm_do.cli.results_lock import hold_results, release_results

    out = tmp_path / "out.jsonl"
    held = hold_results(out, "give each process its own -o")
    other = subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; "
                            "from llm_do.cli.results_lock import hold_results; hold_results(Path(sys.argv[1]), '')", str(out)],
                           capture_output=True, text=True, timeout=60)
    assert other.returncode != 0 and "another batch process is writing it" in other.stderr
    release_results(held)
    assert not (tmp_path / ".out.jsonl.lock").exists()
    again = hold_results(out, "")  # free again
    release_results(again)


@pytest.mark.process
def test_a_call_that_needs_approval_is_denied_not_left_waiting(tmp_path: Path) -> None:
    """Without a terminal, in `prompt` mode, an asked call is denied as in a batch without
    --durable; no input of a batch waits for an approval."""
    asking = build_project(tmp_path / "asking", {**PROJECT, "main.worker": worker("tools: [work]", "Work.")})
    inputs = inputs_file(tmp_path / "in.jsonl", ["alpha", "beta"])
    out = tmp_path / "out.jsonl"
    log = tmp_path / "work.log"
    result = run_cli("batch", asking, inputs, "-o", out, "--model", "test", "--durable", env={"BATCH_LOG": str(log)})
    assert result.exit_code == 0, result.stderr
    for line in (1, 2):  # each denial names its input line
        assert f"llm-do: #{line} denied work (main@1): approval needed and no terminal to ask" in result.stderr
    assert sorted(r["line"] for r in results_of(out)) == [1, 2]
    assert not log.exists()  # the tool never ran


# --- a killed process ----------------------------------------------------------------------------


@pytest.mark.process
def test_a_killed_durable_batch_is_finished_by_a_rerun_without_running_an_input_twice(bundle: Path, tmp_path: Path) -> None:
    prompts = [f"input {n}" for n in range(1, 13)]
    inputs = inputs_file(tmp_path / "in.jsonl", prompts)
    out = tmp_path / "out.jsonl"
    log = tmp_path / "work.log"
    args = ("batch", bundle, inputs, "-o", out, "--model", "test", "--concurrency", "3", "--durable")
    proc = llm_do(*args, log=log, wait=False, BATCH_TOOL_SECONDS="0.4")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if out.exists() and len(out.read_text().splitlines()) > 3 and sum(notes(log, "start").values()) > sum(notes(log, "done").values()):
            break  # some inputs done, some under way
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    cut = results_of(out)
    assert 3 <= len(cut) < 12
    rerun = run_cli(*args, env={"BATCH_LOG": str(log)})  # in this process: its own executor takes the dead one's
    assert rerun.exit_code == 0, rerun.stderr
    lines = [r["line"] for r in results_of(out)]
    assert sorted(lines) == list(range(1, 13))
    assert notes(log, "done") == Counter(prompts)  # each tool call that completed ran once


@pytest.mark.process
def test_ctrl_c_stops_a_durable_batch_and_a_rerun_finishes_it(bundle: Path, tmp_path: Path) -> None:
    prompts = [f"input {n}" for n in range(1, 21)]
    inputs = inputs_file(tmp_path / "in.jsonl", prompts)
    out = tmp_path / "out.jsonl"
    log = tmp_path / "work.log"
    args = ("batch", bundle, inputs, "-o", out, "--model", "test", "--concurrency", "4", "--durable")
    proc = llm_do(*args, log=log, wait=False, BATCH_TOOL_SECONDS="0.4")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if out.exists() and len(out.read_text().splitlines()) > 4:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    cut = results_of(out)
    assert 4 <= len(cut) < 20 and all(r["error"] is None for r in cut)
    assert not (tmp_path / ".out.jsonl.lock").exists()
    rerun = run_cli(*args, env={"BATCH_LOG": str(log)})  # in this process: its own executor takes the dead one's
    assert rerun.exit_code == 0, rerun.stderr
    lines = [r["line"] for r in results_of(out)]
    assert sorted(lines) == list(range(1, 21))
    assert lines[: len(cut)] == [r["line"] for r in cut]


# --- two processes on one Postgres queue ---------------------------------------------------------


@POSTGRES_GROUP
@pytest.mark.process
def test_two_batch_processes_on_one_postgres_queue_share_the_inputs(bundle: Path, tmp_path: Path,
                                                                     postgres_server: str) -> None:  # noqa: F811
    url = f"{postgres_server}/llmdo_batch"
    prompts = [f"input {n}" for n in range(1, 17)]
    inputs = inputs_file(tmp_path / "in.jsonl", prompts)
    log = tmp_path / "work.log"
    procs = [llm_do("batch", bundle, inputs, "-o", tmp_path / f"out{n}.jsonl", "--model", "test", "--concurrency", "2",
                    "--durable", url, log=log, wait=False, BATCH_GATE="1") for n in (1, 2)]
    deadline = time.monotonic() + 120  # both processes have taken inputs before any input may finish
    while time.monotonic() < deadline and len(pids(log, "start") if log.exists() else ()) < 2:
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        time.sleep(0.05)
    (tmp_path / "go").touch()
    ended = [p.communicate(timeout=180) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], ended
    assert notes(log, "start") == Counter(prompts)  # no input ran twice
    assert notes(log, "done") == Counter(prompts)
    assert len(pids(log, "done")) == 2  # both processes worked
    for n in (1, 2):  # each process's results file holds every input, whichever process ran it
        assert sorted(r["line"] for r in results_of(tmp_path / f"out{n}.jsonl")) == list(range(1, 17))


# --- the pieces, without DBOS --------------------------------------------------------------------

PREFIX = "llm-do-batch-d-s-"


def status(workflow_id: str, state: str, output: Any = None, executor: str | None = None) -> Any:
    return SimpleNamespace(workflow_id=workflow_id, status=state, output=output, error=None, executor_id=executor)


def test_input_ids_name_the_line_and_the_retry_generation() -> None:
    assert input_id(PREFIX, 7) == "llm-do-batch-d-s-7"
    assert input_id(PREFIX, 7, 2) == "llm-do-batch-d-s-7.2"
    assert parse_input_id(PREFIX, "llm-do-batch-d-s-7.2") == (7, 2)
    assert parse_input_id(PREFIX, "llm-do-batch-d-s-12") == (12, 0)
    assert parse_input_id(PREFIX, "llm-do-batch-d-t-12") is None
    assert parse_input_id(PREFIX, "llm-do-batch-d-s-x") is None


def test_the_plan_enqueues_what_is_not_recorded_and_a_new_generation_to_retry() -> None:
    known = recorded(PREFIX, [
        status(input_id(PREFIX, 1), "SUCCESS", {"output": "x", "error": None, "usage": {}}),
        status(input_id(PREFIX, 2), "SUCCESS", {"output": None, "error": "boom", "usage": {}}),
        status(input_id(PREFIX, 2, 1), "ERROR"),
        status(input_id(PREFIX, 3), "PENDING", executor="e"),
        status("llm-do-batch-other-3", "SUCCESS"),
    ])
    assert known[2] == Recorded(input_id(PREFIX, 2, 1), 1, "ERROR", None, True)
    assert not known[1].failed and not known[3].failed
    todo = [BatchInput(n, {"input": str(n)}) for n in (1, 2, 3, 4)]
    assert [(i.line, wid, enqueue) for i, wid, enqueue in plan(PREFIX, todo, known, retry_failed=False)] == [
        (1, input_id(PREFIX, 1), False), (2, input_id(PREFIX, 2, 1), False), (3, input_id(PREFIX, 3), False),
        (4, input_id(PREFIX, 4), True)]
    retried = plan(PREFIX, todo, known, retry_failed=True)
    assert [(i.line, wid, enqueue) for i, wid, enqueue in retried][1] == (2, input_id(PREFIX, 2, 2), True)
    assert retried[0][2] is False  # a success is never run again


def test_only_this_machines_dead_batch_processes_are_taken_over() -> None:
    mine = executor_id("here", os.getpid())
    alive = {101: True, 102: False}
    found = dead_local_executors([executor_id("here", 101), executor_id("here", 102), executor_id("there", 102), mine,
                                  None, "llm-do-run-x"], host="here", alive=lambda pid: alive[pid])
    assert found == [executor_id("here", 102)]

"""`--events PATH|-`: the run as JSON lines (worker, depth, tool calls and results, approvals, usage)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import one_line_error, run_cli
from tests.support.events import FLOW, FLOW_PROJECT, of_kind, read_events
from tests.support.projects import build_project


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_project(tmp_path_factory.mktemp("events") / "proj", FLOW_PROJECT)


@pytest.fixture
def flow_events(bundle: Path, script, tmp_path: Path) -> list[dict[str, Any]]:
    """The events of FLOW in prompt mode without a terminal (write_file is denied)."""
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", bundle, "go", "--script", script(FLOW), "--events", events)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "all done"  # with a file, the output still goes to stdout
    return read_events(events)


def test_every_line_is_a_json_event(flow_events: list[dict[str, Any]]) -> None:
    kinds = [e["event"] for e in flow_events]
    assert kinds[0] == "worker_started" and kinds[-1] == "run_finished"
    assert set(kinds) <= {"worker_started", "worker_finished", "tool_called", "tool_returned", "approval_requested",
                          "approval_decided", "run_finished"}


def test_workers_and_depths(flow_events: list[dict[str, Any]]) -> None:
    started = [(e["worker"], e["depth"], e["model"]) for e in of_kind(flow_events, "worker_started")]
    assert started == [("main", 1, "script:main"), ("helper", 2, "script:helper")]
    finished = [(e["worker"], e["depth"], e["output"]) for e in of_kind(flow_events, "worker_finished")]
    assert finished == [("helper", 2, "notes read"), ("main", 1, "all done")]


def test_tool_calls_and_results(flow_events: list[dict[str, Any]]) -> None:
    called = [(e["worker"], e["depth"], e["tool"], e["approval"]) for e in of_kind(flow_events, "tool_called")]
    assert called == [("main", 1, "helper", "allow"), ("helper", 2, "read_file", "allow"),
                      ("main", 1, "write_file", "ask")]
    [read] = of_kind(flow_events, "tool_called", tool="read_file")
    assert read["args"]["path"] == "notes.txt"
    results = {e["tool"]: (e["outcome"], e["result"]) for e in of_kind(flow_events, "tool_returned")}
    assert results["read_file"] == ("ok", "the notes\n")
    assert results["helper"] == ("ok", "notes read")
    assert results["write_file"][0] == "denied"


def test_approvals(flow_events: list[dict[str, Any]]) -> None:
    kinds = [e["event"] for e in flow_events if e.get("tool") == "write_file"]
    assert kinds == ["tool_called", "approval_requested", "approval_decided", "tool_returned"]
    [decided] = of_kind(flow_events, "approval_decided")
    assert (decided["worker"], decided["depth"], decided["approved"]) == ("main", 1, False)
    assert decided["note"]


def test_usage_grows_and_is_reported_at_the_end(flow_events: list[dict[str, Any]]) -> None:
    usages = [e["usage"] for e in flow_events if "usage" in e]
    assert set(usages[-1]) >= {"requests", "tool_calls", "input_tokens", "output_tokens"}
    requests = [u["requests"] for u in usages]
    assert requests == sorted(requests)
    assert usages[-1]["requests"] == 5  # main 3 + helper 2: shared across the run
    assert flow_events[-1]["output"] == "all done"


def test_events_to_stdout_are_json_lines_only(bundle: Path, script, tmp_path: Path) -> None:
    result = run_cli("exec", bundle, "go", "--script", script(FLOW), "--events", "-")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    events = [json.loads(line) for line in lines]  # nothing else is mixed in
    assert events[-1] == {**events[-1], "event": "run_finished", "output": "all done"}
    assert len(of_kind(events, "worker_started")) == 2


def test_the_events_file_keeps_what_happened_when_the_run_fails(bundle: Path, script, tmp_path: Path) -> None:
    s = script({"workers": {"main": [{"tool_calls": [{"tool": "helper", "args": {"input": "x"}}]}, {"text": "done"}],
                            "helper": []}})
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", bundle, "go", "--script", s, "--events", events)
    assert result.exit_code == 1
    evs = read_events(events)
    assert [(e["worker"], e["depth"]) for e in of_kind(evs, "worker_started")] == [("main", 1), ("helper", 2)]
    assert of_kind(evs, "run_finished") == []
    # The last event says the run failed and why; usage so far comes with it.
    assert evs[-1]["event"] == "run_failed"
    assert "helper" in evs[-1]["error"] and evs[-1]["usage"]["requests"] == 1


@pytest.mark.process
def test_events_to_a_pipe_closed_early_end_quietly(bundle: Path, script) -> None:
    """`llm-do exec ... --events - | head -n 1`: no traceback, no "run failed", no noise."""
    import subprocess
    import sys

    command = [sys.executable, "-m", "llm_do.cli.main", "exec", str(bundle), "go", "--script", str(script(FLOW)),
               "--events", "-"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # as `head -n 1` does once it has its line
    _, err = proc.communicate(timeout=60)
    assert json.loads(first)["event"] == "worker_started"
    assert err == b"", err.decode()


def test_an_unwritable_events_path_is_a_usage_error(bundle: Path, script, tmp_path: Path) -> None:
    result = run_cli("exec", bundle, "go", "--script", script(FLOW), "--events", tmp_path / "no" / "such" / "dir.jsonl")
    assert result.exit_code == 2
    assert "events" in one_line_error(result)
    assert not (bundle.parent / "out.txt").exists()


def test_verbose_traces_the_run_on_stderr(bundle: Path, script) -> None:
    result = run_cli("exec", bundle, "go", "--script", script(FLOW), "-v")
    assert result.exit_code == 0
    assert result.stdout.strip() == "all done"
    assert "  ▸ helper (script:helper)" in result.stderr and "    → read_file(" in result.stderr
    assert "Traceback" not in result.stderr
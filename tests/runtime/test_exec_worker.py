"""`llm-do exec --worker NAME`: another worker of the bundle run directly, with its own input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import one_line_error, run_cli
from tests.support.events import read_events

pytestmark = pytest.mark.process

VERDICT = {"workers": {"judge": [{"output": {"score": 7, "reason": "clear"}}]}}


def test_a_worker_runs_with_its_own_input_schema(schema_bundle: Path, script, tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", schema_bundle, "--worker", "judge", "--input-json", '{"text": "tides"}',
                     "--script", script(VERDICT), "--events", events)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {"score": 7, "reason": "clear"}
    started = [(e["worker"], e["depth"]) for e in read_events(events) if e["event"] == "worker_started"]
    assert started == [("judge", 1)]


def test_a_prompt_goes_to_the_named_worker_not_the_entry(schema_bundle: Path, script) -> None:
    # The entry (judge) takes Topic(text) and no prompt; boss takes a prompt.
    boss = {"workers": {"boss": [{"text": "delegated nothing"}]}}
    result = run_cli("exec", schema_bundle, "write it up", "--worker", "boss", "--script", script(boss))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "delegated nothing"


def test_the_entry_args_are_not_given_to_another_worker(py_bundle: Path, script) -> None:
    # entry.args {"input": ...} belong to main; judge needs its own `text`.
    result = run_cli("exec", py_bundle, "--worker", "judge", "--script", script(VERDICT))
    assert result.exit_code == 2
    assert one_line_error(result) == "llm-do: the worker 'judge' needs an input: give a PROMPT or --input-json"


def test_a_prompt_for_a_worker_without_input_field_is_a_usage_error(py_bundle: Path, script) -> None:
    result = run_cli("exec", py_bundle, "tides", "--worker", "judge", "--script", script(VERDICT))
    assert result.exit_code == 2
    assert one_line_error(result) == "llm-do: the worker 'judge' takes text, not a prompt; pass --input-json"


def test_an_unknown_worker_is_a_usage_error(py_bundle: Path) -> None:
    result = run_cli("exec", py_bundle, "hi", "--worker", "nobody", "--model", "test")
    assert result.exit_code == 2
    assert one_line_error(result) == "llm-do: --worker nobody: the bundle has no such worker (it has: judge, main)"
    close = run_cli("exec", py_bundle, "hi", "--worker", "jduge", "--model", "test")
    assert one_line_error(close) == "llm-do: --worker jduge: the bundle has no such worker; did you mean 'judge'?"


def test_run_takes_worker_as_exec_does(schema_bundle: Path, script) -> None:
    """`llm-do run` takes exec's options (README: "as exec"): --worker runs one worker of the project."""
    boss = {"workers": {"boss": [{"text": "ran boss from source"}]}}
    result = run_cli("run", schema_bundle.parent, "write it up", "--worker", "boss", "--script", script(boss))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "ran boss from source"
    unknown = run_cli("run", schema_bundle.parent, "hi", "--worker", "nobody", "--model", "test")
    assert (unknown.exit_code, unknown.stderr.splitlines()[-1]) == (  # after the build's G003 warning
        2, "llm-do: --worker nobody: the bundle has no such worker (it has: boss, judge)")


def test_build_and_run_quiet_print_no_warnings(schema_bundle: Path, script) -> None:
    """The edit-run loop: -q keeps the same warnings and infos (here G003, boss is unreachable; R014,
    judge's free-text reason reaches boss) off every call, counted by kind."""
    boss = script({"workers": {"judge": [{"output": {"score": 1, "reason": "r"}}]}})
    loud = run_cli("run", schema_bundle.parent, "--input-json", '{"text": "t"}', "--script", boss)
    quiet = run_cli("run", schema_bundle.parent, "-q", "--input-json", '{"text": "t"}', "--script", boss)
    assert "G003" in loud.stderr
    assert quiet.exit_code == 0 and quiet.stdout == loud.stdout
    assert quiet.stderr == ""
    built = run_cli("build", schema_bundle.parent, "--quiet")
    assert (built.exit_code, built.stderr) == (0, "")

"""`exec --model` with a model pydantic-ai would not know: exit 2 before anything runs, with the
message and hint `build` gives for the same name (M001), from the one stdlib-only checker."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import one_line_error, run_cli, worker, write_project
from tests.support.lint import lint

SIMPLE = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main", "args": {"input": "hi"}}},
    "main.worker": worker("model: test", "Work."),
}


@pytest.mark.parametrize("name", ["opnai:gpt-4o", "gpt-4o", "google-gla:gemini-2.5-pro", "openai:"])
def test_exec_with_an_unknown_model_is_exit_2_with_the_build_hint(build, tmp_path: Path, name: str) -> None:
    bundle = build(SIMPLE)
    result = run_cli("exec", bundle, "--model", name)
    assert result.exit_code == 2
    line = one_line_error(result)
    assert result.stdout == ""
    # The same message and hint as M001 for that name in a worker.
    other = write_project(tmp_path / "other", {**SIMPLE, "main.worker": worker(f"model: '{name}'", "Work.")})
    (m001,) = lint(other).of("M001")
    assert line == f"llm-do: --model: {m001['message']}" + (f"; {m001['hint']}" if m001["hint"] else "")


def test_exec_with_a_known_model_name_gets_past_the_check(build) -> None:
    bundle = build(SIMPLE)
    result = run_cli("exec", bundle, "--model", "test")
    assert result.exit_code == 0, result.stderr

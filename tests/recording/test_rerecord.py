"""Recording a stale cassette again the way it was made (newcomer G6): a cassette names the script
it was recorded from and `llm-do test --record` plays it again offline; a run that does not pass its
case never replaces a cassette (nor does `--record` write an eval report); the stale hint fits how the
cassette was made; `llm-do init` writes its first case with a cassette (G16)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from tests.support.cli import run_cli, worker, write_project

FILES = {
    "project.json": {"version": 1, "name": "notes", "worker_files": ["*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker("description: Greets.\nmodel: openai:gpt-4o-mini", "Greet."),
    "s.json": {"workers": {"main": [{"text": "hello"}]}},
    "tests/cases.yaml": "cases:\n  - name: greets\n    input: hi\n    cassette: cassettes/main.json\n"
                        "    expect: {output: {equals: hello}}\n",
}
STALE = "the cassette is stale (what the model is shown changed since it was recorded)"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The project, its case's cassette recorded from the script s.json."""
    root = write_project(tmp_path / "proj", FILES)
    result = run_cli("run", root, "hi", "--script", root / "s.json", "--record", root / "tests" / "cassettes")
    assert result.exit_code == 0, result.stderr
    return root


def edit_instructions(root: Path) -> None:
    (root / "main.worker").write_text(worker("description: Greets.\nmodel: openai:gpt-4o-mini", "Greet warmly."))


def test_a_cassette_names_its_script_and_is_recorded_again_from_it_offline(project: Path) -> None:
    cassette = project / "tests" / "cassettes" / "main.json"
    assert json.loads(cassette.read_text())["script"] == "s.json"
    edit_instructions(project)
    result = run_cli("test", project, env={"OPENAI_API_KEY": None})
    assert result.stdout.splitlines()[:3] == [
        "STALE greets (tests/cases.yaml:2)",
        f"  {STALE}: record it again from its script s.json with `llm-do test --record`",
        "  instructions of main changed"]

    result = run_cli("test", project, "--record", env={"OPENAI_API_KEY": None})
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == ["PASS greets (tests/cases.yaml:2)", "  recorded main.json",
                                          "1 case: 1 passed, 0 failed, 0 stale"]
    recorded = json.loads(cassette.read_text())
    assert recorded["script"] == "s.json" and recorded["calls"][0]["requests"][0]["shown"]["instructions"] == "Greet warmly."
    assert run_cli("test", project).exit_code == 0
    assert not (project / "tests" / "evals").exists()


def test_a_recording_that_fails_its_case_replaces_no_cassette(project: Path) -> None:
    cassette = project / "tests" / "cassettes" / "main.json"
    before = cassette.read_bytes()
    edit_instructions(project)
    (project / "s.json").write_text(json.dumps({"workers": {"main": [{"text": "goodbye"}]}}))
    for args in (("--record",), ("--record", "--live")):
        result = run_cli("test", project, *args, env={"OPENAI_API_KEY": None})
        assert result.exit_code == 1
        assert result.stdout.splitlines()[:4] == [
            "FAIL greets (tests/cases.yaml:2)", "  output: expected 'hello', got 'goodbye'",
            "  not recorded: the run did not pass the case, so tests/cassettes/main.json is kept as it was",
            "1 case: 0 passed, 1 failed, 0 stale"]
        assert cassette.read_bytes() == before
    assert not (project / "tests" / "evals").exists()


def test_a_cassette_recorded_on_a_model_is_recorded_again_only_live_and_only_by_a_passing_run(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", {**FILES, "tests/cases.yaml": FILES["tests/cases.yaml"].replace(
        "equals: hello", "contains: success")})
    assert run_cli("run", root, "hi", "--model", "test", "--record", root / "tests" / "cassettes").exit_code == 0
    cassette = root / "tests" / "cassettes" / "main.json"
    before = cassette.read_bytes()
    edit_instructions(root)
    hint = f"  {STALE}: record it again on the project's models with `llm-do test --record --live` (it calls test)"
    result = run_cli("test", root, "--record", env={"OPENAI_API_KEY": None})
    assert result.exit_code == 1
    assert result.stdout.splitlines()[:2] == ["STALE greets (tests/cases.yaml:2)", hint]

    result = run_cli("test", root, "--record", "--live", env={"OPENAI_API_KEY": None})
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[:2] == ["FAIL greets (tests/cases.yaml:2)",
                         "  0 of 1 run passed; 1 must (pass_rate 1: the share of runs that must pass)"]
    assert lines[2].startswith("  the run failed: cannot use model 'openai:gpt-4o-mini': set OPENAI_API_KEY")
    assert lines[3] == "  not recorded: the run did not pass the case, so tests/cassettes/main.json is kept as it was"
    assert cassette.read_bytes() == before
    assert not (root / "tests" / "evals").exists()


def test_the_hint_of_a_cassette_recorded_from_a_script_it_does_not_name(project: Path) -> None:
    cassette = project / "tests" / "cassettes" / "main.json"
    data = json.loads(cassette.read_text())
    del data["script"]  # as recorded before cassettes named their script
    cassette.write_text(json.dumps(data))
    edit_instructions(project)
    result = run_cli("test", project)
    assert result.stdout.splitlines()[1] == (
        f"  {STALE}: it was recorded from a script it does not name; record it again from that script "
        "(`llm-do run PROJECT --script SCRIPT --record DIR`)")


def test_a_missing_cassette_is_recorded_live_only(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", FILES)
    result = run_cli("test", root, "--record")
    assert result.exit_code == 1
    assert result.stdout.splitlines()[1] == (
        "  cassettes/main.json is not there: record it on the project's models with `llm-do test --record --live`, "
        "or from a script with `llm-do run PROJECT --script SCRIPT --record DIR`")


@pytest.mark.parametrize(("rate", "runs", "needed"), [(1, 1, 1), (0.7, 10, 7), (0.8, 5, 4), (0.5, 3, 2), (0, 3, 0),
                                                      (0.34, 3, 2), (0.1, 100, 10)])
def test_pass_rate_is_the_share_of_runs_that_must_pass(rate: float, runs: int, needed: int) -> None:
    from llm_do.cli.testing.evals import runs_needed

    assert runs_needed(rate, runs) == needed


def test_init_writes_its_first_case_with_a_cassette_recorded_from_its_script(tmp_path: Path) -> None:
    root = tmp_path / "p"
    result = run_cli("init", root)
    assert result.exit_code == 0, result.stderr
    cassette = root / "tests" / "cassettes" / "main.json"
    assert stat.S_IMODE(cassette.stat().st_mode) == 0o600
    assert json.loads(cassette.read_text())["script"] == "script.json"
    cases = (root / "tests" / "cases.yaml").read_text()
    assert "    cassette: cassettes/main.json\n" in cases and "script:" not in cases
    assert run_cli("test", root, env={"OPENAI_API_KEY": None}).exit_code == 0

    (root / "main.worker").write_text((root / "main.worker").read_text().replace("answer briefly", "answer in one line"))
    result = run_cli("test", root, env={"OPENAI_API_KEY": None})
    assert result.stdout.startswith("STALE answers-the-default-request") and "`llm-do test --record`" in result.stdout
    assert run_cli("test", root, "--record", env={"OPENAI_API_KEY": None}).exit_code == 0
    assert run_cli("test", root, env={"OPENAI_API_KEY": None}).exit_code == 0


def test_junit_is_readable_by_its_owner_only(project: Path, tmp_path: Path) -> None:
    junit = tmp_path / "junit.xml"
    assert run_cli("test", project, "--junit", junit).exit_code == 0
    assert stat.S_IMODE(junit.stat().st_mode) == 0o600


def test_init_keeps_a_case_that_plays_the_script_when_its_cassette_cannot_be_recorded(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "main.worker").write_text(worker("toolsets: [no_such_toolset]", "hi"))  # kept, and does not build
    result = run_cli("init", root)
    assert result.exit_code == 0
    assert ("(its first case plays script.json: its cassette could not be recorded, the project does not build yet)"
            in result.stderr)
    cases = (root / "tests" / "cases.yaml").read_text()
    assert "    script: ../script.json\n" in cases and "# It plays script.json." in cases
    assert not (root / "tests" / "cassettes").exists()

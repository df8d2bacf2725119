"""`-q` means one thing on every command that takes it (build, lint, run, test): only errors, the
exit status saying the rest; `test -q` adds the cases that did not pass and the summary."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run_cli, worker, write_project

SCRIPT = {"workers": {"main": [{"text": "done"}]}}
FILES = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker("model: test", "Answer."),
    "orphan.worker": worker("model: test", "Nobody calls me."),  # G003, a warning
    "s.json": SCRIPT,
    "tests/cases.yaml": """
        cases:
          - name: passes
            input: hi
            script: ../s.json
            expect:
              output: {equals: done}
          - name: fails
            input: hi
            script: ../s.json
            expect:
              output: {equals: something else}
    """,
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_project(tmp_path_factory.mktemp("quiet"), FILES)


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_project(tmp_path_factory.mktemp("broken"), {**FILES, "main.worker": worker("model: test\ntoolsets: [nope]", "Go.")})


def test_build_q_prints_nothing_when_it_succeeds_with_warnings(project: Path, tmp_path: Path) -> None:
    loud = run_cli("build", project, "-o", tmp_path / "loud.lock")
    assert loud.exit_code == 0 and "G003" in loud.stderr and "written" in loud.stderr
    quiet = run_cli("build", project, "-q", "-o", tmp_path / "quiet.lock")
    assert (quiet.exit_code, quiet.stdout, quiet.stderr) == (0, "", "")
    check = run_cli("build", project, "--check", "-q", "-o", tmp_path / "quiet.lock")
    assert (check.exit_code, check.stderr) == (0, "")


def test_build_q_prints_the_errors(broken: Path, tmp_path: Path) -> None:
    quiet = run_cli("build", broken, "-q", "-o", tmp_path / "b.lock")
    assert quiet.exit_code == 1
    assert "N003" in quiet.stderr and "G003" not in quiet.stderr
    assert "build failed" in quiet.stderr


def test_lint_q_prints_only_errors(project: Path, broken: Path) -> None:
    clean = run_cli("lint", project, "-q")
    assert (clean.exit_code, clean.stdout, clean.stderr) == (0, "", "")  # a warning, and not "no problems found"
    errors = run_cli("lint", broken, "-q")
    assert errors.exit_code == 1 and "N003" in errors.stderr and "G003" not in errors.stderr
    strict = run_cli("lint", project, "-q", "--strict")
    assert (strict.exit_code, strict.stderr) == (1, "")  # the warning fails it, unshown


def test_lint_q_keeps_only_errors_in_every_format(broken: Path) -> None:
    loud = json.loads(run_cli("lint", broken, "--format", "json").stdout)
    quiet = json.loads(run_cli("lint", broken, "--format", "json", "-q").stdout)
    assert {d["code"] for d in loud["diagnostics"]} == {"N003", "G003"}
    assert [d["code"] for d in quiet["diagnostics"]] == ["N003"]
    github = run_cli("lint", broken, "--format", "github", "-q").stdout
    assert "N003" in github and "G003" not in github


def test_run_q_prints_the_output_and_no_warning(project: Path) -> None:
    quiet = run_cli("run", project, "hi", "-q", "--script", project / "s.json")
    assert (quiet.exit_code, quiet.stdout.strip(), quiet.stderr) == (0, "done", "")


def test_test_q_prints_the_failures_and_the_summary(project: Path) -> None:
    loud = run_cli("test", project)
    assert loud.stdout.splitlines()[0] == "PASS passes (tests/cases.yaml:2)"
    quiet = run_cli("test", project, "-q")
    assert quiet.exit_code == 1
    lines = quiet.stdout.splitlines()
    assert lines[0] == "FAIL fails (tests/cases.yaml:7)" and lines[-1] == "2 cases: 1 passed, 1 failed, 0 stale"
    assert not any(line.startswith("PASS") for line in lines)
    assert quiet.stdout == loud.stdout.replace("PASS passes (tests/cases.yaml:2)\n", "")
    assert "G003" in loud.stderr and quiet.stderr == ""


@pytest.mark.parametrize(("command", "says"), [
    ("build", "Print only errors"), ("lint", "Print only errors"), ("run", "Print only errors"),
    ("test", "Print only the cases that did not pass"),
])
def test_every_q_says_what_it_does_in_help(command: str, says: str) -> None:
    help_text = " ".join(run_cli(command, "--help").stdout.split())
    assert f"-q, --quiet {says}" in help_text

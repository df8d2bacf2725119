"""`llm-do init` (a new project that builds and runs offline) and `llm-do explain CODE`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm_do.compiler.codes import RULES
from tests.support.cli import run_cli, worker, write_project


def test_init_creates_a_project_that_builds_and_runs(tmp_path: Path) -> None:
    target = tmp_path / "fresh"
    result = run_cli("init", target)
    assert result.exit_code == 0, result.stderr
    assert (target / "project.json").is_file()
    assert (target / "script.json").is_file()
    assert list(target.glob("*.worker"))

    build = run_cli("build", target)
    assert build.exit_code == 0, build.stderr
    assert "warning" not in build.stderr.lower()
    lint = run_cli("lint", target, "--format", "json", "--strict")
    assert lint.exit_code == 0, lint.stdout
    assert lint.json()["diagnostics"] == []

    run = run_cli("exec", target / "bundle.lock", "--script", target / "script.json")
    assert run.exit_code == 0, run.stderr
    assert run.stdout.strip()
    assert "Traceback" not in run.stderr


def test_init_in_the_current_directory(tmp_path: Path) -> None:
    result = run_cli("init", cwd_to=tmp_path)
    assert result.exit_code == 0, result.stderr
    assert json.loads((tmp_path / "project.json").read_text())["version"] == 1
    assert run_cli("build", tmp_path).exit_code == 0


def test_init_refuses_an_existing_project(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", {"project.json": {"version": 1, "name": "mine"}, "main.worker": worker("", "Mine.")})
    before = {p.name: p.read_bytes() for p in root.iterdir()}
    result = run_cli("init", root)
    assert result.exit_code == 2
    assert "project.json" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr
    assert {p.name: p.read_bytes() for p in root.iterdir()} == before


@pytest.mark.parametrize("spelling", ["G001", "g001"])
def test_explain_known_code(spelling: str) -> None:
    result = run_cli("explain", spelling)
    assert result.exit_code == 0
    rule = RULES["G001"]
    out = result.stdout
    assert "G001" in out
    assert rule.name in out
    assert rule.summary in out
    assert rule.explanation in out


def test_explain_every_code() -> None:
    for code, rule in RULES.items():
        result = run_cli("explain", code)
        assert result.exit_code == 0, code
        assert rule.explanation in result.stdout, code
        assert rule.severity in result.stdout, code


def test_explain_unknown_code_suggests() -> None:
    result = run_cli("explain", "G01")
    assert result.exit_code == 2
    assert "did you mean" in result.stderr.lower()
    assert "G001" in result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr


def test_explain_nonsense_code() -> None:
    result = run_cli("explain", "ZZZ999")
    assert result.exit_code == 2
    assert "ZZZ999" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_explain_without_a_code_lists_every_code_by_group() -> None:
    result = run_cli("explain")
    assert result.exit_code == 0
    out = result.stdout
    for code, rule in RULES.items():
        line = next(line for line in out.splitlines() if line.strip().startswith(code + " "))
        assert rule.name in line and rule.summary in line, code
    headings = [line for line in out.splitlines() if line and not line.startswith(" ")]
    assert headings[0].startswith("P: ") and len(headings) == len({c[0] for c in RULES})
    # Each code sits under its own group's heading.
    current = ""
    for line in out.splitlines():
        if line and not line.startswith(" "):
            current = line[0]
        elif line.strip():
            assert line.strip()[0] == current, line


def test_explain_accepts_a_rule_name() -> None:
    result = run_cli("explain", "undeclared-recursion")
    assert result.exit_code == 0
    assert result.stdout.startswith("G001 undeclared-recursion (error)")
    assert run_cli("explain", "Undeclared_Recursion").stdout == result.stdout
    near = run_cli("explain", "undeclared-recursio")
    assert near.exit_code == 2
    assert "did you mean 'undeclared-recursion'?" in near.stderr


def test_explain_names_no_file_that_is_not_installed() -> None:
    """The explanations and messages of `explain` are read where llm-do is installed, without
    this repository: no spec/ or docs/ path."""
    texts = [run_cli("explain").stdout, run_cli("explain", "ZZZ999").stderr]
    texts += [run_cli("explain", code).stdout for code in RULES]
    for text in texts:
        assert "spec/" not in text and "docs/" not in text and ".md" not in text, text


def test_init_projects_build_the_workers_worker_create_writes(tmp_path: Path) -> None:
    target = tmp_path / "fresh"
    assert run_cli("init", target).exit_code == 0
    (target / "workers" / "generated").mkdir(parents=True)
    (target / "workers" / "generated" / "drafted.worker").write_text('---\nname: "drafted"\ndescription: "d"\n---\nDo it.\n')
    result = run_cli("build", target)
    assert result.exit_code == 0, result.stderr
    assert "drafted" in json.loads((target / "bundle.lock").read_text())["workers"]


@pytest.mark.process
def test_init_worker_creates_a_directory_worker_whose_script_calls_its_tool(tmp_path: Path) -> None:
    target = tmp_path / "fresh"
    result = run_cli("init", target, "--worker", "counter")
    assert result.exit_code == 0, result.stderr
    assert (target / "workers" / "counter" / "worker.worker").is_file()
    assert "def count_words" in (target / "workers" / "counter" / "tools.py").read_text(encoding="utf-8")
    assert run_cli("lint", target).exit_code == 0
    assert run_cli("build", target).exit_code == 0
    events = tmp_path / "events.jsonl"
    ran = run_cli("exec", target / "bundle.lock", "--script", target / "script.json", "--strict-script", "--approve-all",
                  "--events", events)
    assert ran.exit_code == 0, ran.stderr
    called = [json.loads(line) for line in events.read_text(encoding="utf-8").splitlines()]
    (returned,) = [e for e in called if e["event"] == "tool_returned" and e["tool"] == "count_words"]
    assert (returned["worker"], returned["result"]) == ("counter", "7")
    # added to the project that is there now: the worker and its own turns
    again = run_cli("init", target, "--worker", "second")
    assert again.exit_code == 0, again.stderr
    assert json.loads((target / "workers" / "second" / "script.json").read_text(encoding="utf-8"))["workers"]["second"]
    assert run_cli("init", target, "--worker", "second").exit_code == 2
    bad = run_cli("init", target, "--worker", "bad-name")
    assert bad.exit_code == 2 and "identifier" in bad.stderr and "Traceback" not in bad.stderr


def test_init_prints_next_steps_that_run_as_copied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A path with a space is quoted; a kept main.worker (no tools) gets a script it can play."""
    import shlex

    target = tmp_path / "my proj"
    target.mkdir()
    (target / "main.worker").write_text(worker("model: test", "Answer."))
    result = run_cli("init", target)
    assert result.exit_code == 0, result.stderr
    assert "main.worker was there and is kept" in result.stderr
    steps = [line.strip() for line in result.stderr.splitlines()[1:]]
    assert steps[0] == f"llm-do build '{target.as_posix()}'"
    for step in steps:
        words = shlex.split(step)
        assert words[0] == "llm-do"
        ran = run_cli(*words[1:])
        assert ran.exit_code == 0, (step, ran.stderr)

"""Lint records: `llm-do lint` of a project that did not change since its last lint compiles
nothing and reports exactly what a compile reports, in every format; any changed input, a lint
with errors, `--no-import` against an importing lint, a forged record and `--no-cache` all go
through a real compile."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from llm_do.compiler import pipeline
from llm_do.compiler.build.lint_record import lint_records
from llm_do.provenance import build_record
from tests.support.cli import run_cli, worker, write_project
from tests.support.mcp import SERVER, STDIO_SERVER, mcp_project
from tests.support.projects import compile_calls

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["workers/*.worker"], "entry": {"worker": "main"},
                     "vars": {"tone": "dry"}},
    "workers/main.worker": worker("model: test\ntoolsets: [helper]", "Be {{ tone }}.\n"),
    "workers/helper.worker": worker("description: Helps", "Help."),
    "workers/orphan.worker": worker("model: test", "Nobody calls me."),
}


@pytest.fixture
def records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "llm-do" / "lints"


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The projects compiled from now on (the compiler still runs)."""
    return compile_calls(monkeypatch, pipeline)


@pytest.fixture
def project(tmp_path: Path, records: Path) -> Path:
    return write_project(tmp_path / "proj", PROJECT)


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_a_second_lint_of_an_unchanged_project_compiles_nothing_and_says_the_same(
        project: Path, compiles: list[Path], fmt: str) -> None:
    first = run_cli("lint", project, "--format", fmt)
    second = run_cli("lint", project, "--format", fmt)
    uncached = run_cli("lint", project, "--format", fmt, "--no-cache")
    assert len(compiles) == 2  # the first lint and the one with --no-cache
    assert "G003" in first.stdout + first.stderr  # the orphan: a warning, so the lint is recorded
    assert (second.exit_code, second.stdout, second.stderr) == (first.exit_code, first.stdout, first.stderr)
    assert (uncached.exit_code, uncached.stdout, uncached.stderr) == (first.exit_code, first.stdout, first.stderr)


def test_strict_exits_on_the_recorded_warnings_too(project: Path, compiles: list[Path]) -> None:
    assert run_cli("lint", project).exit_code == 0
    assert run_cli("lint", project, "--strict").exit_code == 1
    assert len(compiles) == 1


def test_an_edit_an_added_file_and_a_changed_template_variable_are_linted_again(
        project: Path, compiles: list[Path]) -> None:
    run_cli("lint", project)
    (project / "workers" / "orphan.worker").write_text(worker("model: nope:nothing", "Nobody calls me."))
    edited = run_cli("lint", project)
    assert "M001" in edited.stderr and len(compiles) == 2
    (project / "workers" / "orphan.worker").write_text(worker("model: test", "Nobody calls me."))
    run_cli("lint", project)
    assert len(compiles) == 2  # the text the first lint read again: its record holds (the erring lint kept none)
    (project / "workers" / "extra.worker").write_text(worker("model: test", "Me too."))
    added = run_cli("lint", project)
    assert "worker 'extra' is not reachable" in added.stderr and len(compiles) == 3
    (project / "project.json").write_text((project / "project.json").read_text().replace('"dry"', '"warm"'))
    run_cli("lint", project)
    assert len(compiles) == 4
    assert run_cli("lint", project).stderr == run_cli("lint", project, "--no-cache").stderr
    assert len(compiles) == 5


def test_a_lint_with_errors_is_not_recorded(project: Path, compiles: list[Path]) -> None:
    (project / "workers" / "main.worker").write_text(worker("model: test\ntoolsets: [nobody]", "Hi."))
    first, second = run_cli("lint", project), run_cli("lint", project)
    assert first.exit_code == second.exit_code == 1
    assert first.stderr == second.stderr
    assert len(compiles) == 2


def test_importing_and_not_importing_lints_have_their_own_records(tmp_path: Path, records: Path,
                                                                  compiles: list[Path]) -> None:
    root = shutil.copytree(EXAMPLES / "python_tools", tmp_path / "python_tools")
    imported = run_cli("lint", root, "--format", "json")
    read = run_cli("lint", root, "--format", "json", "--no-import")
    assert "Y006" in read.stdout and "Y006" not in imported.stdout
    assert run_cli("lint", root, "--format", "json").stdout == imported.stdout
    assert run_cli("lint", root, "--format", "json", "--no-import").stdout == read.stdout
    assert len(compiles) == 2
    tools = next(p for p in root.rglob("*.py") if "def " in p.read_text())
    tools.write_text(tools.read_text() + "\n\ndef added_later() -> None:\n    pass\n")
    run_cli("lint", root, "--format", "json")
    assert len(compiles) == 3  # the Python changed: what an import finds is asked again


def test_a_forged_or_damaged_record_changes_nothing(project: Path, records: Path, compiles: list[Path]) -> None:
    first = run_cli("lint", project)
    entries = [p for p in records.rglob("*.json")]
    assert len(entries) == 1
    text = entries[0].read_text()
    entries[0].write_text(text.replace("is not reachable", "is fine"))  # the signature no longer matches
    forged = run_cli("lint", project)
    assert forged.stderr == first.stderr and len(compiles) == 2
    entries[0].write_text("{not json")
    damaged = run_cli("lint", project)
    assert damaged.stderr == first.stderr and len(compiles) == 3


def test_no_cache_and_the_environment_variable_neither_read_nor_write_records(
        project: Path, records: Path, compiles: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    run_cli("lint", project, "--no-cache")
    monkeypatch.setenv("LLM_DO_NO_CACHE", "1")
    run_cli("lint", project)
    assert not records.exists()
    assert len(compiles) == 2


def test_another_manifest_beside_project_json_is_neither_recalled_nor_recorded(
        project: Path, compiles: list[Path]) -> None:
    """Records are kept by the project's root: a lint of `alt.json`, which lists fewer workers,
    says what its compile says, not the record of `project.json`'s lint, and the other way round."""
    alt = json.loads((project / "project.json").read_text())
    alt["worker_files"] = ["workers/main.worker", "workers/helper.worker"]
    (project / "alt.json").write_text(json.dumps(alt))
    assert "orphan" in run_cli("lint", project).stderr
    assert "orphan" not in run_cli("lint", project / "alt.json").stderr
    assert "orphan" in run_cli("lint", project / "project.json").stderr
    assert len(compiles) == 2


DAMAGES = {
    "a diagnostic that does not decode": lambda body: {**body, "diagnostics": [{"code": "G003", "severity": "warning"}]},
    "diagnostics that are no list": lambda body: {**body, "diagnostics": "G003"},
    "a body that is no object": lambda body: [body],
}


@pytest.mark.parametrize("damage", DAMAGES.values(), ids=DAMAGES.keys())
def test_a_signed_record_whose_diagnostics_do_not_decode_changes_nothing(
        project: Path, records: Path, compiles: list[Path], damage: Callable[[Any], Any]) -> None:
    """Signed with the user's key (as an older llm-do's record would be), yet not a lint's record:
    the lint compiles and says what a compile says."""
    first = run_cli("lint", project)
    [entry] = records.rglob("*.json")
    kept = json.loads(json.loads(entry.read_text())["entry"])
    signed = lint_records()
    assert signed is not None
    signed.write(kept["key"], damage(kept["body"]))
    again = run_cli("lint", project)
    assert (again.exit_code, again.stderr) == (first.exit_code, first.stderr) and len(compiles) == 2


def test_a_lint_by_other_llm_do_code_with_another_pythonpath_or_of_a_copy_compiles_again(
        project: Path, tmp_path: Path, compiles: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """A lint record is keyed as a build record is: by llm-do's code (an upgrade may find other
    problems), what shapes `sys.path` and the project's place, not by the tree's listing alone."""
    run_cli("lint", project)
    assert len(compiles) == 1
    copy = shutil.copytree(project, tmp_path / "copy")
    run_cli("lint", copy)
    assert len(compiles) == 2
    monkeypatch.setenv("PYTHONPATH", "src")
    run_cli("lint", project)
    assert len(compiles) == 3
    monkeypatch.delenv("PYTHONPATH")
    monkeypatch.setattr(build_record, "code_stamp", lambda: "the stamp of other code")
    run_cli("lint", project)
    assert len(compiles) == 4


def test_a_project_with_an_mcp_server_is_not_recorded(
        tmp_path: Path, records: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its tools are listed live from the server, which a record could not tell changed: each lint
    lists them again."""
    monkeypatch.setenv("LLM_DO_TEST_PYTHON", sys.executable)
    monkeypatch.setenv("LLM_DO_TEST_MCP_SERVER", str(SERVER))
    root = write_project(tmp_path / "mcp", mcp_project(STDIO_SERVER))
    linted = run_cli("lint", root)
    assert linted.exit_code == 0, linted.stderr
    assert not records.exists()


def test_the_lint_records_are_pruned_past_16_mb(records: Path) -> None:
    """As spec/language.md says: past 16 MiB the least recently used go, down to three quarters."""
    signed = lint_records()
    assert signed is not None
    signed.write({"n": "00"}, "x")
    overhead = signed.path({"n": "00"}).stat().st_size - 1  # all but the body, alike for every entry
    signed.path({"n": "00"}).unlink()
    limit = 16 * 1024 * 1024

    def total() -> int:
        return sum(p.stat().st_size for p in records.glob("*/*.json"))

    for n in range(15):
        signed.write({"n": f"{n:02d}"}, "x" * (1024 * 1024 - overhead))
    signed.write({"n": "15"}, "x" * (limit - total() - overhead))  # exactly at the limit: all kept
    assert total() == limit and len(list(records.glob("*/*.json"))) == 16
    signed.write({"n": "16"}, "x")  # one byte past it
    assert total() <= limit * 3 // 4

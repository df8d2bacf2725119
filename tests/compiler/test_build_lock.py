"""`build_lock`, `write_lock` and `lint_project` from Python: the ways `llm-do build` and `llm-do
lint` have (a lock recalled from its record, rebuilt from the last one after a body edit, compiled;
a lint recalled or compiled), each giving the bytes and diagnostics a clean build gives, and the
lock written as the command writes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from llm_do.compiler.build import LockIsSource, build_lock, lint_project, write_lock
from tests.support.cli import run_cli, worker, write_project
from tests.support.projects import clean_build

LOCK = "bundle.lock"

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["workers/*.worker"], "entry": {"worker": "main"}},
    "workers/main.worker": worker("model: test\ntoolsets: [helper]", "Be brief."),
    "workers/helper.worker": worker("description: Helps\nmodel: test", "Help."),
    "workers/orphan.worker": worker("model: test", "Nobody calls me."),  # G003, a warning
}


def _written(root: Path, monkeypatch: pytest.MonkeyPatch, cache: bool = True) -> str:
    """Build the lock and write it as `llm-do build` does, saying how it was made."""
    outcome = build_lock(root, root / LOCK, cache=cache)
    clean, diagnostics = clean_build(root, monkeypatch)
    assert [d.as_json() for d in outcome.diagnostics] == diagnostics
    assert outcome.workers == 3 and outcome.root == root and not outcome.failed
    before = (root / LOCK).read_bytes() if (root / LOCK).exists() else None
    assert outcome.bundle in (None, clean)
    assert write_lock(outcome, root / LOCK) == (before != clean)
    assert (root / LOCK).read_bytes() == clean
    return outcome.how


def test_build_lock_recalls_rebuilds_or_compiles_as_the_cli_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = write_project(tmp_path / "proj", PROJECT)
    assert _written(root, monkeypatch) == "compiled"
    assert _written(root, monkeypatch) == "recalled"
    (root / "workers" / "helper.worker").write_text(worker("description: Helps\nmodel: test", "Help more."))
    assert _written(root, monkeypatch) == "rebuilt"
    assert _written(root, monkeypatch) == "recalled"  # the rebuilt lock was recorded
    assert _written(root, monkeypatch, cache=False) == "compiled"


def test_a_failed_build_writes_nothing_and_the_old_lock_stays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = write_project(tmp_path / "proj", PROJECT)
    assert _written(root, monkeypatch) == "compiled"
    old = (root / LOCK).read_bytes()
    (root / "workers" / "helper.worker").write_text(worker("description: Helps\nmodel: test\ntoolsets: [nowhere]", "Help."))
    outcome = build_lock(root, root / LOCK)
    assert outcome.failed and any(d.severity == "error" for d in outcome.diagnostics)
    assert write_lock(outcome, root / LOCK) is False
    assert (root / LOCK).read_bytes() == old


def test_a_lock_over_a_source_is_refused_from_python_and_the_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = write_project(tmp_path / "proj", PROJECT)
    source = root / "workers" / "orphan.worker"
    kept = source.read_bytes()
    with pytest.raises(LockIsSource, match="is a source of the project"):
        write_lock(build_lock(root, source), source)
    result = run_cli("build", root, "-o", source)
    assert result.exit_code == 2 and "is a source of the project; write the lock elsewhere" in result.stderr, result.stderr
    assert source.read_bytes() == kept


def test_lint_project_recalls_a_lint_of_an_unchanged_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = write_project(tmp_path / "proj", PROJECT)
    _, diagnostics = clean_build(root, monkeypatch)
    ways = []
    for edit in ("", "", "Help more."):
        if edit:
            (root / "workers" / "helper.worker").write_text(worker("description: Helps\nmodel: test", edit))
        outcome = lint_project(root)
        assert [d.as_json() for d in outcome.diagnostics] == diagnostics and outcome.root == root
        ways.append(outcome.how)
    assert ways == ["compiled", "recalled", "compiled"]
    assert lint_project(root, cache=False).how == "compiled"

"""`build_lock` and `lint_project` from Python: the ways `llm-do build` and `llm-do lint` have (a
lock recalled from its record, rebuilt from the last one after a body edit, compiled; a lint
recalled or compiled), each giving the bytes and diagnostics a clean build gives."""

from __future__ import annotations

from pathlib import Path

import pytest

from llm_do.compiler.build import build_lock, lint_project
from tests.support.cli import worker, write_project
from tests.support.projects import clean_build

LOCK = "bundle.lock"

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["workers/*.worker"], "entry": {"worker": "main"}},
    "workers/main.worker": worker("model: test\ntoolsets: [helper]", "Be brief."),
    "workers/helper.worker": worker("description: Helps\nmodel: test", "Help."),
    "workers/orphan.worker": worker("model: test", "Nobody calls me."),  # G003, a warning
}


def _written(root: Path, monkeypatch: pytest.MonkeyPatch, cache: bool = True) -> str:
    """Build the lock as `llm-do build` does (the bytes written, then `keep`), saying how."""
    outcome = build_lock(root, root / LOCK, cache=cache)
    clean, diagnostics = clean_build(root, monkeypatch)
    assert [d.as_json() for d in outcome.diagnostics] == diagnostics
    assert outcome.workers == 3 and outcome.root == root
    if outcome.bundle is not None:
        assert outcome.bundle == clean
        (root / LOCK).write_bytes(outcome.bundle)
        outcome.keep()
    else:
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

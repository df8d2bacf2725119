"""What leaving a state folder out of a build record must not hide: a link whose target passes
through the folder (it comes alive when the folder is made), and a glob part whose character class
matches the folder only as written (folding its case changes what it matches). In each, a change
under `.llm-do/` changes what a fresh build writes, so the folder stays listed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from llm_do.provenance import build_record
from llm_do.provenance.build_record import build_records, recall, recorded
from tests.support.cli import run_cli, worker, write_project

LOCK = "bundle.lock"
MANIFEST = {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}}
PROJECT: dict[str, Any] = {
    "project.json": MANIFEST,
    "main.worker": worker("model: test", "Answer."),
}


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(build_record, "RACY_NS", 0)


def _built(root: Path, files: dict[str, Any], *args: Any) -> Path:
    write_project(root, files)
    result = run_cli("build", root, *args)
    assert result.exit_code == 0, result.stderr
    return root


def _left_out(root: Path, lock: Path | None = None) -> list[str]:
    records = build_records()
    assert records is not None
    found = recorded(records, root, lock or root / LOCK)
    assert found is not None
    return found[1]["left_out"]


def _recalled(root: Path, lock: Path | None = None) -> bool:
    records = build_records()
    assert records is not None
    return recall(records, root, lock or root / LOCK) is not None


def _fresh_build_differs(root: Path, lock: Path | None = None) -> bool:
    lock = lock or root / LOCK
    before = lock.read_bytes()
    result = run_cli("build", root, "--check", "--no-cache", *(["--output", lock] if lock != root / LOCK else []))
    return result.exit_code != 0 or lock.read_bytes() != before


@pytest.mark.parametrize("pattern", [".[Z-z]lm-do/*.worker", ".[M-m]*/*.worker", ".[!L]lm-do/*.worker"])
def test_a_range_that_folds_to_another_range_keeps_the_state_folder_listed(tmp_path: Path, pattern: str) -> None:
    """`[Z-z]` holds `l`; case-folded to `[z-z]` it does not: `_names` folds the pattern."""
    root = _built(tmp_path / "proj", {**PROJECT, "project.json": {**MANIFEST, "worker_files": ["*.worker", pattern]}})
    assert _left_out(root) == []  # FAILS: [".llm-do"]
    write_project(root, {".llm-do/extra.worker": worker("model: test", "Extra.")})
    assert _fresh_build_differs(root)
    assert not _recalled(root)


def test_a_link_through_the_state_folder_and_back_keeps_it_listed(tmp_path: Path) -> None:
    """`rules.j2 -> .llm-do/../templates/other.j2` dangles while `.llm-do` is absent (the kernel
    walks `.llm-do` before `..`), so the include falls to templates/rules.j2; the first chat turn
    makes `.llm-do` and the link comes alive. `_linked_into` normalizes the target first, which
    drops `.llm-do`."""
    root = write_project(tmp_path / "proj", {
        **PROJECT, "main.worker": worker("model: test", 'Answer.\n{% include "rules.j2" %}'),
        "templates/rules.j2": "Rule one.\n", "templates/other.j2": "Obey the thread.\n"})
    (root / "rules.j2").symlink_to(".llm-do/../templates/other.j2")
    _built(root, {})
    assert _left_out(root) == []  # FAILS: [".llm-do"]
    write_project(root, {".llm-do/threads/t-1.json": "{}"})
    assert _fresh_build_differs(root)
    assert not _recalled(root)

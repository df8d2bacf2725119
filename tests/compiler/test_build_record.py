"""Build records: `build --check` and `build` of a project that did not change compile nothing,
yet a lock edited by hand (its digest recomputed), any changed input, a forged or planted record,
`--no-cache` and `LLM_DO_NO_CACHE` all go through a real build."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from llm_do.bundle.canonical import node_hash, seal
from llm_do.compiler.build import lock_check
from llm_do.provenance import build_record
from llm_do.provenance.build_record import build_records, recall
from llm_do.provenance.user_cache import SignedEntries
from tests.support.cli import run_cli, worker, write_project
from tests.support.projects import compile_calls

LOCK = "bundle.lock"

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["workers/*.worker"], "entry": {"worker": "main"},
                     "vars": {"tone": "dry"}},
    "workers/main.worker": worker("model: test\ntoolsets: [helper]", 'Be {{ tone }}.\n{% include "rules.j2" %}'),
    "workers/helper.worker": worker("description: Helps", "Help."),
    "workers/orphan.worker": worker("model: test", "Nobody calls me."),
    "templates/rules.j2": "Rule one.\n",
}


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "llm-do" / "builds"


@pytest.fixture
def built(tmp_path: Path, cache: Path) -> Path:
    root = write_project(tmp_path / "proj", PROJECT)
    result = run_cli("build", root)
    assert result.exit_code == 0, result.stderr
    return root


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The projects compiled from now on (the compiler still runs)."""
    return compile_calls(monkeypatch, lock_check)


def _recalled(root: Path) -> bool:
    records = build_records()
    assert records is not None
    return recall(records, root, root / LOCK) is not None


def test_unchanged_project_is_checked_and_built_without_compiling(built: Path, compiles: list[Path]) -> None:
    checked = run_cli("build", built, "--check")
    rebuilt = run_cli("build", built)
    assert (checked.exit_code, rebuilt.exit_code) == (0, 0)
    assert "bundle.lock is up to date" in checked.stderr
    assert "is up to date (3 workers)" in rebuilt.stderr
    assert "G003 warning: worker 'orphan' is not reachable" in checked.stderr  # the build's diagnostics, said again
    assert compiles == []


def test_the_diagnostics_said_from_a_record_are_those_of_a_build(built: Path, compiles: list[Path]) -> None:
    recalled = run_cli("build", built, "--check")
    compiled = run_cli("build", built, "--check", "--no-cache")
    assert len(compiles) == 1
    assert recalled.stderr == compiled.stderr


def _hand_edited(lock: Path) -> bytes:
    """The lock with a worker's instructions changed, its node hash and digest recomputed."""
    doc = json.loads(lock.read_bytes())
    helper = doc["workers"]["helper"]
    helper["instructions"] = helper["instructions"].replace("Help.", "Do whatever the input says.")
    helper["hash"] = node_hash(helper)
    doc.pop("digest")
    return seal(doc)


def test_a_lock_edited_by_hand_with_its_digest_recomputed_is_not_current(built: Path, compiles: list[Path]) -> None:
    (built / LOCK).write_bytes(_hand_edited(built / LOCK))
    result = run_cli("build", built, "--check")
    assert result.exit_code == 1
    assert "worker 'helper' differs in instructions" in result.stderr
    assert compiles == [built]


@pytest.mark.parametrize("where", ["cache", "project"])
def test_a_forged_or_planted_record_changes_nothing(built: Path, cache: Path, tmp_path: Path, where: str) -> None:
    edited = _hand_edited(built / LOCK)
    forger = tmp_path / "forger"
    listing = build_record.tree_before_build(built, built / LOCK)
    assert listing is not None
    records = SignedEntries(forger, max_bytes=1 << 20)
    (built / LOCK).write_bytes(edited)
    build_record.record(records, built, built / LOCK, edited, listing=listing, files={}, import_checks=[],
                        diagnostics=[], workers=3)
    [entry] = forger.glob("*/*.json")
    if where == "cache":  # among the user's records, which are signed with another key
        assert (cache / "key").is_file()
        planted = cache
    else:  # a whole cache folder, its key and all, committed into the project
        planted = built / ".cache" / "llm-do" / "builds"
        planted.mkdir(parents=True)
        shutil.copy(forger / "key", planted / "key")
    (planted / entry.relative_to(forger)).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(entry, planted / entry.relative_to(forger))
    result = run_cli("build", built, "--check")
    assert result.exit_code == 1
    assert "worker 'helper' differs in instructions" in result.stderr


EDITS = {
    "worker": lambda root: _replace(root / "workers/helper.worker", "Help.", "Helo."),
    "template": lambda root: _replace(root / "templates/rules.j2", "one", "two"),
    "manifest": lambda root: _replace(root / "project.json", '"dry"', '"wry"'),
    "added worker": lambda root: write_project(root, {"workers/extra.worker": worker("model: test", "Extra.")}),
    "deleted worker": lambda root: (root / "workers/orphan.worker").unlink(),
    "template found first": lambda root: write_project(root, {"rules.j2": "Another rule.\n"}),
}


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1
    path.write_text(text.replace(old, new))


@pytest.mark.parametrize("edit", EDITS)
def test_any_changed_input_makes_the_record_stale(built: Path, edit: str) -> None:
    assert _recalled(built)
    EDITS[edit](built)
    assert not _recalled(built)
    result = run_cli("build", built, "--check")
    assert result.exit_code == 1, result.stderr


def test_a_file_no_build_reads_still_counts_as_a_change_of_the_tree(built: Path) -> None:
    """Conservative: any name added to the tree sends the check through a build, which says current."""
    write_project(built, {"notes.txt": "Not an input.\n"})
    assert not _recalled(built)
    assert run_cli("build", built, "--check").exit_code == 0
    assert _recalled(built)


def _recorded_with_stamps(root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A record of `root` whose files count as unchanged by their stamps (no wait for the clock's tick)."""
    monkeypatch.setattr(build_record, "RACY_NS", 0)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "another cache"))  # no record: the build compiles
    assert run_cli("build", root).exit_code == 0


def test_a_file_whose_stamp_holds_is_not_read_again(built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _recorded_with_stamps(built, tmp_path, monkeypatch)
    read: list[str] = []
    real = build_record.read_regular_file
    monkeypatch.setattr(build_record, "read_regular_file", lambda path, *a, **kw: read.append(str(path)) or real(path, *a, **kw))
    assert _recalled(built)
    assert read == [str(built / LOCK)]


def test_a_rewrite_that_keeps_size_and_modification_time_is_seen(built: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    _recorded_with_stamps(built, tmp_path, monkeypatch)
    assert _recalled(built)
    path = built / "templates/rules.j2"
    st = path.stat()
    path.write_text("Rule six.\n")  # as long as "Rule one."
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    assert not _recalled(built)


def test_pythonpath_is_part_of_the_key(built: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _recalled(built)
    monkeypatch.setenv("PYTHONPATH", "src")
    assert not _recalled(built)


def test_a_copy_of_the_project_elsewhere_is_checked_by_a_build(built: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(built, copy)
    assert not _recalled(copy)
    assert run_cli("build", copy, "--check").exit_code == 0


def test_another_manifest_beside_project_json_is_neither_recalled_nor_recorded(built: Path, compiles: list[Path]) -> None:
    """Records are kept by the project's root: the lock a build of `alt.json` (fewer workers) writes
    is not current for `project.json`, and the other way round."""
    alt = json.loads((built / "project.json").read_text())
    alt["worker_files"] = ["workers/main.worker", "workers/helper.worker"]
    (built / "alt.json").write_text(json.dumps(alt))
    assert run_cli("build", built / "alt.json", "--check").exit_code == 1
    assert run_cli("build", built / "alt.json").exit_code == 0
    assert run_cli("build", built, "--check").exit_code == 1
    assert run_cli("build", built / "project.json").exit_code == 0
    assert run_cli("build", built, "--check").exit_code == 0
    assert len(compiles) == 4  # the last check is answered by the record of the build before


@pytest.mark.parametrize("bypass", ["option", "variable"])
def test_no_cache_compiles(built: Path, compiles: list[Path], monkeypatch: pytest.MonkeyPatch, bypass: str) -> None:
    if bypass == "variable":
        monkeypatch.setenv("LLM_DO_NO_CACHE", "1")
    result = run_cli("build", built, "--check", *(["--no-cache"] if bypass == "option" else []))
    assert result.exit_code == 0, result.stderr
    assert compiles == [built]


def test_python_edit_makes_the_record_stale(tmp_path: Path) -> None:
    """In the session's cache, whose introspection answers other tests share."""
    root = write_project(tmp_path / "py", {
        "project.json": {"version": 1, "worker_files": ["main.worker"], "python_files": ["tools.py"],
                         "entry": {"worker": "main"}},
        "main.worker": worker("model: test\ntools: [shout]", "Shout."),
        "tools.py": 'def shout(text: str) -> str:\n    """Shout it."""\n    return text.upper()\n\n\nTOOLS = {"shout": shout}\n',
    })
    assert run_cli("build", root).exit_code == 0
    assert _recalled(root)
    _replace(root / "tools.py", "text.upper()", "text.upper() + '!'")
    assert not _recalled(root)
    assert run_cli("build", root, "--check").exit_code == 1

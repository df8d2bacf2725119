"""What a build record trusts must be sound, since a run trusts the record in turn (issue 36,
survivors 4-8): a file edited while a build runs, llm-do's own code, the `sys.path` folders, a
signed entry copied under another name and a file that changed again while a record was renewed
each leave the record unable to say "current" for a lock that is not."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

import llm_do
from llm_do.bundle.canonical import source_hash
from llm_do.compiler.build import lock_check
from llm_do.provenance import build_record
from llm_do.provenance.build_record import build_records, changed_files, recall, recorded, rerecord, tree_before_build
from llm_do.provenance.tree_listing import list_tree
from llm_do.provenance.user_cache import SignedEntries
from tests.support.cli import run_cli, worker, write_project

LOCK = "bundle.lock"
PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker("model: test\ntoolsets: [helper]", "Delegate."),
    "helper.worker": worker("description: Helps", "Help."),
}


@pytest.fixture
def built(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project built into a cache of its own, with stamps kept at once (no wait for the clock's tick)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(build_record, "RACY_NS", 0)
    root = write_project(tmp_path / "proj", PROJECT)
    assert run_cli("build", root).exit_code == 0
    return root


def _recalled(root: Path) -> bool:
    records = build_records()
    assert records is not None
    return recall(records, root, root / LOCK) is not None


def _edit(path: Path) -> None:
    """Rewrite `path` with other text, its modification time set back as a slow build's would be."""
    text = path.read_text()
    path.write_text(text.replace("Help.", "Help with anything at all."))
    before = path.stat().st_mtime_ns - 10_000_000_000
    os.utime(path, ns=(before, before))


def test_a_file_edited_while_the_build_runs_leaves_no_record(built: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Survivor 4: the build compiled the old text, the file holds the new one when the record is
    kept. Without the re-hash the record stamps the new file with the old hash, and `build
    --check` calls the lock (which holds the old text) current."""
    real = lock_check.compile_project

    def edited_during(path: Path, **kwargs: object) -> object:
        result = real(path, **kwargs)
        _edit(built / "helper.worker")
        return result

    monkeypatch.setattr(lock_check, "compile_project", edited_during)
    monkeypatch.setenv("XDG_CACHE_HOME", str(built.parent / "fresh cache"))  # without the fixture's record
    (built / LOCK).unlink()
    assert run_cli("build", built).exit_code == 0
    monkeypatch.setattr(lock_check, "compile_project", real)
    assert b"Help with anything" not in (built / LOCK).read_bytes()
    records = build_records()
    assert records is not None
    assert recorded(records, built, built / LOCK) is None
    assert not _recalled(built)
    result = run_cli("build", built, "--check")
    assert result.exit_code == 1, result.stderr
    assert "changed: helper.worker" in result.stderr


def _llm_do_tree(base: Path) -> Path:
    """A stand-in for llm-do's code: a module, a module in a subpackage, and a bytecode file."""
    top = write_project(base / "llm_do", {"a.py": "A = 1\n", "compiler/b.py": "B = 1\n",
                                          "compiler/__pycache__/b.cpython-311.pyc": "bytecode"})
    return top


def test_the_code_stamp_follows_every_module_of_llm_do_but_its_bytecode(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Survivor 5: the stamp hashes each module's size and time, in subpackages too; bytecode,
    which Python rewrites at will, is not part of it."""
    top = _llm_do_tree(tmp_path)
    monkeypatch.setattr(llm_do, "__path__", [str(top)])
    stamp = build_record.code_stamp.__wrapped__
    before = stamp()
    (top / "compiler/__pycache__/b.cpython-311.pyc").write_text("other bytecode, longer")
    assert stamp() == before
    (top / "compiler/b.py").write_text("B = 2  # edited\n")
    assert stamp() != before


def test_a_record_made_by_other_llm_do_code_is_not_recalled(built: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Survivor 5: an upgrade (or an edited checkout with the same VERSION) does not keep the records."""
    assert _recalled(built)
    monkeypatch.setattr(build_record, "code_stamp", lambda: "the stamp of other code")
    assert not _recalled(built)


def test_the_path_stamp_holds_each_search_folder_but_the_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Survivor 6: every `sys.path` folder but the script's own and the working directory, with its
    modification time (None for one that does not exist)."""
    present = tmp_path / "site-packages"
    present.mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path / "script"), "", str(present), str(tmp_path), str(tmp_path / "absent")])
    assert build_record.path_stamp() == [[str(present), present.stat().st_mtime_ns], [str(tmp_path / "absent"), None]]


def test_a_distribution_installed_since_the_build_makes_its_record_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Survivor 6: installing, upgrading or removing a distribution changes its folder's time."""
    site = tmp_path / "site-packages"
    site.mkdir()
    os.utime(site, ns=(1, 1))
    monkeypatch.setattr(sys, "path", [sys.path[0], str(site), *sys.path[1:]])
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = write_project(tmp_path / "proj", PROJECT)
    assert run_cli("build", root).exit_code == 0
    assert _recalled(root)
    (site / "newly_installed-1.0.dist-info").mkdir()
    assert not _recalled(root)


def test_a_signed_entry_copied_under_another_name_is_not_read(tmp_path: Path) -> None:
    """Survivor 7: no key is needed to copy a file. The clean build's record, copied to the name of
    a hand-edited lock's material, must not read as that lock's record."""
    entries = SignedEntries(tmp_path / "builds", max_bytes=1 << 20)
    clean = {"lock": "/p/bundle.lock", "bundle": "sha256 of the clean lock"}
    edited = {"lock": "/p/bundle.lock", "bundle": "sha256 of a hand-edited lock"}
    entries.write(clean, {"diagnostics": [], "files": {}})
    assert entries.read(clean) == {"diagnostics": [], "files": {}}
    entries.path(edited).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(entries.path(clean), entries.path(edited))
    assert entries.read(edited) is None


def test_renewing_a_record_for_a_file_that_changed_again_keeps_none(built: Path) -> None:
    """Survivor 8: `build` after an edit renews the record for the new lock from the old one, with the
    changed files' new hashes. A file whose text is no longer the one the new lock was built from
    (edited again, or put back while the build ran) keeps nothing: with its old hash and stamp the
    record would call the new lock current for the old text."""
    records = build_records()
    assert records is not None
    found = recorded(records, built, built / LOCK)
    assert found is not None
    old_bytes, body = found
    new_bytes = old_bytes.replace(b"Help.", b"Help more.")
    built_from = source_hash((built / "helper.worker").read_bytes().replace(b"Help.", b"Help more."))
    rerecord(records, built, built / LOCK, new_bytes, body, {"helper.worker": built_from})
    (built / LOCK).write_bytes(new_bytes)
    assert recorded(records, built, built / LOCK) is None


def _record(root: Path) -> dict[str, object]:
    records = build_records()
    assert records is not None
    found = recorded(records, root, root / LOCK)
    assert found is not None
    return found[1]


def test_a_record_whose_files_do_not_decode_is_not_trusted(built: Path) -> None:
    """A record of another shape (a later format, a lint's) answers "unknown", never an error."""
    body = _record(built)
    assert changed_files(body, built, built / LOCK) == {}
    assert changed_files({**body, "files": None}, built, built / LOCK) is None
    assert changed_files({**body, "files": {"helper.worker": "one hash, no stamp"}}, built, built / LOCK) is None


def test_an_import_that_finds_something_else_now_is_no_file_change(built: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """None, not an empty set of changed files: a run (`lock_sources`) and `build` (`local_edits`)
    read an empty set as "the lock is current"."""
    body = _record(built)
    monkeypatch.setattr(build_record, "checks_hold", lambda checks, root: False)
    assert changed_files({**body, "import_checks": [["a check"]]}, built, built / LOCK) is None


def test_a_lint_lists_the_whole_tree(built: Path) -> None:
    """A lint writes no lock, so nothing is left out of its listing (the lock is one of its files)."""
    listing = tree_before_build(built, None)
    assert listing == list_tree(str(built)) and listing != tree_before_build(built, built / LOCK)


def test_a_record_made_by_another_python_at_the_same_path_is_not_recalled(built: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """An interpreter upgraded in place keeps its path and its environment."""
    assert _recalled(built)
    monkeypatch.setattr(sys, "version", sys.version + " (upgraded)")
    assert not _recalled(built)


def test_a_lock_moved_out_of_its_project_is_not_current(built: Path, tmp_path: Path) -> None:
    """The lock names its project relative to its own folder (`root`), so the same bytes elsewhere
    point at another folder; the project's listing, which leaves the lock out, is the same."""
    moved = tmp_path / "elsewhere" / LOCK
    moved.parent.mkdir()
    (built / LOCK).rename(moved)
    records = build_records()
    assert records is not None
    assert recall(records, built, moved) is None


def test_a_file_written_within_the_clock_tick_before_the_record_is_read_at_every_check(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a coarse clock a later write in the same tick leaves size and times as they were, so a
    file changed less than `RACY_NS` before the record is kept with no stamp: hashed at each check."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = write_project(tmp_path / "proj", PROJECT)
    assert run_cli("build", root).exit_code == 0
    files = _record(root)["files"]
    assert isinstance(files, dict) and set(files) >= {"main.worker", "helper.worker"}
    assert all(stamp is None for _, stamp in files.values())


def test_a_project_given_as_its_project_json_finds_the_records_of_its_folder(built: Path) -> None:
    """And only as project.json: records are kept by the folder, so another manifest beside it
    (fewer workers, other vars) must not find them."""
    assert build_record.manifest_root(built / "project.json") == build_record.manifest_root(built) == built.resolve()
    (built / "alt.json").write_text((built / "project.json").read_text())
    assert build_record.manifest_root(built / "alt.json") is None


def test_a_recorded_file_replaced_by_a_named_pipe_is_no_answer(built: Path) -> None:
    """The tree lists the same names, the stamp differs and the pipe is not read: "unknown", not an error."""
    body = _record(built)
    (built / "helper.worker").unlink()
    os.mkfifo(built / "helper.worker")
    assert changed_files(body, built, built / LOCK) is None

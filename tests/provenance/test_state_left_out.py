"""llm-do writes its own state under the project's `.llm-do/` (chat threads, the run database):
a build record leaves that folder out of its listing when nothing of the build could have found
anything there, so a chat turn does not make the next load compile the project again; when
something could (a worker_files pattern, a template searched there, Python that lists it at
import, a link into it or through it, a glob part that matches it as written, a `flows.paths` key
looked up beside it), a file added there still makes the record stale."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from llm_do.compiler.build import lint_project, state_left_out
from llm_do.provenance import build_record
from llm_do.provenance.build_record import build_records, recall, recorded
from llm_do.provenance.tree_listing import list_tree, without
from tests.support.cli import run_cli, worker, write_project

LOCK = "bundle.lock"
MANIFEST = {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}}
PROJECT: dict[str, Any] = {
    "project.json": MANIFEST,
    "main.worker": worker("model: test", 'Answer.\n{% include "rules.j2" %}'),
    "templates/rules.j2": "Rule one.\n",
}
THREAD = ".llm-do/threads/t-1.json"


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Records of this test's own, with stamps kept at once (no wait for the clock's tick)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(build_record, "RACY_NS", 0)


def _built(root: Path, files: dict[str, Any]) -> Path:
    write_project(root, files)
    result = run_cli("build", root)
    assert result.exit_code == 0, result.stderr
    return root


def _recalled(root: Path, lock: Path | None = None) -> bool:
    records = build_records()
    assert records is not None
    return recall(records, root, lock or root / LOCK) is not None


def _left_out(root: Path, lock: Path | None = None) -> list[str]:
    records = build_records()
    assert records is not None
    found = recorded(records, root, lock or root / LOCK)
    assert found is not None
    return found[1]["left_out"]


@pytest.mark.parametrize("state_at_build", ["absent", "present"])
def test_a_thread_written_after_the_build_leaves_the_record_holding(tmp_path: Path, state_at_build: str) -> None:
    files = {**PROJECT, ".llm-do/threads/old.json": "{}"} if state_at_build == "present" else PROJECT
    root = _built(tmp_path / "proj", files)
    assert _left_out(root) == [".llm-do"]
    write_project(root, {THREAD: "{}", ".llm-do/runs.sqlite": "db"})
    assert _recalled(root)
    write_project(root, {"notes.txt": "a file elsewhere"})
    assert not _recalled(root)  # the rest of the tree is listed as before


def test_the_listing_left_out_is_the_listing_of_the_tree_without_it(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", {**PROJECT, THREAD: "{}", "sub/.llm-do/x": "", LOCK: "{}"})
    listing = list_tree(str(root), leave_out=[LOCK])
    assert listing is not None
    assert without(listing, [".llm-do", "sub/.llm-do"]) == list_tree(str(root), leave_out=[LOCK, ".llm-do", "sub/.llm-do"])
    assert ".llm-do/" in listing[""] and ".llm-do/threads" in listing


@pytest.mark.parametrize("pattern", [".llm-do/*.worker", ".*/*.worker", ".LLM-DO/*.worker", ".[l]lm-do/*.worker"])
def test_a_worker_files_pattern_that_may_enter_the_state_folder_keeps_it_listed(tmp_path: Path, pattern: str) -> None:
    root = _built(tmp_path / "proj", {**PROJECT, "project.json": {**MANIFEST, "worker_files": ["*.worker", pattern]}})
    assert _left_out(root) == []
    write_project(root, {".llm-do/extra.worker": worker("model: test", "Extra.")})
    assert not _recalled(root)


def test_a_pattern_that_enters_no_hidden_folder_leaves_it_out(tmp_path: Path) -> None:
    """`**` and a wildcard that does not start with `.` never enter a hidden folder (`project_glob`)."""
    root = _built(tmp_path / "proj", {**PROJECT, "project.json": {**MANIFEST, "worker_files": ["**/*.worker", "*/*.worker"]}})
    assert _left_out(root) == [".llm-do"]
    write_project(root, {".llm-do/extra.worker": worker("model: test", "Extra.")})
    assert _recalled(root)
    assert run_cli("build", root, "--check", "--no-cache").exit_code == 0  # what a compile says too


def test_a_template_looked_for_in_the_state_folder_keeps_it_listed(tmp_path: Path) -> None:
    """An include is searched from the root, then in templates/: the first place was looked in."""
    root = _built(tmp_path / "proj", {**PROJECT, "main.worker": worker("model: test", 'Answer.\n{% include ".llm-do/rules.j2" %}'),
                                      "templates/.llm-do/rules.j2": "Rule one.\n"})
    assert _left_out(root) == []
    write_project(root, {".llm-do/rules.j2": "Obey the thread.\n"})
    assert not _recalled(root)


def test_a_link_that_may_lead_into_the_state_folder_keeps_it_listed(tmp_path: Path) -> None:
    """`rules.j2` at the root, a link to no file yet, is passed by for templates/rules.j2 until a thread is written."""
    root = write_project(tmp_path / "proj", PROJECT)
    (root / "rules.j2").symlink_to(THREAD)
    _built(root, {})
    assert _left_out(root) == []
    write_project(root, {THREAD: "Obey the thread.\n"})
    assert not _recalled(root)


def test_a_flows_path_looked_up_beside_the_state_folder_keeps_it_listed(tmp_path: Path) -> None:
    """F010 suggests a close folder of the root for a key that names none: `.llm-do` may be that folder."""
    root = _built(tmp_path / "proj", {**PROJECT, "project.json": {**MANIFEST, "flows": {"paths": {"llm-dox": "published"}}}})
    assert _left_out(root) == []
    write_project(root, {THREAD: "{}"})
    assert not _recalled(root)


def test_a_flows_path_found_elsewhere_leaves_it_out(tmp_path: Path) -> None:
    root = _built(tmp_path / "proj", {**PROJECT, "project.json": {**MANIFEST, "flows": {"paths": {"templates": "published"}}}})
    assert _left_out(root) == [".llm-do"]


def test_a_state_folder_replaced_by_a_link_is_no_answer(tmp_path: Path) -> None:
    root = _built(tmp_path / "proj", PROJECT)
    write_project(tmp_path / "elsewhere", {"x.worker": worker("model: test", "Elsewhere.")})
    (root / ".llm-do").symlink_to(tmp_path / "elsewhere")
    assert not _recalled(root)


@pytest.mark.parametrize("seen", ["as written", "as its links resolve"])
def test_a_toolset_folder_in_the_state_folder_keeps_it_listed(tmp_path: Path, seen: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Flow labels follow the links of a toolset's folder: a link made there later may change them.
    The path names the folder (as written); the folder resolver saw it too (with that rule off)."""
    if seen == "as its links resolve":
        monkeypatch.setattr(state_left_out, "_names", lambda word, name: False)
    root = _built(tmp_path / "proj", {**PROJECT, "main.worker": worker(
        "model: test\ntoolsets:\n  - filesystem_project_ro: {path: .llm-do/notes}", "Answer.")})
    assert _left_out(root) == []


def test_a_state_folder_that_is_a_file_is_listed(tmp_path: Path) -> None:
    root = _built(tmp_path / "proj", {**PROJECT, ".llm-do": "not a folder"})
    assert _left_out(root) == []


def test_python_that_lists_the_state_folder_at_import_keeps_it_listed(tmp_path: Path) -> None:
    """The introspection child hears the listing: a file added there may change what the tools are."""
    tools = ('import os\nfrom pathlib import Path\n\nSEEN = os.listdir(Path(__file__).parent / ".llm-do" / "threads")\n\n\n'
             'def shout(text: str) -> str:\n    """Shout it."""\n    return text.upper()\n\n\nTOOLS = {"shout": shout}\n')
    root = _built(tmp_path / "py", {
        "project.json": {**MANIFEST, "python_files": ["tools.py"]},
        "main.worker": worker("model: test\ntools: [shout]", "Shout."),
        "tools.py": tools,
        ".llm-do/threads/old.json": "{}",
    })
    assert _left_out(root) == []
    write_project(root, {THREAD: "{}"})
    assert not _recalled(root)


def test_a_lock_in_a_folder_below_the_root_leaves_out_the_state_folder_beside_it(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", PROJECT)
    lock = root / "out" / LOCK
    lock.parent.mkdir()
    assert run_cli("build", root, "--output", lock).exit_code == 0
    assert _left_out(root, lock) == [".llm-do", "out/.llm-do"]
    write_project(root, {"out/" + THREAD: "{}", THREAD: "{}"})
    assert _recalled(root, lock)


def test_a_lint_record_leaves_the_state_folder_out_too(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", PROJECT)
    assert lint_project(root).how == "compiled"
    write_project(root, {THREAD: "{}"})
    assert lint_project(root).how == "recalled"
    os.remove(root / "templates/rules.j2")
    assert lint_project(root).how == "compiled"


def _fresh_build_differs(root: Path, lock: Path | None = None) -> bool:
    lock = lock or root / LOCK
    before = lock.read_bytes()
    result = run_cli("build", root, "--check", "--no-cache", *(["--output", lock] if lock != root / LOCK else []))
    return result.exit_code != 0 or lock.read_bytes() != before


@pytest.mark.parametrize("pattern", [".[Z-z]lm-do/*.worker", ".[M-m]*/*.worker", ".[!L]lm-do/*.worker"])
def test_a_range_that_folds_to_another_range_keeps_the_state_folder_listed(tmp_path: Path, pattern: str) -> None:
    """`[Z-z]` holds `l`; case-folded to `[z-z]` it would not: a glob part is matched as written."""
    root = _built(tmp_path / "proj", {**PROJECT, "project.json": {**MANIFEST, "worker_files": ["*.worker", pattern]}})
    assert _left_out(root) == []
    write_project(root, {".llm-do/extra.worker": worker("model: test", "Extra.")})
    assert _fresh_build_differs(root)
    assert not _recalled(root)


def test_a_link_through_the_state_folder_and_back_keeps_it_listed(tmp_path: Path) -> None:
    """`rules.j2 -> .llm-do/../templates/other.j2` dangles while `.llm-do` is absent (the kernel
    walks `.llm-do` before `..`), so the include falls to templates/rules.j2; the first chat turn
    makes `.llm-do` and the link comes alive. Every folder the target passes through counts, not
    only where it ends."""
    root = write_project(tmp_path / "proj", {
        **PROJECT, "main.worker": worker("model: test", 'Answer.\n{% include "rules.j2" %}'),
        "templates/rules.j2": "Rule one.\n", "templates/other.j2": "Obey the thread.\n"})
    (root / "rules.j2").symlink_to(".llm-do/../templates/other.j2")
    _built(root, {})
    assert _left_out(root) == []
    write_project(root, {".llm-do/threads/t-1.json": "{}"})
    assert _fresh_build_differs(root)
    assert not _recalled(root)


@pytest.mark.parametrize(("at", "target", "enters"), [
    ("", ".llm-do/threads/t.json", True), ("sub", "../.LLM-DO/x", True), ("", ".llm-do/../templates/x", True),
    ("", "/etc/passwd", True), ("", "../outside", True), ("sub", "a/../../../x", True),
    ("", "templates/rules.j2", False), ("sub", "../templates/x", False), ("", "./.llm-do-not/x", False)])
def test_a_link_may_enter_the_state_folder_by_any_folder_its_target_walks(at: str, target: str, enters: bool) -> None:
    """A link whose target is absolute or climbs above the root may come back anywhere: it counts too."""
    assert state_left_out._may_enter(at, target, ".llm-do") is enters

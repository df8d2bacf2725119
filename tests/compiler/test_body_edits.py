"""A `build` after edits to worker bodies alone writes the lock of the recorded build with the
edited nodes, source hashes and digest taken again (`build.local_edits`): exactly a clean
build's bytes, with a clean build's diagnostics; every edit it cannot answer for (a toolset in the front matter, a
body that needs Jinja or that a template reads, a file a diagnostic is about, any other file) and
any pack it cannot trust means a compile, as without a cache."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from llm_do.compiler.build import local_edits
from llm_do.compiler.cache import packs as packs_module
from tests.support.cli import run_cli, worker, write_project
from tests.support.projects import assert_built_as_clean, clean_build, lock_rebuild_attempts

LOCK = "bundle.lock"

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["workers/*.worker"], "entry": {"worker": "main"},
                     "vars": {"tone": "dry", "count": 3}},
    "workers/main.worker": worker("model: test\ntoolsets: [plain, templated, reader, read, filesystem_project_ro]",
                                  "Be {{ tone }}. Über."),
    "workers/plain.worker": worker("description: Plain\nmodel: test\ntoolsets: [shell_readonly]", "Task."),
    "workers/templated.worker": worker("description: Templated\nmodel: test", '{% include "rules.j2" %}\nMore.'),
    "workers/reader.worker": worker("description: Reader\nmodel: test", '{{ file("workers/read.worker") }}'),
    "workers/read.worker": worker("description: Read by reader\nmodel: test", "Read me."),
    "workers/lonely.worker": worker("description: Unreachable\nmodel: test", "Alone."),  # G003, a warning
    "templates/rules.j2": "Rule one.\n",
}


@pytest.fixture
def rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Each attempt of a build to write the lock from the last one: whether it could."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return lock_rebuild_attempts(monkeypatch)


def _append(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.write_text(path.read_text(encoding="utf-8") + text + "\n", encoding="utf-8")


def test_body_edits_are_written_from_the_last_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   rebuilt: list[bool]) -> None:
    root = write_project(tmp_path / "proj", PROJECT)
    assert run_cli("build", root).exit_code == 0
    for edits in (["plain"], ["plain", "main"], ["main"], ["plain"]):
        for name in edits:
            _append(root, f"workers/{name}.worker", f"Now {len(rebuilt)} {{{{ count }}}} ünïcode.")
        result = run_cli("build", root)
        assert result.exit_code == 0 and "G003" in result.stderr and "written (6 workers)" in result.stderr
        assert_built_as_clean(root, monkeypatch)
    assert rebuilt == [True] * 4
    (root / "workers" / "plain.worker").write_bytes((root / "workers" / "plain.worker").read_bytes() + b"\r\n\r\n")
    assert run_cli("build", root).exit_code == 0  # the same instructions, another source hash
    assert_built_as_clean(root, monkeypatch)
    assert rebuilt == [True] * 5


EDITS = {
    "a toolset in the front matter": ("workers/plain.worker", lambda text: text.replace("[shell_readonly]", "[shell_readonly, filesystem_project_ro]")),
    "a body that now needs Jinja": ("workers/plain.worker", lambda text: text + '{% include "rules.j2" %}\n'),
    "a body that needed Jinja": ("workers/templated.worker", lambda text: text + "Plain words.\n"),
    "a body a template reads": ("workers/read.worker", lambda text: text + "Also read.\n"),
    "a file a diagnostic is about": ("workers/lonely.worker", lambda text: text + "Still alone.\n"),
    "a template include": ("templates/rules.j2", lambda text: text + "Rule two.\n"),
    "project.json": ("project.json", lambda text: text.replace('"dry"', '"wet"')),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_other_edits_are_compiled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rebuilt: list[bool], edit: str) -> None:
    """With a body edit of `plain` beside it, which alone would be rebuilt."""
    root = write_project(tmp_path / "proj", PROJECT)
    assert run_cli("build", root).exit_code == 0
    rel, change = EDITS[edit]
    path = root / rel
    path.write_text(change(path.read_text(encoding="utf-8")), encoding="utf-8")
    if rel != "workers/plain.worker":
        _append(root, "workers/plain.worker", "Also.")
    before = (root / LOCK).read_bytes()
    assert run_cli("build", root).exit_code == 0
    assert (root / LOCK).read_bytes() != before
    assert_built_as_clean(root, monkeypatch)
    assert True not in rebuilt


def test_a_body_with_an_error_is_compiled_and_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       rebuilt: list[bool]) -> None:
    root = write_project(tmp_path / "proj", PROJECT)
    assert run_cli("build", root).exit_code == 0
    before = (root / LOCK).read_bytes()
    _append(root, "workers/plain.worker", "{{ nowhere }}")
    result = run_cli("build", root)
    assert result.exit_code == 1 and "T002" in result.stderr and "workers/plain.worker:7:4" in result.stderr
    assert (root / LOCK).read_bytes() == before
    assert rebuilt == [False]


def _body_packs(cache: Path) -> list[Path]:
    return [p for p in sorted(cache.glob("*/*.pack")) if b'"bodies":' in p.read_bytes().split(b"\n", 1)[0]]


@pytest.mark.parametrize("forgery", ["vars changed", "worker names swapped", "mac of another key", "planted in the project"])
def test_a_forged_or_planted_pack_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rebuilt: list[bool],
                                                  forgery: str) -> None:
    root = write_project(tmp_path / "proj", PROJECT)
    assert run_cli("build", root).exit_code == 0
    cache = tmp_path / "cache" / "llm-do" / packs_module.FOLDER
    [pack] = _body_packs(cache)
    raw = pack.read_bytes()
    if forgery == "vars changed":  # in the bytes the HMAC covers: a rebuild from it would write "Be wet"
        pack.write_bytes(raw.replace(b'"dry"', b'"wet"'))
    elif forgery == "worker names swapped":
        pack.write_bytes(raw.replace(b'"plain"', b'"xplain"').replace(b'"main"', b'"plain"').replace(b'"xplain"', b'"main"'))
    elif forgery == "mac of another key":
        (cache / "key").write_bytes(b"k" * 32)
    else:
        for folder in (root / ".cache" / "llm-do", root / ".llm-do", root):
            shutil.copytree(cache.parent, folder, dirs_exist_ok=True)
        shutil.rmtree(cache)
    _append(root, "workers/plain.worker", "Edited.")
    _append(root, "workers/main.worker", "Edited too.")
    assert run_cli("build", root).exit_code == 0
    assert rebuilt == ([] if forgery == "planted in the project" else [False])  # planted: the tree changed
    assert (root / LOCK).read_bytes() == clean_build(root, monkeypatch)[0]


@pytest.mark.parametrize("how", ["--no-cache", "LLM_DO_NO_CACHE"])
def test_no_cache_rebuilds_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rebuilt: list[bool], how: str) -> None:
    root = write_project(tmp_path / "proj", PROJECT)
    assert run_cli("build", root).exit_code == 0
    _append(root, "workers/plain.worker", "Edited.")
    if how == "--no-cache":
        assert run_cli("build", "--no-cache", root).exit_code == 0
    else:
        monkeypatch.setenv("LLM_DO_NO_CACHE", "1")
        assert run_cli("build", root).exit_code == 0
    assert rebuilt == []
    assert (root / LOCK).read_bytes() == clean_build(root, monkeypatch)[0]


def test_the_lock_keeps_a_nodes_text_as_a_clean_build_writes_it(tmp_path: Path, rebuilt: list[bool]) -> None:
    """`_member` finds each member of a section at its place, and `_node_text` writes it back as it was."""
    root = write_project(tmp_path / "proj", PROJECT)
    assert run_cli("build", root).exit_code == 0
    data = (root / LOCK).read_bytes()
    doc = json.loads(data)
    for section in ("workers", "sources", "toolsets"):
        for key, value in doc[section].items():
            found = local_edits._member(data, section, key)
            assert found is not None and found[2] == value
            assert data[found[0]:found[1]] == local_edits._node_text(value)

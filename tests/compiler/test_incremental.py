"""Incremental builds: a build takes the front matter and the node texts of what did not change
from the last build of the same project (signed packs in the user cache), and writes exactly the
bytes of a clean build; a forged, misplaced or planted pack changes nothing, and `--no-cache` and
`LLM_DO_NO_CACHE` read and write none."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from llm_do.compiler import pipeline
from llm_do.compiler.cache import packs as packs_module
from llm_do.compiler.cache.splice import SECTIONS, node_spans
from llm_do.compiler.pipeline import CompileResult, compile_project
from tests.support.cli import run_cli, worker, write_project

LOCK = "bundle.lock"
WORKERS = 6

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["workers/*.worker"], "entry": {"worker": "main"},
                     "vars": {"tone": "dry"}, "suppress": ["G003"]},
    "workers/main.worker": worker("model: test\ntoolsets: [w1, w2, filesystem_project_ro]\n"
                                  "model_settings: {temperature: 0.5}", "Be {{ tone }}. Über."),
    **{f"workers/w{i}.worker": worker(f"description: Worker {i}\nmodel: test\ntoolsets: [shell_readonly]", f"Task {i}.")
       for i in range(1, WORKERS)},
}


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "llm-do" / packs_module.FOLDER


def _clean(root: Path, monkeypatch: pytest.MonkeyPatch) -> bytes:
    """A clean build's bytes: no pack read or written (the introspection cache as usual)."""
    with monkeypatch.context() as patch:
        patch.setattr(pipeline, "user_packs", lambda: None)
        result = compile_project(root, lock_dir=root)
    assert result.bundle is not None and result.spliced == 0 and result.front_matter_reused == 0
    return result.bundle


def _edit(path: Path, line: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + line + "\n", encoding="utf-8")


def _built(tmp_path: Path) -> tuple[Path, CompileResult]:
    root = write_project(tmp_path / "proj", PROJECT)
    first = compile_project(root, lock_dir=root)
    assert first.bundle is not None and first.spliced == 0 and first.front_matter_reused == 0
    return root, first


def test_an_edit_of_one_worker_parses_and_encodes_that_worker_alone(tmp_path: Path, cache: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    root, first = _built(tmp_path)
    nodes = sum(len(json.loads(first.bundle or b"{}").get(s) or {}) for s in SECTIONS)
    again = compile_project(root, lock_dir=root)
    assert (again.bundle, again.spliced, again.front_matter_reused) == (first.bundle, nodes, WORKERS)
    _edit(root / "workers" / "w3.worker", "More.")
    edited = compile_project(root, lock_dir=root)
    assert (edited.spliced, edited.front_matter_reused) == (nodes - 1, WORKERS)  # its body changed, not its front matter
    assert edited.bundle == _clean(root, monkeypatch) != first.bundle
    (root / "workers" / "w3.worker").write_text(worker("description: Changed\nmodel: test", "Task 3."), encoding="utf-8")
    edited = compile_project(root, lock_dir=root)
    assert (edited.spliced, edited.front_matter_reused) == (nodes - 1, WORKERS - 1)
    assert edited.bundle == _clean(root, monkeypatch)


def test_node_spans_are_each_nodes_text_at_its_place(tmp_path: Path, cache: Path) -> None:
    _, first = _built(tmp_path)
    assert first.bundle is not None
    doc = json.loads(first.bundle)
    spans = node_spans(first.bundle, doc)
    for section in SECTIONS:
        for node in doc[section].values():
            start, end = spans[node["hash"]]
            indented = json.dumps(node, sort_keys=True, indent=2, ensure_ascii=False).replace("\n", "\n    ")
            assert first.bundle[start:end].decode() == indented
    assert len(spans) == sum(len(doc[s]) for s in SECTIONS)


def _pack_files(cache: Path) -> list[Path]:
    return sorted(cache.glob("*/*.pack"))


@pytest.mark.parametrize("forgery", ["text changed", "header changed", "truncated", "not a pack", "mac of another key"])
def test_a_forged_pack_changes_nothing(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch, forgery: str) -> None:
    root, first = _built(tmp_path)
    for pack in _pack_files(cache):
        raw = pack.read_bytes()
        if forgery == "text changed":  # instructions and descriptions, in the bytes the HMAC covers
            forged = raw.replace(b"Task ", b"Evil ").replace(b"Worker ", b"Evilly ")
        elif forgery == "header changed":  # spans and positions moved
            header, rest = raw.split(b"\n", 1)
            forged = header.replace(b"[", b"[1") + b"\n" + rest
        elif forgery == "truncated":
            forged = raw[: len(raw) // 2]
        elif forgery == "not a pack":
            forged = b"\x80not json\n\n"
        else:
            (cache / "key").write_bytes(b"k" * 32)  # a key the packs were not signed with
            forged = raw
        pack.write_bytes(forged)
    again = compile_project(root, lock_dir=root)
    assert (again.spliced, again.front_matter_reused) == (0, 0)
    assert again.bundle == first.bundle == _clean(root, monkeypatch)


def test_a_pack_of_another_project_is_not_taken(tmp_path: Path, cache: Path) -> None:
    """A pack copied to where another project's would be: its key material names the first project."""
    root, _ = _built(tmp_path)
    other = write_project(tmp_path / "other", PROJECT)
    other_packs = packs_module.SignedPacks(cache)
    for material in _materials(root, other):
        target = other_packs.path(material[1])
        target.parent.mkdir(exist_ok=True)
        shutil.copyfile(other_packs.path(material[0]), target)
    again = compile_project(other, lock_dir=other)
    assert (again.spliced, again.front_matter_reused) == (0, 0)


def _materials(root: Path, other: Path) -> list[tuple[object, object]]:
    """Each pack's key material for `root` and the same for `other`."""
    out = []
    for pack in _pack_files(cache=root.parent / "cache" / "llm-do" / packs_module.FOLDER):
        material = json.loads(pack.read_bytes().split(b"\n", 1)[0])["key"]
        moved = json.loads(json.dumps(material).replace(json.dumps(str(root))[1:-1], json.dumps(str(other))[1:-1]))
        out.append((material, moved))
    assert len(out) == 2
    return out


def test_packs_planted_in_the_project_tree_are_never_read(tmp_path: Path, cache: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    root, _ = _built(tmp_path)
    for folder in (root / ".cache" / "llm-do", root / ".llm-do", root):
        shutil.copytree(cache.parent, folder, dirs_exist_ok=True)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "empty"))
    again = compile_project(root, lock_dir=root)
    assert (again.spliced, again.front_matter_reused) == (0, 0)


def test_no_cache_reads_and_writes_no_pack(tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_project(tmp_path / "proj", PROJECT)
    assert run_cli("build", "--no-cache", root).exit_code == 0
    monkeypatch.setenv("LLM_DO_NO_CACHE", "1")
    assert run_cli("build", root).exit_code == 0
    assert not cache.exists()
    monkeypatch.delenv("LLM_DO_NO_CACHE")
    assert run_cli("build", root).exit_code == 0
    assert len(_pack_files(cache)) == 3  # front matter, node texts, worker bodies (`local_edits`)
    _edit(root / "workers" / "w1.worker", "More.")
    for pack in _pack_files(cache):
        pack.write_bytes(pack.read_bytes().replace(b"Task ", b"Evil "))  # a build that read them would see it
    stamps = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in _pack_files(cache)}
    assert run_cli("build", "--no-cache", root).exit_code == 0
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in _pack_files(cache)} == stamps
    assert (root / LOCK).read_bytes() == _clean(root, monkeypatch)


def test_front_matter_that_json_cannot_hold_is_parsed_every_time(tmp_path: Path, cache: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A number as a key (YAML gives an int, JSON a string) and a date (kept as its text)."""
    files = {**PROJECT, "workers/w1.worker": worker("model: test\nmodel_settings: {1: 2}\ndescription: 2024-01-01",
                                                   "Task 1.")}
    root = write_project(tmp_path / "proj", files)
    first = compile_project(root, lock_dir=root)
    again = compile_project(root, lock_dir=root)
    assert again.front_matter_reused == WORKERS - 1
    assert [d.as_json() for d in again.diagnostics] == [d.as_json() for d in first.diagnostics]
    assert again.bundle == first.bundle

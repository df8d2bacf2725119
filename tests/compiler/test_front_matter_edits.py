"""A `build` after front matter edits that touch only `description`, `model`, `compatible_models`
or `model_settings` writes the lock of the recorded build with the edited nodes (their local keys,
model grants and hash), source hashes and digest taken again (`build.local_edits`): exactly
a clean build's bytes with a clean build's diagnostics. Any other front matter edit, one a
diagnostic would be about (a parse problem, a model no provider knows), and a pack that was
forged mean a compile, as without a cache."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from llm_do.compiler.build.front_matter_edits import structure_hash
from llm_do.compiler.cache import packs as packs_module
from llm_do.compiler.stages.parse import parse_worker
from llm_do.compiler.syntax.sources import SourceMap
from tests.support.cli import run_cli, worker, write_project
from tests.support.projects import assert_built_as_clean, clean_build, lock_rebuild_attempts

LOCK = "bundle.lock"

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["workers/*.worker"], "entry": {"worker": "main"},
                     "defaults": {"model": "openai:gpt-4o"}},
    "workers/main.worker": worker("model: test\ntoolsets: [plain, other, filesystem_project_ro]\napprovals: []", "Main."),
    "workers/plain.worker": worker("description: Plain\nmodel: anthropic:claude-sonnet-4-5\nmodel_settings: {temperature: 0.2}",
                                   "Task."),
    "workers/other.worker": worker("description: Other\ncompatible_models: ['openai:*']", "Other."),
    "workers/lonely.worker": worker("description: Unreachable\nmodel: test", "Alone."),  # G003, a warning
}


@pytest.fixture
def rebuilt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Each attempt of a build to write the lock from the last one: whether it could."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return lock_rebuild_attempts(monkeypatch)


def _edit(root: Path, rel: str, pattern: str, replacement: str) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    edited = re.sub(pattern, replacement, text, count=1)
    assert edited != text, f"{pattern!r} is not in {rel}"
    path.write_text(edited, encoding="utf-8")


LOCAL_EDITS: list[list[tuple[str, str, str]]] = [
    [("workers/plain.worker", r"description: Plain", "description: 'Plain: \"quoted\" # no comment, ünïcode'")],
    [("workers/plain.worker", r"model: anthropic:\S+", "model: openai:gpt-4o-mini")],  # another env grant
    [("workers/plain.worker", r"model_settings: .*", "model_settings:\n  temperature: 0.7\n  max_tokens: 100")],
    [("workers/other.worker", r"compatible_models: .*", "compatible_models: ['openai:gpt-4*', 'anthropic:*']")],
    [("workers/plain.worker", r"description: .*", "description: >\n  Two\n  lines"),  # the keys below move down
     ("workers/plain.worker", r"Task\.", "Task, edited."),
     ("workers/main.worker", r"Main\.", "Main, edited.")],
    [("workers/plain.worker", r"model: \S+", "compatible_models: ['openai:*']  # the default's")],
    [("workers/other.worker", r"description: Other\n", "")],
]


def test_local_front_matter_edits_are_written_from_the_last_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 rebuilt: list[bool]) -> None:
    root = write_project(tmp_path / "proj", PROJECT)
    assert run_cli("build", root).exit_code == 0
    for step, edits in enumerate(LOCAL_EDITS):
        before = (root / LOCK).read_bytes()
        for rel, pattern, replacement in edits:
            _edit(root, rel, pattern, replacement)
        result = run_cli("build", root)
        assert result.exit_code == 0 and "G003" in result.stderr and "written (4 workers)" in result.stderr
        assert (root / LOCK).read_bytes() != before
        assert_built_as_clean(root, monkeypatch)
        assert rebuilt == [True] * (step + 1), f"step {step} was compiled: {edits}"


COMPILED = {
    "an unknown model (M001)": ("workers/plain.worker", r"model: \S+", "model: nowhere:model"),
    "model and compatible_models (M002)": ("workers/plain.worker", r"model: \S+", "model: test\ncompatible_models: ['*']"),
    "a pattern the default misses (M003)": ("workers/other.worker", r"'openai:\*'", "'anthropic:*'"),
    "a duplicate key (P008)": ("workers/plain.worker", r"description: Plain", "description: Plain\ndescription: Twice"),
    "model_settings not a mapping": ("workers/plain.worker", r"model_settings: .*", "model_settings: hot"),
    "a toolset added": ("workers/plain.worker", r"description: Plain", "description: Plain\ntoolsets: [shell_readonly]"),
    "a recursive worker": ("workers/plain.worker", r"description: Plain", "description: Plain\nrecursive: true"),
    "a quarantined worker": ("workers/plain.worker", r"description: Plain", "description: Plain\nquarantined: true"),
    "quarantined as a string (P006)": ("workers/plain.worker", r"description: Plain", "description: Plain\nquarantined: 'true'"),
    "a key written that was left out": ("workers/other.worker", r"description: Other", "description: Other\ntools: []"),
    "a description that is a number": ("workers/plain.worker", r"description: Plain", "description: 12"),
    "model_settings with a number as a key": ("workers/plain.worker", r"model_settings: .*", "model_settings: {1: 2}"),
    "other keys in another order": ("workers/main.worker", r"toolsets: (.*)\napprovals: \[\]", r"approvals: []\ntoolsets: \1"),
    "a file a diagnostic is about": ("workers/lonely.worker", r"description: Unreachable", "description: Still unreachable"),
}


@pytest.mark.parametrize("edit", list(COMPILED))
def test_other_front_matter_edits_are_compiled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rebuilt: list[bool],
                                               edit: str) -> None:
    """With a local edit of `plain` or `other` beside it, which alone would be rebuilt; what the
    build writes and says is a clean build's."""
    root = write_project(tmp_path / "proj", PROJECT)
    assert run_cli("build", root).exit_code == 0
    rel, pattern, replacement = COMPILED[edit]
    _edit(root, rel, pattern, replacement)
    beside = "workers/other.worker" if rel == "workers/plain.worker" else "workers/plain.worker"
    _edit(root, beside, r"description: (\w+)", r"description: \1, edited")
    before = (root / LOCK).read_bytes()
    result = run_cli("build", root)
    bundle, diagnostics = clean_build(root, monkeypatch)
    assert rebuilt == [False]
    if bundle is None:
        assert result.exit_code == 1 and (root / LOCK).read_bytes() == before
        assert all(f"{d['file']}:{d['line']}:{d['column']}" in result.stderr and d["code"] in result.stderr
                   for d in diagnostics)
    else:
        assert result.exit_code == 0 and (root / LOCK).read_bytes() != before
        assert_built_as_clean(root, monkeypatch)


def test_a_key_of_another_type_that_json_writes_alike_is_compiled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   rebuilt: list[bool]) -> None:
    """`'1': 2` and `1: 2` in a key that is not local are one JSON text but not one front matter
    (validation rejects a number as a key): the edit is compiled, and its error reported."""
    project = {**PROJECT, "workers/main.worker": worker("model: test\ntoolsets: [plain, other]\napprovals: []", "Main.")}
    root = write_project(tmp_path / "proj", project)
    _edit(root, "workers/plain.worker", r"description: Plain", "description: Plain\nserver_side_tools: [{tool_type: web_search, '1': 2}]")
    assert run_cli("build", root).exit_code == 0
    before = (root / LOCK).read_bytes()
    _edit(root, "workers/plain.worker", r"'1': 2", "1: 2")
    _edit(root, "workers/plain.worker", r"description: Plain", "description: Plain, edited")
    result = run_cli("build", root)
    assert rebuilt == [False]
    assert clean_build(root, monkeypatch)[0] is None
    assert result.exit_code == 1 and "P006" in result.stderr and (root / LOCK).read_bytes() == before


def test_a_forged_pack_changes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rebuilt: list[bool]) -> None:
    """A pack whose hash of `plain`'s front matter is the one of the front matter after a toolset
    is added (a rebuild from it would leave the toolset out of the lock): the HMAC does not verify."""
    root = write_project(tmp_path / "proj", PROJECT)
    assert run_cli("build", root).exit_code == 0
    cache = tmp_path / "cache" / "llm-do" / packs_module.FOLDER
    [pack] = [p for p in sorted(cache.glob("*/*.pack")) if b'"bodies":' in p.read_bytes().split(b"\n", 1)[0]]
    before = _plain_structure(root)
    _edit(root, "workers/plain.worker", r"description: Plain", "description: Plain\ntoolsets: [shell_readonly]")
    after = _plain_structure(root)
    raw = pack.read_bytes()
    assert before.encode() in raw and before != after
    pack.write_bytes(raw.replace(before.encode(), after.encode()))
    assert run_cli("build", root).exit_code == 0
    assert rebuilt == [False]
    assert (root / LOCK).read_bytes() == clean_build(root, monkeypatch)[0]


def _plain_structure(root: Path) -> str:
    parsed, found = parse_worker(SourceMap(root).read("workers/plain.worker", "worker"))
    assert parsed is not None and not found
    return structure_hash(parsed.data)

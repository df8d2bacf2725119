"""Where `worker_create` may write (F002: not into `.git`, not outside the root) and whether the
next build takes its workers in (F007: a worker_files pattern must cover the folder)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from llm_do.compiler.syntax.project_glob import glob_project, pattern_matches
from llm_do.runtime.created_workers import DefinitionProblem, WorkerDefinition, save
from tests.support.cli import worker, write_project
from tests.support.lint import Lint, lint


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> Lint:
    root = write_project(tmp_path_factory.mktemp("folders") / "p", {
        "project.json": {"version": 1, "worker_files": ["*.worker", "drafts/**/*.worker"], "entry": {"worker": "main"}},
        "main.worker": worker("toolsets: [worker_create]", "Default folder: not covered."),
        "into_git.worker": worker("toolsets:\n  - worker_create: {path: .git}", "x"),
        "into_git_below.worker": worker("toolsets:\n  - worker_create: {path: sub/../.GIT/hooks}", "x"),
        "through_link.worker": worker("toolsets:\n  - worker_create: {path: gitlink}", "x"),
        "outside.worker": worker("toolsets:\n  - worker_create: {path: ../elsewhere}", "x"),
        "at_root.worker": worker("toolsets:\n  - worker_create: {path: .}", "x"),
        "drafts_deep.worker": worker("toolsets:\n  - worker_create: {path: drafts/new}", "x"),
        ".git/HEAD": "ref: refs/heads/main\n",
    })
    os.symlink(".git", root / "gitlink")
    return lint(root)


@pytest.mark.process
def test_a_folder_in_git_is_refused(folders: Lint) -> None:
    folders.expect("F002", "into_git.worker", ".git", mentions=(".git directory",))
    folders.expect("F002", "into_git_below.worker", "sub/../.GIT/hooks", mentions=(".git directory",))
    folders.expect("F002", "through_link.worker", "gitlink", mentions=(".git directory",))


@pytest.mark.process
def test_a_folder_outside_the_root_is_refused(folders: Lint) -> None:
    folders.expect("F002", "outside.worker", "../elsewhere", mentions=("outside the project root",))


@pytest.mark.process
def test_a_folder_no_worker_files_pattern_covers_is_a_warning(folders: Lint) -> None:
    found = folders.expect("F007", "main.worker", "worker_create", mentions=("'workers/generated'",))
    assert "'workers/generated/*.worker'" in found["hint"]
    assert {d["file"] for d in folders.of("F007")} == {"main.worker"}  # `.` and drafts/new are covered


@pytest.mark.process
def test_a_project_without_project_json_covers_every_folder(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {"main.worker": worker("toolsets: [worker_create]", "x")})
    lint(root).absent("F007")


@pytest.mark.parametrize(("pattern", "path"), [
    ("*.worker", "a.worker"), ("**/*.worker", "a.worker"), ("**/*.worker", "w/g/a.worker"), ("w/**", "w/g/a.worker"),
    ("w/*/a.worker", "w/g/a.worker"), ("w/g/a.worker", "w/g/a.worker"), (".hidden/*.worker", ".hidden/a.worker"),
    ("*.worker", "w/a.worker"), ("w/*.worker", "w/g/a.worker"), ("**/*.worker", ".hidden/a.worker"),
    ("**", ".hidden/a.worker"), ("w/?.worker", "w/ab.worker"), ("*/a.worker", ".h/a.worker"),
])
def test_pattern_matches_agrees_with_the_glob_on_files_that_exist(tmp_path: Path, pattern: str, path: str) -> None:
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / path).write_text("x")
    assert pattern_matches(pattern, path) == (path in glob_project(str(tmp_path), pattern))


@pytest.mark.parametrize(("folder", "problem"), [
    (".git", ".git directory"), ("a/../.git/hooks", ".git directory"), ("../out", "outside"), ("/tmp", "absolute"),
])
def test_the_runtime_refuses_those_folders_too(tmp_path: Path, folder: str, problem: str) -> None:
    (tmp_path / ".git").mkdir()
    with pytest.raises(DefinitionProblem, match=problem):
        save(tmp_path, folder, WorkerDefinition("w", "x", "d"))
    assert not list((tmp_path / ".git").iterdir())

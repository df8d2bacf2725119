"""`llm-do diff` and the committed `bundle.lock` (issue 30, G1): a pull request that changes only
the lock (built from a relaxed rule, the source put back) is a high entry on the review path
(`diff git:main .`, with and without `--no-import`), not "no changes in meaning"; a lock as
committed at a revision (`git:REV:PATH/bundle.lock`) is a side of its own."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.cli import run_cli, worker, write_project

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"},
                     "defaults": {"model": "openai:gpt-4o"}},
    "main.worker": worker("description: Answers.\ntoolsets: [filesystem_project]\napprovals: [ask write_file]", "Answer."),
}
RELAXED = worker("description: Answers.\ntoolsets: [filesystem_project]\napprovals: [allow write_file]", "Answer.")


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", *args],
                   cwd=repo, check=True, capture_output=True)


@pytest.fixture
def pull_request(tmp_path: Path) -> Path:
    """main: the project and its lock; branch pr: only bundle.lock changed, built from `allow write_file`."""
    root = write_project(tmp_path / "repo", PROJECT)
    assert run_cli("build", root).exit_code == 0
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "checkout", "-qb", "pr")
    original = (root / "main.worker").read_text()
    (root / "main.worker").write_text(RELAXED)
    assert run_cli("build", root).exit_code == 0
    (root / "main.worker").write_text(original)
    git(root, "commit", "-qam", "refresh bundle.lock")
    return root


@pytest.mark.process
@pytest.mark.parametrize("flags", [(), ("--no-import",)])
def test_a_pull_request_that_changes_only_the_lock_is_a_high_entry(pull_request: Path, flags: tuple[str, ...]) -> None:
    result = run_cli("diff", "git:main", ".", *flags, "--fail-on", "high", cwd_to=pull_request)
    assert result.exit_code == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "llm-do diff git:main .: 1 change: 1 high, 0 medium, 0 low"
    assert lines[1] == ("high   changed  bundle.lock of the new side: the build of its sources -> not the build of its sources "
                        "(exec runs the lock, not the sources)")
    assert "    changed: main.worker" in lines
    assert "      high   widened  approval of main.write_file: ask -> allow (relaxed)" in lines
    assert run_cli("diff", "git:main", "git:main", *flags, cwd_to=pull_request).exit_code == 0


@pytest.mark.process
def test_a_lock_as_committed_at_a_revision_is_a_side(pull_request: Path) -> None:
    result = run_cli("diff", "git:main:bundle.lock", "git:pr:bundle.lock", cwd_to=pull_request)
    assert result.exit_code == 1, result.stderr
    assert result.stdout.splitlines()[1] == "high   widened  approval of main.write_file: ask -> allow (relaxed)"
    # the lock of main against the working tree's project: the relaxed lock beside it is the new side's entry
    mixed = run_cli("diff", "git:main:bundle.lock", ".", cwd_to=pull_request)
    assert mixed.exit_code == 1
    assert "bundle.lock of the new side" in mixed.stdout
    missing = run_cli("diff", "git:main:other.lock", ".", cwd_to=pull_request)
    assert missing.exit_code == 2
    assert missing.stderr.strip().splitlines() == ["llm-do: error: git:main:other.lock: 'other.lock' is not a file at main"]

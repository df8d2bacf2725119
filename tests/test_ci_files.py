"""The CI integration files say what spec/diff.md says: pre-commit hooks that check the whole
project once, and a GitHub Actions pair where the pull request's job is read-only and imports
nothing, and the job that may write runs nothing of the pull request."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import yaml

from tests.support.cli import run_cli

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "release_notes"


def load(rel: str):
    return yaml.safe_load((ROOT / rel).read_text(encoding="utf-8"))


def test_pre_commit_hooks(tmp_path: Path) -> None:
    hooks = {h["id"]: h for h in load(".pre-commit-hooks.yaml")}
    assert hooks["llm-do-lint"]["entry"] == "llm-do lint"
    assert hooks["llm-do-lock"]["entry"] == "llm-do build --check -q"  # the reason it failed, not every warning
    assert all(h["pass_filenames"] is False and h["language"] == "python" for h in hooks.values())
    # the entries are real commands, run as pre-commit runs them: in the project, no file names
    project = tmp_path / "release_notes"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("bundle.lock"))
    lint, check = (shlex.split(hooks[h]["entry"])[1:] for h in ("llm-do-lint", "llm-do-lock"))
    assert run_cli(*lint, cwd_to=project).exit_code == 0
    assert run_cli(*check, cwd_to=project).exit_code == 1  # no lock yet
    assert run_cli("build", cwd_to=project).exit_code == 0
    assert run_cli(*check, cwd_to=project).exit_code == 0


def test_review_workflow_is_read_only_and_imports_nothing() -> None:
    flow = load("docs/ci/llm-do-review.yml")
    assert list(flow[True]) == ["pull_request"]  # YAML 1.1 reads the key `on` as True
    assert flow["permissions"] == {"contents": "read"}
    job = flow["jobs"]["review"]
    assert "pull-requests" not in job["permissions"] and job["permissions"]["contents"] == "read"
    runs = " ".join(step.get("run", "") for step in job["steps"])
    for command in ("llm-do lint", "llm-do diff"):
        assert command in runs
    llm_do_lines = [line for step in job["steps"] for line in step.get("run", "").splitlines()
                    if line.strip().startswith("llm-do ")]
    assert llm_do_lines and all("--no-import" in line for line in llm_do_lines)
    assert 'git:$BASE' in runs and "--format markdown" in runs and "--format sarif" in runs
    # the one job that imports the pull request's Python (to build it) has no write permission at all
    lock = flow["jobs"]["lock"]
    assert lock["permissions"] == {"contents": "read"} and job["needs"] == "lock"
    assert [line.strip() for step in lock["steps"] for line in step.get("run", "").splitlines()
            if line.strip().startswith("llm-do ")] == ['llm-do build "$PROJECT" --check || status=$?']
    assert all(s.get("with", {}).get("persist-credentials") is False for s in lock["steps"]
               if s.get("uses", "").startswith("actions/checkout"))


def test_comment_workflow_runs_nothing_of_the_pull_request() -> None:
    flow = load("docs/ci/llm-do-comment.yml")
    assert flow[True]["workflow_run"]["workflows"] == ["llm-do review"]
    job = flow["jobs"]["comment"]
    assert job["permissions"]["pull-requests"] == "write"
    uses = [step.get("uses", "") for step in job["steps"]]
    assert not any(u.startswith("actions/checkout") for u in uses)
    runs = "\n".join(step.get("run", "") for step in job["steps"])
    assert not re.search(r"(^|\s)llm-do\s|pip", runs)  # nothing installed, llm-do never run

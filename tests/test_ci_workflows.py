"""The docs/ci workflows run as GitHub would run their steps (F16): actionlint accepts them, they
pin llm-do, the review job puts lint findings in the comment (a fork's pull request can upload no
code scanning results) and fails on a high change (G2) or a lock that is not the build of the
source (issue 30), and the comment job updates its own one comment in place and posts only on the
pull request the review ran on (G14), checked against a stand-in `gh` on PATH that records its
arguments and answers from canned API documents through the real `jq`, as `gh --jq` would."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from llm_do.bundle.version import VERSION
from tests.support.cli import run_cli, worker, write_project

ROOT = Path(__file__).resolve().parent.parent
FLOWS = [ROOT / "docs" / "ci" / "llm-do-review.yml", ROOT / "docs" / "ci" / "llm-do-comment.yml",
         ROOT / "docs" / "ci" / "llm-do-test.yml"]
BIN = Path(sys.executable).parent
MARKER = "<!-- llm-do-review -->"
GH = """#!{python}
import json, os, subprocess, sys
args = sys.argv[1:]
with open(os.environ["GH_LOG"], "a") as log:
    log.write(json.dumps(args) + "\\n")
if args[:1] == ["api"] and "--method" not in args:
    answer = json.dumps(json.loads(os.environ["GH_API"]).get(args[1], []))
    if "--jq" in args:
        answer = subprocess.run(["jq", "-r", args[args.index("--jq") + 1]], input=answer, capture_output=True,
                                text=True, check=True).stdout
    print(answer, end="")
"""
BOT = "github-actions[bot]"
HEAD = {"HEAD_SHA": "c0ffee", "HEAD_FROM": "ann/repo:fix-typo"}
"""The pull request the review ran on, as the workflow_run event says (its head commit and branch)."""


def _step(flow: Path, name: str) -> dict[str, Any]:
    doc = yaml.safe_load(flow.read_text(encoding="utf-8"))
    return next(s for job in doc["jobs"].values() for s in job["steps"] if s.get("name") == name)


def step(flow: Path, name: str) -> str:
    return _step(flow, name)["run"]


def static_env(flow: Path, name: str) -> dict[str, str]:
    """The step's `env` values that are written out (not `${{ ... }}`, which the tests give)."""
    return {k: str(v) for k, v in (_step(flow, name).get("env") or {}).items() if "${{" not in str(v)}


def run_step(script: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **env}, check=False)


def test_actionlint_accepts_the_workflows() -> None:
    actionlint = shutil.which("actionlint", path=str(BIN)) or shutil.which("actionlint")
    assert actionlint, "actionlint comes with the test extra"
    result = subprocess.run([actionlint, "-no-color", *map(str, FLOWS)], capture_output=True, text=True, check=False)
    assert (result.returncode, result.stdout) == (0, "")


@pytest.mark.parametrize(("flow", "job"), [(FLOWS[0], "review"), (FLOWS[0], "lock"), (FLOWS[2], "test")])
def test_the_jobs_pin_llm_do(flow: Path, job: str) -> None:
    doc = yaml.safe_load(flow.read_text(encoding="utf-8"))
    assert doc["env"]["LLM_DO_VERSION"] == VERSION
    installs = [s["run"] for s in doc["jobs"][job]["steps"] if "pip install" in s.get("run", "")]
    assert installs == ['pip install "llm-do==$LLM_DO_VERSION"']


@pytest.mark.process
def test_the_test_job_annotates_the_case_files_and_writes_junit(tmp_path: Path) -> None:
    """The job's step, run as GitHub runs it, on an example with one case made to fail."""
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "examples" / "greeter", repo, ignore=shutil.ignore_patterns("bundle.lock"))
    cases = repo / "tests" / "cases.yaml"
    cases.write_text(cases.read_text().replace("contains: Welcome aboard", "contains: Farewell"))
    result = run_step(step(FLOWS[2], "Run the cases"), repo, PROJECT=".", PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}")
    assert result.returncode == 1, result.stderr
    annotation = next(line for line in result.stdout.splitlines() if line.startswith("::error "))
    assert annotation.startswith("::error file=tests/cases.yaml,line=3,title=llm-do test::case 'greeter-recorded-run' "
                                 "failed: output: does not contain 'Farewell, Dana!")
    assert '<failure type="failed"' in (repo / "reports" / "llm-do-junit.xml").read_text()


def pull(number: int, sha: str = "c0ffee", head: str = "ann/repo", ref: str = "fix-typo") -> dict[str, Any]:
    return {f"repos/owner/repo/pulls/{number}": {"number": number, "head": {"sha": sha, "ref": ref,
                                                                           "repo": {"full_name": head}}}}


def comments(number: int, *found: tuple[int, str, str]) -> dict[str, Any]:
    """The pull request's comments: (id, author, body)."""
    return {f"repos/owner/repo/issues/{number}/comments": [{"id": i, "user": {"login": who}, "body": body}
                                                           for i, who, body in found]}


@pytest.fixture
def gh(tmp_path: Path) -> dict[str, str]:
    assert shutil.which("jq"), "the stand-in gh runs --jq filters with jq"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "gh"
    fake.write_text(GH.format(python=sys.executable), encoding="utf-8")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "GH_LOG": str(tmp_path / "gh.log"),
            "REPO": "owner/repo", "GH_TOKEN": "unused", "GH_API": json.dumps(pull(7)), **HEAD,
            **static_env(FLOWS[1], "Post or update the comment")}


def api(env: dict[str, str], *answers: dict[str, Any]) -> dict[str, str]:
    merged: dict[str, Any] = {}
    for answer in answers:
        merged |= answer
    return {**env, "GH_API": json.dumps(merged)}


def calls(env: dict[str, str]) -> list[list[str]]:
    log = Path(env["GH_LOG"])
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def artifact(tmp_path: Path, pr: str, body: str = f"{MARKER}\n## llm-do diff\n") -> Path:
    review = tmp_path / "review"
    review.mkdir(exist_ok=True)
    (review / "pr-number").write_text(pr + "\n")
    (review / "comment.md").write_text(body)
    return tmp_path


POST = step(FLOWS[1], "Post or update the comment")


def test_the_first_push_posts_a_comment(tmp_path: Path, gh: dict[str, str]) -> None:
    result = run_step(POST, artifact(tmp_path, "7"), **gh)
    assert result.returncode == 0, result.stderr
    check, listing, post = calls(gh)
    assert check[:2] == ["api", "repos/owner/repo/pulls/7"]
    assert listing[:2] == ["api", "repos/owner/repo/issues/7/comments"] and "--paginate" in listing
    assert post == ["pr", "comment", "7", "--repo", "owner/repo", "--body-file", "review/comment.md"]


def test_a_later_push_updates_that_comment(tmp_path: Path, gh: dict[str, str]) -> None:
    env = api(gh, pull(7), comments(7, (40, "ann", "Looks good"), (42, BOT, f"{MARKER}\nold"), (99, BOT, f"{MARKER}\nolder")))
    result = run_step(POST, artifact(tmp_path, "7"), **env)
    assert result.returncode == 0, result.stderr
    assert calls(gh)[2] == ["api", "--method", "PATCH", "repos/owner/repo/issues/comments/42", "-F",
                            "body=@review/comment.md"]
    assert len(calls(gh)) == 3  # no new comment


def test_a_comment_someone_else_starts_with_the_marker_is_left_alone(tmp_path: Path, gh: dict[str, str]) -> None:
    """G14: the first comment starting with the marker was patched whoever wrote it (the author's
    copy, which the bot may not edit: the step failed and the review was never posted)."""
    env = api(gh, pull(7), comments(7, (41, "ann", f"{MARKER}\n**no changes in meaning**"), (42, BOT, f"{MARKER}\nold")))
    result = run_step(POST, artifact(tmp_path, "7"), **env)
    assert result.returncode == 0, result.stderr
    assert calls(gh)[2][:4] == ["api", "--method", "PATCH", "repos/owner/repo/issues/comments/42"]
    env = api(gh, pull(7), comments(7, (41, "ann", f"{MARKER}\n**no changes in meaning**")))
    Path(gh["GH_LOG"]).unlink()
    result = run_step(POST, artifact(tmp_path, "7"), **env)
    assert result.returncode == 0, result.stderr
    assert [c[:3] for c in calls(gh)[1:]] == [["api", "repos/owner/repo/issues/7/comments", "--paginate"],
                                              ["pr", "comment", "7"]]


def test_an_artifact_naming_another_pull_request_posts_nothing(tmp_path: Path, gh: dict[str, str]) -> None:
    """G14: a pull request's own copy of the review workflow writes the artifact; one naming
    pull request 8 (someone else's, whose head is not the commit reviewed) posts nothing there."""
    env = api(gh, pull(8, sha="beef", head="bob/repo", ref="feature"))
    result = run_step(POST, artifact(tmp_path, "8"), **env)
    assert result.returncode == 1
    assert "names pull request #8, whose head is not c0ffee (ann/repo:fix-typo)" in result.stdout
    assert [c[:2] for c in calls(gh)] == [["api", "repos/owner/repo/pulls/8"]]


def test_a_pull_request_that_moved_on_waits_for_its_next_review(tmp_path: Path, gh: dict[str, str]) -> None:
    env = api(gh, pull(7, sha="f00d"))
    result = run_step(POST, artifact(tmp_path, "7"), **env)
    assert result.returncode == 0, result.stderr
    assert "has moved on since this review ran" in result.stdout and len(calls(gh)) == 1


@pytest.mark.parametrize(("pr", "body"), [("7; rm -rf /", f"{MARKER}\n"), ("", f"{MARKER}\n"), ("7", "## no marker\n")])
def test_a_bad_artifact_posts_nothing(tmp_path: Path, gh: dict[str, str], pr: str, body: str) -> None:
    result = run_step(POST, artifact(tmp_path, pr, body), **gh)
    assert result.returncode == 1 and calls(gh) == []


def _pull_request(tmp_path: Path, change: str, *, rebuild: bool) -> tuple[Path, dict[str, str]]:
    """A repository whose main commits a project and its lock, with the pull request's change in
    the working tree (its lock rebuilt or not), and the environment GitHub gives the review steps."""
    repo = write_project(tmp_path / "repo", {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "defaults": {"model": "openai:gpt-4o"}},
        "main.worker": worker("description: Reads.\ntoolsets: [filesystem_project_ro]\n"),
    })
    assert run_cli("build", repo).exit_code == 0
    git = ["git", "-c", "user.email=a@b", "-c", "user.name=n"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=repo, check=True)
    base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()
    (repo / "main.worker").write_text(change)
    if rebuild:
        assert run_cli("build", repo).exit_code == 0
    return repo, {"PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "PROJECT": ".", "GITHUB_WORKSPACE": str(repo),
                  "GITHUB_OUTPUT": str(tmp_path / "out"), "BASE": base, "PR": "12"}


def _run_review(repo: Path, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], dict[str, str]]:
    """The lock job's check, then the review job's steps, as GitHub runs them (the job outputs
    passed on as the workflow passes them); returns the fail step's result and the outputs."""
    output = Path(env["GITHUB_OUTPUT"])
    lock = run_step(step(FLOWS[0], "The committed bundle.lock is what the source builds"), repo, **env)
    outputs = {"LOCK": output.read_text().split("=", 1)[1].strip()}
    assert lock.returncode == int(outputs["LOCK"])
    for key, name in (("LINT", "Lint (no import of the pull request's Python)"), ("DIFF", "Diff against the base branch")):
        output.write_text("")
        result = run_step(step(FLOWS[0], name), repo, **env, LOCK=outputs["LOCK"])
        assert result.returncode == 0, (name, result.stderr)
        outputs[key] = output.read_text().split("=", 1)[1].strip()
    return run_step(step(FLOWS[0], "Fail on lint errors, a high change or a stale lock"), repo, **env, **outputs), outputs


@pytest.mark.process
def test_the_review_job_fails_on_a_high_change_and_comments_it(tmp_path: Path, gh: dict[str, str]) -> None:
    """G2: the job said it failed on a high change, and passed one (no --fail-on)."""
    repo, env = _pull_request(tmp_path, worker("description: Writes.\ntoolsets: [filesystem_project]\n"
                                               "approvals: [allow write_file]\n"), rebuild=True)
    failed, outputs = _run_review(repo, env)
    assert outputs == {"LOCK": "0", "LINT": "0", "DIFF": "1"}
    assert (failed.returncode, failed.stdout) == (1, "the diff has a high change (see the comment)\n")
    comment = (repo / "review" / "comment.md").read_text()
    assert comment.startswith(MARKER + "\n<details><summary>Lint findings</summary>")
    assert "R001" in comment  # the warning a fork's pull request could not upload
    authority = comment.split("### New authority", 1)[1].split("###", 1)[0]
    assert "**high** fs.write:project/\\*\\* of main: via write\\_file \\[no approval\\]" in authority
    assert json.loads((repo / "review" / "diff-full.json").read_text())["summary"]["high"] >= 1
    assert len(comment) <= 65_536
    result = run_step(POST, repo, **api(gh, pull(12)))
    assert result.returncode == 0, result.stderr
    assert calls(gh)[-1][:3] == ["pr", "comment", "12"]


@pytest.mark.process
def test_the_review_job_fails_on_a_lock_that_is_not_the_build_of_the_source(tmp_path: Path) -> None:
    """Issue 30: the pre-commit hook was the only check of the committed lock. A medium change
    (instructions) with the lock left as it was: the lock job fails, the comment says so first,
    and the review job fails for it; the diff has it too, as a high entry (the committed lock that
    is not the build of its side), while the instructions alone pass `--fail-on high`."""
    repo, env = _pull_request(tmp_path, worker("description: Reads.\ntoolsets: [filesystem_project_ro]\n",
                                               body="Ignore what the files say."), rebuild=False)
    failed, outputs = _run_review(repo, env)
    assert outputs == {"LOCK": "1", "LINT": "0", "DIFF": "1"}
    assert (failed.returncode, failed.stdout) == (1, "the diff has a high change (see the comment)\n"
                                                     "bundle.lock is not what the source builds\n")
    comment = (repo / "review" / "comment.md").read_text()
    assert comment.startswith(MARKER + "\n**bundle.lock is not what this pull request's source builds**")
    assert "instructions of main" in comment and "bundle.lock of the new side" in comment
    passed = run_step(step(FLOWS[0], "Fail on lint errors, a high change or a stale lock"), repo,
                      **env, LOCK="0", LINT="0", DIFF="0")
    assert (passed.returncode, passed.stdout) == (0, "")
    for unknown in ({"LOCK": ""}, {"DIFF": "2"}):  # the lock job never ran its check; the diff could not compare
        assert run_step(step(FLOWS[0], "Fail on lint errors, a high change or a stale lock"), repo,
                        **env, **{"LOCK": "0", "LINT": "0", "DIFF": "0", **unknown}).returncode == 1

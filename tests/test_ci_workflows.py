"""The docs/ci workflows run as GitHub would run their steps (F16): actionlint accepts them, they
pin llm-do, the review job puts lint findings in the comment (a fork's pull request can upload no
code scanning results), and the comment job updates its one comment in place, checked against a
stand-in `gh` on PATH that records its arguments."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from llm_do.bundle.version import VERSION
from tests.support.cli import worker, write_project

ROOT = Path(__file__).resolve().parent.parent
FLOWS = [ROOT / "docs" / "ci" / "llm-do-review.yml", ROOT / "docs" / "ci" / "llm-do-comment.yml",
         ROOT / "docs" / "ci" / "llm-do-test.yml"]
BIN = Path(sys.executable).parent
MARKER = "<!-- llm-do-review -->"
GH = """#!{python}
import json, os, sys
with open(os.environ["GH_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
if sys.argv[1:2] == ["api"] and "--method" not in sys.argv:
    print(os.environ.get("GH_EXISTING", ""), end="")
"""


def step(flow: Path, name: str) -> str:
    doc = yaml.safe_load(flow.read_text(encoding="utf-8"))
    job = next(iter(doc["jobs"].values()))
    return next(s["run"] for s in job["steps"] if s.get("name") == name)


def run_step(script: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-e", "-c", script], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **env}, check=False)


def test_actionlint_accepts_the_workflows() -> None:
    actionlint = shutil.which("actionlint", path=str(BIN)) or shutil.which("actionlint")
    assert actionlint, "actionlint comes with the test extra"
    result = subprocess.run([actionlint, "-no-color", *map(str, FLOWS)], capture_output=True, text=True, check=False)
    assert (result.returncode, result.stdout) == (0, "")


@pytest.mark.parametrize(("flow", "job"), [(FLOWS[0], "review"), (FLOWS[2], "test")])
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


@pytest.fixture
def gh(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "gh"
    fake.write_text(GH.format(python=sys.executable), encoding="utf-8")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "GH_LOG": str(tmp_path / "gh.log"),
            "REPO": "owner/repo", "GH_TOKEN": "unused"}


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
    listing, post = calls(gh)
    assert listing[:2] == ["api", "repos/owner/repo/issues/7/comments"] and "--paginate" in listing
    assert f'select(.body | startswith("{MARKER}"))' in listing[listing.index("--jq") + 1]
    assert post == ["pr", "comment", "7", "--repo", "owner/repo", "--body-file", "review/comment.md"]


def test_a_later_push_updates_that_comment(tmp_path: Path, gh: dict[str, str]) -> None:
    result = run_step(POST, artifact(tmp_path, "7"), **gh, GH_EXISTING="42\n99\n")
    assert result.returncode == 0, result.stderr
    assert calls(gh)[1] == ["api", "--method", "PATCH", "repos/owner/repo/issues/comments/42", "-F",
                            "body=@review/comment.md"]
    assert len(calls(gh)) == 2  # no new comment


@pytest.mark.parametrize(("pr", "body"), [("7; rm -rf /", f"{MARKER}\n"), ("", f"{MARKER}\n"), ("7", "## no marker\n")])
def test_a_bad_artifact_posts_nothing(tmp_path: Path, gh: dict[str, str], pr: str, body: str) -> None:
    result = run_step(POST, artifact(tmp_path, pr, body), **gh)
    assert result.returncode == 1 and calls(gh) == []


@pytest.mark.process
def test_the_review_job_puts_lint_findings_and_the_diff_in_the_comment(tmp_path: Path, gh: dict[str, str]) -> None:
    repo = write_project(tmp_path / "repo", {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "defaults": {"model": "openai:gpt-4o"}},
        "main.worker": worker("description: Reads.\ntoolsets: [filesystem_project_ro]\n"),
    })
    git = ["git", "-c", "user.email=a@b", "-c", "user.name=n"]
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=repo, check=True)
    base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()
    (repo / "main.worker").write_text(worker("description: Writes.\ntoolsets: [filesystem_project]\napprovals: [allow write_file]\n"))
    env = {"PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "PROJECT": ".", "GITHUB_WORKSPACE": str(repo),
           "GITHUB_OUTPUT": str(tmp_path / "out"), "BASE": base, "PR": "12"}
    for name in ("Lint (no import of the pull request's Python)", "Diff against the base branch"):
        result = run_step(step(FLOWS[0], name), repo, **env)
        assert result.returncode == 0, (name, result.stderr)
    assert (tmp_path / "out").read_text().splitlines() == ["status=0", "status=1"]
    comment = (repo / "review" / "comment.md").read_text()
    assert comment.startswith(MARKER + "\n<details><summary>Lint findings</summary>")
    assert "R001" in comment  # the warning a fork's pull request could not upload
    authority = comment.split("### New authority", 1)[1].split("###", 1)[0]
    assert "**high** fs.write:project/\\*\\* of main: via write\\_file \\[no approval\\]" in authority
    assert json.loads((repo / "review" / "diff-full.json").read_text())["summary"]["high"] >= 1
    assert len(comment) <= 65_536
    result = run_step(POST, repo, **gh)
    assert result.returncode == 0, result.stderr
    assert calls(gh)[-1][:3] == ["pr", "comment", "12"]

"""`llm-do diff`: changes by meaning, risk first; exit codes; git:REV; the release_notes example."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from llm_do.compiler.report.schemas import DiffDocument
from tests.support.cli import run_cli, worker, write_project

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "release_notes"

BASE = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["schemas.py"],
                     "defaults": {"model": "openai:gpt-4o"}},
    "main.worker": worker(
        """
        description: Coordinates.
        toolsets: [filesystem_project_ro, editor]
        approvals: [ask editor]
        """,
        "Coordinate the work.",
    ),
    "editor.worker": worker(
        """
        description: Edits.
        schema_in_ref: schemas.py:EditRequest
        toolsets:
          - filesystem_project: {path: drafts}
        approvals: [ask write_file]
        """,
        "Edit the draft.",
    ),
    "schemas.py": """
        from llm_do.runtime import WorkerArgs


        class EditRequest(WorkerArgs):
            path: str
            style: str = "plain"

            def prompt_messages(self):
                return [f"Edit {self.path} in a {self.style} style."]
        """,
}


def project(tmp_path: Path, name: str, changes: dict | None = None, drop: tuple[str, ...] = ()) -> Path:
    files = {k: v for k, v in {**BASE, **(changes or {})}.items() if k not in drop}
    return write_project(tmp_path / name, files)


def diff(old: Path | str, new: Path | str, *flags: str, cwd: Path | None = None):
    result = run_cli("diff", old, new, *flags, cwd_to=cwd)
    assert "Traceback" not in result.stderr
    return result


def changes(old: Path, new: Path) -> list[dict]:
    result = diff(old, new, "--format", "json")
    assert result.exit_code in (0, 1), result.stderr
    doc = result.json()
    DiffDocument.model_validate(doc)  # the documented shape (runtime/llm_do/cli/schemas/diff.schema.json)
    return flattened(doc["changes"])


def flattened(entries: list[dict]) -> list[dict]:
    """Every change of a JSON report: each entry's leading change and those folded into it."""
    return [change for e in entries for change in ({k: v for k, v in e.items() if k not in ("workers", "folded")}, *e["folded"])]


def find(found: list[dict], **want) -> dict:
    hits = [c for c in found if all(c.get(k) == v for k, v in want.items())]
    assert len(hits) == 1, (want, found)
    return hits[0]


@pytest.mark.process
def test_equal_projects_diff_equal_after_moves_and_reformatting(tmp_path: Path) -> None:
    old = project(tmp_path, "old")
    manifest = dict(BASE["project.json"], worker_files=["workers/**/*.worker"])
    new = write_project(tmp_path / "new", {
        "project.json": dict(reversed(list(manifest.items()))),  # keys reordered
        "schemas.py": BASE["schemas.py"],
        "workers/main.worker": "---\ndescription: Coordinates.\ntoolsets:\n  - filesystem_project_ro\n  - editor\n"
                               "approvals:\n  - 'ask editor'\n---\nCoordinate the work.\n",
        "workers/sub/editor.worker": worker(
            """
            approvals: ["ask write_file"]
            toolsets: [{filesystem_project: {path: "drafts/"}}]
            schema_in_ref: schemas.py:EditRequest
            description: "Edits."
            """,
            "Edit the draft.",
        ),
    })
    result = diff(old, new)
    assert result.exit_code == 0, result.stdout
    assert "no changes in meaning" in result.stdout
    assert changes(old, new) == []
    assert run_cli("build", old).exit_code == 0
    assert diff(old / "bundle.lock", new).exit_code == 0


@pytest.mark.process
def test_write_through_a_new_callee_is_gained_by_the_worker_and_its_callers(tmp_path: Path) -> None:
    old = project(tmp_path, "old")
    new = project(tmp_path, "new", {
        "editor.worker": BASE["editor.worker"].replace("toolsets:\n", "toolsets:\n  - publisher\n"),
        "publisher.worker": worker("toolsets: [filesystem_project]\napprovals: [allow write_file]", "Publish."),
    })
    found = changes(old, new)
    editor = find(found, subject="fs.write:project/** of editor")
    assert (editor["severity"], editor["verb"], editor["area"]) == ("high", "added", "capability")
    assert editor["note"] == "path editor -> publisher"
    assert editor["after"] == "via publisher -> write_file [no approval]"
    main = find(found, subject="fs.write:project/** of main")
    assert main["note"] == "path main -> editor -> publisher"
    assert main["severity"] == "medium"  # main asks before calling editor
    assert "ask at main.editor" in main["after"]
    find(found, subject="call editor -> publisher", verb="added")
    find(found, subject="worker publisher", verb="added")
    assert found[0]["severity"] == "high", "risky changes first"
    caps = run_cli("capabilities", new, "--format", "json").json()
    editor_caps = {c["capability"]: c for w in caps["workers"] if w["name"] == "editor" for c in w["capabilities"]}
    assert editor_caps["fs.write:project/**"]["path"] == ["editor", "publisher"]


@pytest.mark.process
def test_relaxed_and_tightened_approvals(tmp_path: Path) -> None:
    old = project(tmp_path, "old")
    new = project(tmp_path, "new", {
        "editor.worker": BASE["editor.worker"].replace("approvals: [ask write_file]", "approvals: [allow write_file]"),
        "main.worker": BASE["main.worker"].replace("approvals: [ask editor]", "approvals: [deny editor]"),
    })
    found = changes(old, new)
    relaxed = find(found, subject="approval of editor.write_file")
    assert (relaxed["verb"], relaxed["note"], relaxed["before"], relaxed["after"]) == ("widened", "relaxed", "ask", "allow")
    assert relaxed["severity"] == "high"
    tightened = find(found, subject="approval of main.editor")
    assert (tightened["verb"], tightened["note"], tightened["severity"]) == ("narrowed", "tightened", "low")
    # main can no longer reach editor at all: what it reached through it is gone
    assert find(found, subject="fs.write:project/drafts/** of main")["verb"] == "removed"
    widened = find(found, subject="fs.write:project/drafts/** of editor")
    assert (widened["verb"], widened["note"], widened["severity"]) == ("widened", "approval relaxed", "high")
    # F32: what a CI filter needs is in fields, not only in the subject's text
    assert {k: widened[k] for k in ("kind", "scope", "gate", "file", "line")} == {
        "kind": "fs.write", "scope": "project/drafts/**", "gate": "allow", "file": "editor.worker", "line": 6}
    assert (relaxed["gate"], relaxed["file"], relaxed["line"], relaxed["kind"]) == ("allow", "editor.worker", 6, None)
    assert (tightened["file"], tightened["line"]) == ("main.worker", 4)  # its cause: the rule that now denies
    removed = find(found, subject="fs.write:project/drafts/** of main")
    assert (removed["kind"], removed["gate"], removed["file"], removed["line"]) == ("fs.write", "ask", "editor.worker", 5)


@pytest.mark.process
def test_breaking_schema_change_is_called_out(tmp_path: Path) -> None:
    old = project(tmp_path, "old")
    new = project(tmp_path, "new", {"schemas.py": BASE["schemas.py"].replace(
        'path: str\n            style: str = "plain"', "path: list[str]\n            deadline: str")})
    found = changes(old, new)
    change = find(found, subject="input schema of editor")
    assert (change["note"], change["severity"], change["verb"]) == ("breaking", "medium", "changed")
    assert change["detail"] == ["deadline: added, required", "path: type changed (string -> array of string)",
                                "style: removed"]


@pytest.mark.process
def test_scope_widened_and_limits(tmp_path: Path) -> None:
    old = project(tmp_path, "old")
    manifest = dict(BASE["project.json"], runtime={"max_depth": 9, "approval_mode": "approve_all"})
    new = project(tmp_path, "new", {
        "project.json": manifest,
        "editor.worker": BASE["editor.worker"].replace("{path: drafts}", "{path: .}"),
    })
    found = changes(old, new)
    scope = find(found, subject="fs.write:project/** of editor")
    assert (scope["verb"], scope["before"]) == ("widened", "fs.write:project/drafts/**")
    mode = find(found, subject="approval_mode")
    assert (mode["severity"], mode["verb"], mode["before"], mode["after"]) == ("high", "widened", "prompt", "approve_all")
    depth = find(found, subject="max_depth")
    assert (depth["verb"], depth["before"], depth["after"]) == ("widened", "5", "9")


@pytest.mark.process
def test_exit_codes_and_fail_on(tmp_path: Path) -> None:
    old = project(tmp_path, "old")
    cosmetic = project(tmp_path, "cosmetic", {"main.worker": BASE["main.worker"].replace("Coordinates.", "Leads.")})
    assert diff(old, cosmetic).exit_code == 1
    assert diff(old, cosmetic, "--fail-on", "medium").exit_code == 0  # the description of a worker no model reads is low
    assert diff(old, cosmetic, "--fail-on", "low").exit_code == 1
    risky = project(tmp_path, "risky", {
        "editor.worker": BASE["editor.worker"].replace("approvals: [ask write_file]", "approvals: [allow write_file]")})
    assert diff(old, risky, "--fail-on", "high").exit_code == 1
    assert diff(old, old, "--fail-on", "low").exit_code == 0


@pytest.mark.process
def test_comparisons_that_cannot_be_made_are_errors(tmp_path: Path) -> None:
    old = project(tmp_path, "old")
    broken = project(tmp_path, "broken", {"main.worker": worker("toolsets: [nowhere]")})
    for args in ((old, tmp_path / "missing"), (old, broken), (old, tmp_path / "old" / "schemas.py")):
        result = diff(*args)
        assert result.exit_code == 2, (args, result.stdout)
        assert result.stderr.strip().splitlines()[-1].startswith("llm-do: error: ")
    assert "N003" in diff(old, broken).stderr
    assert run_cli("build", old).exit_code == 0
    lock = old / "bundle.lock"
    (tmp_path / "edited.lock").write_text(lock.read_text().replace("Coordinates.", "Coordinates!"))
    result = diff(lock, tmp_path / "edited.lock")
    assert result.exit_code == 2 and "digest" in result.stderr
    old_format = tmp_path / "old-format.lock"
    old_format.write_bytes(_with_format(lock.read_bytes(), 1))
    result = diff(old_format, lock)
    from llm_do.bundle.format import BUNDLE_FORMAT

    assert result.exit_code == 2 and "llm-do build" in result.stderr
    assert f"bundle format 1 and the new side bundle format {BUNDLE_FORMAT}" in result.stderr  # both named


def _with_format(data: bytes, fmt: int) -> bytes:
    from llm_do.bundle.canonical import document_json, sha256_hex, tagged

    doc = json.loads(data)
    doc["bundle_format"] = fmt
    doc["digest"] = ""
    blank = document_json(doc)
    doc["digest"] = tagged(sha256_hex(blank))
    return document_json(doc)


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false",
                    *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    project(root, "app")
    (root / "README.md").write_text("not a project\n")
    (root / "docs").mkdir()
    (root / "docs" / "notes.md").write_text("notes\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    return root


@pytest.mark.process
def test_git_rev_compares_the_committed_project(repo: Path) -> None:
    app = repo / "app"
    (app / "main.worker").write_text(BASE["main.worker"].replace("approvals: [ask editor]", "approvals: [allow editor]"))
    before = (app / "main.worker").read_text()
    result = diff("git:HEAD", ".", "--format", "json", cwd=app)
    assert result.exit_code == 1, result.stderr
    subjects = {c["subject"] for c in result.json()["changes"]}
    assert "approval of main.editor" in subjects
    assert (app / "main.worker").read_text() == before, "the working tree is not touched"
    assert diff("git:HEAD:app", "app", cwd=repo).exit_code == 1
    git(repo, "commit", "-qam", "allow editor")
    assert diff("git:HEAD~1:app", "git:HEAD:app", cwd=repo / "docs").exit_code == 1
    assert diff("git:HEAD", ".", cwd=app).exit_code == 0
    caps = run_cli("capabilities", "git:HEAD~1:app", "--format", "json", cwd_to=repo)
    assert caps.exit_code == 0, caps.stderr
    main = next(w for w in caps.json()["workers"] if w["name"] == "main")
    write = next(c for c in main["capabilities"] if c["capability"] == "fs.write:project/drafts/**")
    assert write["gate"] == "ask"  # at HEAD~1 main still asked before calling editor


@pytest.mark.parametrize(("spec", "cwd", "message"), [
    ("git:HEAD:docs", "", "'docs' is not an llm-do project at HEAD"),
    ("git:HEAD:nowhere", "", "'nowhere' does not exist at HEAD"),
    ("git:no-such-rev", "app", "'no-such-rev' is not a commit"),
    ("git:", "app", "no revision"),
])
def test_git_rev_errors_are_clear(repo: Path, spec: str, cwd: str, message: str) -> None:
    result = diff(spec, repo / "app", cwd=repo / cwd)
    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize(("target", "said"), [
    ("/etc/hosts", "'app/hosts_link' at HEAD is a link to an absolute path"),
    ("../../outside", "'app/hosts_link' at HEAD is a link pointing out of the tree"),
])
def test_git_rev_with_a_link_out_of_the_tree_is_refused_in_one_line(repo: Path, target: str, said: str) -> None:
    """L4: a committed link out of the tree is an input problem (exit 2), not an internal error (70)."""
    (repo / "app" / "hosts_link").symlink_to(target)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "link")
    for command in (("diff", "git:HEAD", ".", "--no-import"), ("capabilities", "git:HEAD", "--no-import")):
        result = run_cli(*command, cwd_to=repo / "app")
        assert result.exit_code == 2, result.stderr
        assert result.stderr.strip().splitlines() == [f"llm-do: error: git:HEAD: {said}; llm-do reads only what lies in the tree"]


def test_git_rev_diagnostics_name_the_committed_files(repo: Path) -> None:
    """F21: a side with errors names its files `git:REV:PATH/file`, never a temporary directory."""
    (repo / "app" / "main.worker").write_text(worker("toolsets: [nobody]", "Hi."))
    git(repo, "commit", "-qam", "broken")
    result = diff("git:HEAD", ".", cwd=repo / "app")
    assert result.exit_code == 2
    assert result.stderr.startswith("git:HEAD:app/main.worker:2:"), result.stderr
    assert "llm-do-git-" not in result.stderr
    result = diff("git:HEAD:app", "app", cwd=repo)
    assert result.stderr.startswith("git:HEAD:app/main.worker:2:"), result.stderr


def test_git_rev_outside_a_repository(tmp_path: Path) -> None:
    app = project(tmp_path, "app")
    result = diff("git:HEAD", ".", cwd=app)
    assert result.exit_code == 2 and "not in a git repository" in result.stderr


# --- the example: a worker gains write access through a new callee


@pytest.fixture(scope="module")
def example_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("example") / "release_notes"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("bundle.lock", "__pycache__"))
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")
    git(root, "apply", "publish.patch")
    return root


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_example_diff(example_repo: Path, fmt: str, snapshot) -> None:
    result = diff("git:HEAD", ".", "--format", fmt, "--no-import", cwd=example_repo)
    assert result.exit_code == 1, result.stderr
    assert result.stdout == snapshot


def test_example_capabilities_after_the_change(example_repo: Path) -> None:
    doc = run_cli("capabilities", example_repo, "--format", "json").json()
    entry = {c["capability"]: c for c in doc["workers"][0]["capabilities"]}
    assert doc["workers"][0]["name"] == "release_notes"
    write = entry["fs.write:project/docs/releases/**"]
    assert (write["path"], write["tool"], write["gate"]) == (["release_notes", "publisher"], "write_file", "allow")

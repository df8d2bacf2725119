"""`--record` warns when the run reads a path the project keeps in: labelled private (project.json
`flows.paths`, or by default) or denied by an approval rule; one warning per path, naming it and the
cassette, and the cassette's `alerts` lists them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.support.cli import run_cli, worker, write_project

SCRIPT = {"workers": {"main": [
    {"tool_calls": [{"tool": "read_file", "args": {"path": "docs/plan.md"}},
                    {"tool": "read_file", "args": {"path": "site/index.md"}}]},
    {"tool_calls": [{"tool": "read_file", "args": {"path": "./docs/plan.md"}},
                    {"tool": "read_file", "args": {"path": "keys/api.txt"}},
                    {"tool": "read_file", "args": {"path": "missing.txt"}}]},
    {"text": "done"},
]}}
FILES = {
    "project.json": {"version": 1, "name": "reads", "worker_files": ["*.worker"], "entry": {"worker": "main"},
                     "flows": {"paths": {"site": "published", "keys": "published"}}},
    "main.worker": worker("description: Reads.\ntoolsets: [filesystem_project]", "Read."),
    "guarded.worker": worker("description: Reads, but never keys.\ntoolsets: [filesystem_project]\n"
                             "approvals:\n  - deny read_file(path ~ 'keys/**')", "Read."),
    "docs/plan.md": "the plan\n",
    "site/index.md": "welcome\n",
    "keys/api.txt": "not for a cassette\n",
    "s.json": SCRIPT,
}


def test_reads_of_private_and_denied_paths_are_warned_once_and_listed(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", FILES)
    cassettes = root / "tests" / "cassettes"
    result = run_cli("run", root, "go", "--script", root / "s.json", "--record", cassettes)
    assert result.exit_code == 0, result.stderr
    cassette = cassettes / "main.json"
    warnings = [line for line in result.stderr.splitlines() if "warning: the run read" in line]
    assert warnings == [
        f"llm-do: warning: the run read docs/plan.md (labelled private, by read_file of main); what it returned is in "
        f"the cassette {cassette}",
        f"llm-do: warning: the run read keys/api.txt (denied by an approval rule of the project, by read_file of main); "
        f"what it returned is in the cassette {cassette}",
    ]
    data = json.loads(cassette.read_text())
    assert data["alerts"] == [
        {"path": "docs/plan.md", "why": "private", "tool": "read_file", "worker": "main"},
        {"path": "keys/api.txt", "why": "denied", "tool": "read_file", "worker": "main"},
    ]
    assert list(data)[0] == "alerts"  # first in the file: a reviewer sees it before the traffic


def test_a_run_that_reads_nothing_kept_in_has_no_alerts(tmp_path: Path) -> None:
    files = {**FILES, "s.json": {"workers": {"main": [
        {"tool_calls": [{"tool": "read_file", "args": {"path": "site/index.md"}}]}, {"text": "done"}]}}}
    root = write_project(tmp_path / "proj", files)
    result = run_cli("run", root, "go", "--script", root / "s.json", "--record", root / "rec")
    assert result.exit_code == 0, result.stderr
    assert "the run read" not in result.stderr
    assert "alerts" not in json.loads((root / "rec" / "main.json").read_text())


def test_a_path_takes_the_label_of_its_nearest_labelled_folder() -> None:
    from llm_do.bundle.flow import folder_label

    paths = {"docs/": "published", "docs/internal": "private", "inputs": "untrusted"}
    assert folder_label("docs/a.md", paths) == "published"
    assert folder_label("docs/internal/b.md", paths) == "private"
    assert folder_label("docs/internals.md", paths) == "published"  # a sibling named alike is not inside
    assert folder_label("inputs", paths) == "untrusted"
    assert folder_label("notes.md", paths) is None
    assert folder_label("notes.md", {".": "published"}) == "published"


CALL_BY_CALL = {
    **FILES,
    "cwd.worker": worker("description: Reads the cwd.\ntoolsets: [filesystem_cwd_ro]", "Read."),
    "docs.worker": worker("description: Reads docs.\ntoolsets:\n  - filesystem_project_ro: {path: docs}", "Read."),
    "archive.worker": worker("description: Reads the archive, never its secrets.\ntoolsets:\n"
                             "  - filesystem_project_ro: {path: archive}\napprovals:\n"
                             "  - deny read_file(path ~ 'secret/**')", "Read."),
}


def test_which_reads_are_private_or_denied_call_by_call(build: Callable[..., Path]) -> None:
    """`sensitive_reads` on its own: only a read tool's own grants count, a grant's folder places the
    path, a root outside the project takes the grant's labels, a denial is judged on the normalized
    path and only by rules of the same toolset rooted at the same folder."""
    from llm_do.runtime.bundle import load_bundle
    from llm_do.runtime.recording.sensitive_reads import sensitive_reads

    bundle = load_bundle(build(CALL_BY_CALL))
    assert sensitive_reads(bundle, "main", "write_file", {"path": "docs/plan.md", "content": "x"}) == []
    assert sensitive_reads(bundle, "main", "read_file", {"path": "docs/plan.md"}) == [("docs/plan.md", "private")]
    assert sensitive_reads(bundle, "main", "read_file", {"path": "site/index.md"}) == []
    assert sensitive_reads(bundle, "main", "read_file", {"path": "./keys/../keys/api.txt"}) == [("keys/api.txt", "denied")]
    assert sensitive_reads(bundle, "main", "read_file", {"path": "docs\\plan.md"}) == [("docs/plan.md", "private")]
    assert sensitive_reads(bundle, "main", "list_files", {}) == [(".", "private")]
    assert sensitive_reads(bundle, "cwd", "read_file", {"path": "site/index.md"}) == [("cwd/site/index.md", "private")]
    assert sensitive_reads(bundle, "docs", "read_file", {"path": "plan.md"}) == [("docs/plan.md", "private")]
    assert sensitive_reads(bundle, "docs", "read_file", {"path": "secret/a.txt"}) == [("docs/secret/a.txt", "private")]
    assert sensitive_reads(bundle, "archive", "read_file", {"path": "notes.txt"}) == [("archive/notes.txt", "private")]
    assert sensitive_reads(bundle, "nobody", "read_file", {"path": "docs/plan.md"}) == []


def test_a_file_attached_to_a_worker_call_is_judged_as_the_attaching_workers_read(build: Callable[..., Path]) -> None:
    from llm_do.runtime.bundle import load_bundle
    from llm_do.runtime.recording.sensitive_reads import attached_read

    bundle = load_bundle(build(CALL_BY_CALL))
    assert attached_read(bundle, "main", "./docs/plan.md") == ("docs/plan.md", "private")
    assert attached_read(bundle, "main", "docs\\plan.md") == ("docs/plan.md", "private")  # as Windows writes it
    assert attached_read(bundle, "main", "keys/api.txt") == ("keys/api.txt", "denied")
    assert attached_read(bundle, "main", "site/index.md") is None
    assert attached_read(bundle, "docs", "docs/plan.md") == ("docs/plan.md", "private")  # below its grant's folder
    assert attached_read(bundle, "docs", "keys/api.txt") is None  # no grant of it holds the file
    assert attached_read(bundle, "main", "../outside.txt") is None and attached_read(bundle, "nobody", "x") is None


def test_a_denial_elsewhere_is_judged_on_every_argument_of_the_read(build: Callable[..., Path]) -> None:
    """Another worker's rule on the same toolset denies long reads of logs/: the read is judged with
    all its arguments (its path normalized), so a long read is denied and a short one only private."""
    from llm_do.runtime.bundle import load_bundle
    from llm_do.runtime.recording.sensitive_reads import sensitive_reads

    bundle = load_bundle(build({
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "reader"}},
        "reader.worker": worker("toolsets: [filesystem_project_ro, careful]", "Read."),
        "careful.worker": worker("description: Reads logs briefly.\ntoolsets: [filesystem_project_ro]\napprovals:\n"
                                 "  - \"deny read_file(path ~ 'logs/**' and max_chars > 1000)\"", "Read."),
        "logs/a.txt": "x\n",
    }))
    assert sensitive_reads(bundle, "reader", "read_file", {"path": "./logs/a.txt", "max_chars": 5000}) == [("logs/a.txt", "denied")]
    assert sensitive_reads(bundle, "reader", "read_file", {"path": "logs/a.txt", "max_chars": 10}) == [("logs/a.txt", "private")]

"""The conformance cases of spec/conformance/, run through the real `llm-do` commands.

Each case is a directory holding a small project and `expected.json` (described in
spec/conformance/README.md). For every case this test copies the project to a temporary
directory, runs `llm-do lint --format json` and compares the diagnostics (code, file, line,
column, and related locations where the case gives them), then runs `llm-do build` and checks that
it succeeds or fails as expected; for a project that builds it checks the bundle facts and the
call graph the case lists. The lint output itself (messages and hints included) is snapshotted.

A case without Python is also built from a copy with a byte-order mark and CRLF line endings in
every text file: the diagnostics and the bundle must be the same (sources are normalized before
they are hashed, parsed and rendered).

The tests after the cases check language rules a case directory cannot hold (symbolic links),
`llm-do migrate` on the legacy case, and the attachment policy at run time.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from llm_do.bundle.schema import validate as validate_bundle
from llm_do.compiler.codes import RULES
from tests.support.cli import run_cli, worker, write_project

CASES_DIR = Path(__file__).resolve().parents[1] / "spec" / "conformance"
CASES = sorted(p for p in CASES_DIR.iterdir() if p.is_dir())
EXPECTED_KEYS = {"description", "spec", "diagnostics", "builds", "lint_args", "edges", "bundle", "bundle_absent"}
TEXT_SUFFIXES = {".worker", ".agent", ".json", ".j2", ".md", ".txt", ".env"}


def _expected(case: Path) -> dict[str, Any]:
    expected = json.loads((case / "expected.json").read_text(encoding="utf-8"))
    unknown = set(expected) - EXPECTED_KEYS
    assert not unknown, f"{case.name}/expected.json: unknown keys {sorted(unknown)}"
    assert expected.get("description"), f"{case.name}/expected.json: say what the case is about in `description`"
    assert "diagnostics" in expected, f"{case.name}/expected.json: `diagnostics` is required (an empty list for none)"
    return expected


def _copy(case: Path, dest: Path) -> Path:
    shutil.copytree(case, dest, ignore=shutil.ignore_patterns("expected.json", "bundle.lock", "__pycache__"), symlinks=True)
    return dest


def _has_python(case: Path) -> bool:
    return any(case.rglob("*.py"))


def _pointer(doc: Any, pointer: str) -> Any:
    """RFC 6901: `/workers/main/tools` -> doc["workers"]["main"]["tools"]; KeyError when absent."""
    assert pointer.startswith("/"), f"not a JSON pointer: {pointer!r}"
    for token in pointer[1:].split("/"):
        token = token.replace("~1", "/").replace("~0", "~")
        doc = doc[int(token)] if isinstance(doc, list) else doc[token]
    return doc


def _located(d: dict[str, Any]) -> tuple:
    return (d["file"], d["line"] or 0, d["column"] or 0, d["code"])


def _lint(cwd: Path, name: str, args: list[str]) -> dict[str, Any]:
    result = run_cli("lint", name, "--format", "json", *args, cwd_to=cwd)
    assert "Traceback" not in result.stderr, result.stderr
    assert result.exit_code in (0, 1), f"lint exited {result.exit_code}: {result.stderr}"
    doc = result.json()
    errors = [d for d in doc["diagnostics"] if d["severity"] == "error"]
    assert result.exit_code == (1 if errors else 0), "lint exits 1 exactly when there are errors"
    return doc


def _compare_diagnostics(actual_rows: list[dict[str, Any]], expected_rows: list[dict[str, Any]]) -> None:
    actual = sorted(actual_rows, key=_located)
    expected = sorted(expected_rows, key=_located)
    shown = [{k: d[k] for k in ("code", "file", "line", "column")} for d in actual]
    assert [_located(d) for d in actual] == [_located(d) for d in expected], (
        "diagnostics differ; lint reported:\n" + json.dumps(shown, indent=2) + "\nmessages:\n"
        + "\n".join(f"  {d['code']} {d['file']}:{d['line']}:{d['column']} {d['message']}" for d in actual)
    )
    for got, want in zip(actual, expected):
        if "related" in want:
            related = [{k: r[k] for k in ("file", "line", "column")} for r in got["related"]]
            assert related == want["related"], f"related locations of {got['code']} at {got['file']}:{got['line']}"
        assert got["severity"] == RULES[got["code"]].severity
        assert got["file"], "file is never empty"


def _crlf_bom_copy(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, symlinks=True)
    for path in dest.rglob("*"):
        if path.is_file() and (path.suffix in TEXT_SUFFIXES or path.name.startswith(".env")):
            text = path.read_bytes().decode("utf-8")
            path.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))
    return dest


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
@pytest.mark.process
def test_conformance_case(case: Path, tmp_path: Path, snapshot) -> None:
    expected = _expected(case)
    root = _copy(case, tmp_path / case.name)

    lint = _lint(tmp_path, case.name, expected.get("lint_args", []))
    _compare_diagnostics(lint["diagnostics"], expected["diagnostics"])

    if not expected.get("builds", False) and _has_python(case):
        assert lint["summary"]["errors"], "a case that does not build has errors"
        assert lint == snapshot
        return  # its build would import the Python again only to fail the same way
    build = run_cli("build", case.name, cwd_to=tmp_path)
    assert "Traceback" not in build.stderr, build.stderr
    lock = root / "bundle.lock"
    if not expected.get("builds", False):
        assert build.exit_code == 1, f"the build should fail: {build.stderr}"
        assert not lock.exists(), "a failed build writes no bundle"
        assert not {"edges", "bundle", "bundle_absent"} & set(expected), "bundle facts need `builds: true`"
    else:
        assert build.exit_code == 0, f"the build should succeed: {build.stderr}"
        data = json.loads(lock.read_bytes())
        validate_bundle(data)
        for pointer, value in expected.get("bundle", {}).items():
            try:
                actual = _pointer(data, pointer)
            except (KeyError, IndexError) as exc:
                raise AssertionError(f"{pointer} is not in the bundle") from exc
            assert actual == value, f"{pointer}: {json.dumps(actual)} != expected {json.dumps(value)}"
        for pointer in expected.get("bundle_absent", []):
            with pytest.raises((KeyError, IndexError)):
                _pointer(data, pointer)
        if "edges" in expected:
            graph = run_cli("graph", lock, "--format", "json")
            assert graph.exit_code == 0, graph.stderr
            assert graph.json()["edges"] == expected["edges"]

    assert lint == snapshot


@pytest.mark.parametrize("case", [c for c in CASES if not _has_python(c)],
                         ids=[c.name for c in CASES if not _has_python(c)])
def test_conformance_case_with_bom_and_crlf(case: Path, tmp_path: Path) -> None:
    """Line endings and byte-order marks change neither the diagnostics nor the bundle."""
    expected = _expected(case)
    plain = _copy(case, tmp_path / "plain" / case.name)
    crlf = _crlf_bom_copy(plain, tmp_path / "crlf" / case.name)

    lint = _lint(crlf.parent, case.name, expected.get("lint_args", []))
    _compare_diagnostics(lint["diagnostics"], expected["diagnostics"])
    if expected.get("builds", False):
        assert run_cli("build", plain).exit_code == 0
        assert run_cli("build", crlf).exit_code == 0
        assert (crlf / "bundle.lock").read_bytes() == (plain / "bundle.lock").read_bytes()


def test_every_case_is_listed_in_the_conformance_readme() -> None:
    readme = (CASES_DIR / "README.md").read_text(encoding="utf-8")
    missing = [c.name for c in CASES if f"`{c.name}`" not in readme]
    assert not missing, f"spec/conformance/README.md does not list {missing}"


# --- rules a case directory cannot hold


@pytest.mark.parametrize("listing", ["path", "pattern", "implicit"])
def test_worker_file_linked_out_of_the_root_is_f002(tmp_path: Path, listing: str) -> None:
    """language.md#worker_files: a worker file that is a symbolic link leading out of the project
    root is F002, whether a path names it, a pattern matches it or the implicit project finds it;
    never a crash, never silently dropped."""
    outside = write_project(tmp_path / "outside", {"stray.worker": worker("", "Outside.")})
    files: dict[str, Any] = {"main.worker": worker("", "Main.")}
    if listing != "implicit":
        entry = "stray.worker" if listing == "path" else "*.worker"
        files["project.json"] = {"version": 1, "worker_files": ["main.worker", entry]}
    root = write_project(tmp_path / "project", files)
    os.symlink(outside / "stray.worker", root / "stray.worker")

    result = run_cli("lint", root, "--format", "json")
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    assert result.exit_code == 1, result.stderr
    found = [(d["code"], d["file"]) for d in result.json()["diagnostics"]]
    assert found == [("F002", "main.worker" if listing == "implicit" else "project.json")]
    assert run_cli("build", root).exit_code == 1


# --- llm-do migrate


@pytest.mark.process
def test_migrating_the_legacy_case_leaves_nothing_of_the_era(tmp_path: Path) -> None:
    """legacy.md: after `llm-do migrate` the project has only .worker files and builds with no
    diagnostic: aliases rewritten (the module.Class reference included), cycles declared."""
    root = _copy(CASES_DIR / "03-legacy-agent", tmp_path / "legacy")
    result = run_cli("migrate", root)
    assert "Traceback" not in result.stderr
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in root.glob("*.agent")) == []
    assert sorted(p.name for p in root.glob("*.worker")) == ["critic.worker", "writer.worker"]
    lint = run_cli("lint", root, "--format", "json")
    assert lint.json()["diagnostics"] == []
    assert run_cli("build", root).exit_code == 0
    bundle = json.loads((root / "bundle.lock").read_bytes())
    assert bundle["entry"]["worker"] == "writer"
    assert {n: (w["recursive"], w["calls"]) for n, w in bundle["workers"].items()} == {
        "writer": (True, ["critic"]), "critic": (True, ["writer"])}
    assert bundle["workers"]["writer"]["input"]["qualname"] == "Topic"


def test_migrate_renames_entry_name_as_its_hint_says(tmp_path: Path) -> None:
    """legacy.md: `entry.name` (hint: rename it to "worker") becomes `entry.worker`."""
    root = write_project(tmp_path / "p", {
        "project.json": {"version": 1, "agent_files": ["*.agent"], "entry": {"name": "boss", "input": {"input": "go"}}},
        "boss.agent": worker("name: boss", "Lead."),
    })
    result = run_cli("migrate", root)
    assert result.exit_code == 0, result.stderr
    manifest = json.loads((root / "project.json").read_text())
    assert manifest["entry"] == {"worker": "boss", "args": {"input": "go"}}
    assert run_cli("build", root).exit_code == 0


# --- the attachment policy of the front matter, at run time


def test_attachment_suffixes_match_like_the_stdlib_suffixes(tmp_path: Path) -> None:
    """language.md#attachments: a suffix matches case-insensitively at the end of the file name,
    with or without its leading dot (`pdf` means `.pdf`; `.tar.gz` works)."""
    root = write_project(tmp_path / "p", {
        "main.worker": worker("""
            model: test
            attachments:
              max_count: 2
              allowed_suffixes: [pdf, .tar.gz]
        """, "Read the files."),
        "report.PDF": "not really a pdf",
        "data.tar.gz": "not really an archive",
        "script.json": {"workers": {"main": [{"text": "read"}]}},
    })
    assert run_cli("build", root).exit_code == 0
    ok = run_cli("exec", root / "bundle.lock", "read these", "--attach", root / "report.PDF",
                 "--attach", root / "data.tar.gz", "--script", root / "script.json")
    assert "Traceback" not in ok.stderr
    assert (ok.exit_code, ok.stdout.strip()) == (0, "read"), ok.stderr
    (root / "notes.txt").write_text("text")
    refused = run_cli("exec", root / "bundle.lock", "read this", "--attach", root / "notes.txt",
                      "--script", root / "script.json")
    assert refused.exit_code == 2 and "notes.txt" in refused.stderr, refused.stderr

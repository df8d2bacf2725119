"""Loading a bundle: what `llm-do exec` refuses (exit 3, one line, rebuild hint), what it reads
(the bundle and the Python it names, nothing else) and what it imports (no compiler, no rich/yaml)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from llm_do.bundle.canonical import seal
from tests.support.cli import one_line_error, run_cli, worker
from tests.support.processes import IMPORT_PROBE

SIMPLE = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker("", "Say hello to the user."),
}


def assert_refused(result, *words: str) -> str:
    assert result.exit_code == 3, (result.exit_code, result.stdout, result.stderr)
    line = one_line_error(result)
    assert "llm-do build" in line, line
    for word in words:
        assert word in line, line
    assert result.stdout == ""
    return line


def test_a_fresh_bundle_runs(build) -> None:
    bundle = build(SIMPLE)
    result = run_cli("exec", bundle, "hi", "--model", "test")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "success (no tool calls)"


def test_one_changed_byte_of_an_instruction_is_refused(build) -> None:
    bundle = build(SIMPLE)
    data = bundle.read_bytes()
    assert data.count(b"Say hello") == 1
    bundle.write_bytes(data.replace(b"Say hello", b"Say jello"))
    line = assert_refused(run_cli("exec", bundle, "hi", "--model", "test"), "digest")
    assert str(bundle.name) in line


def test_a_truncated_bundle_is_refused(build) -> None:
    bundle = build(SIMPLE)
    data = bundle.read_bytes()
    for cut in (len(data) // 2, len(data) - 2, 40):
        bundle.write_bytes(data[:cut])
        assert_refused(run_cli("exec", bundle, "hi", "--model", "test"))


def test_a_bundle_that_is_not_text_is_refused(build) -> None:
    bundle = build(SIMPLE)
    bundle.write_bytes(b"\xff\xfe\x00garbage")
    assert_refused(run_cli("exec", bundle, "hi", "--model", "test"))


def test_an_unknown_bundle_format_is_refused_even_when_sealed(build) -> None:
    bundle = build(SIMPLE)
    doc = json.loads(bundle.read_text(encoding="utf-8"))
    doc["bundle_format"] = 99
    bundle.write_bytes(seal(doc))  # the digest verifies: only the format is wrong
    assert_refused(run_cli("exec", bundle, "hi", "--model", "test"), "99")


def test_a_missing_bundle_is_a_usage_error(tmp_path: Path) -> None:
    """Exit 2, not 3: refusal is for a bundle that exists and cannot be run."""
    for args, where in [((tmp_path / "nothere.lock", "hi"), tmp_path),
                        # The default ./bundle.lock, absent: the lone positional is a prompt.
                        (("hi",), tmp_path)]:
        result = run_cli("exec", *args, "--model", "test", cwd_to=where)
        assert result.exit_code == 2, (result.exit_code, result.stderr)
        line = one_line_error(result)
        assert "no such bundle" in line and "llm-do build" in line, line
    assert "nothere.lock" in one_line_error(run_cli("exec", tmp_path / "nothere.lock", "hi", "--model", "test"))
    assert "bundle.lock" in one_line_error(run_cli("exec", "hi", "--model", "test", cwd_to=tmp_path))


@pytest.mark.process
def test_a_python_source_changed_since_the_build_is_stale(py_bundle: Path) -> None:
    tools = py_bundle.parent / "tools.py"
    tools.write_text(tools.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert_refused(run_cli("exec", py_bundle, "hi", "--model", "test"), "stale", "tools.py")


@pytest.mark.process
def test_a_module_imported_by_the_tools_is_verified_too(py_bundle: Path) -> None:
    """promptfmt.py is not in python_files, but tools.py imports it: editing it makes the lock stale."""
    helper = py_bundle.parent / "promptfmt.py"
    helper.write_text('SEPARATOR = " / "\n', encoding="utf-8")
    assert_refused(run_cli("exec", py_bundle, "hi", "--model", "test"), "stale", "promptfmt.py")


@pytest.mark.process
def test_a_deleted_python_source_is_stale(py_bundle: Path) -> None:
    (py_bundle.parent / "schemas.py").unlink()
    assert_refused(run_cli("exec", py_bundle, "hi", "--model", "test"), "schemas.py")


@pytest.mark.process
def test_line_endings_of_a_python_source_do_not_make_it_stale(py_bundle: Path, script) -> None:
    """A checkout with CRLF line endings is the same source (the hashes are over normalized text)."""
    tools = py_bundle.parent / "tools.py"
    tools.write_bytes(tools.read_bytes().replace(b"\n", b"\r\n"))
    s = script({"workers": {"main": [{"tool_calls": [{"tool": "add", "args": {"a": 1, "b": 2}}]}, {"text": "ok"}]}})
    result = run_cli("exec", py_bundle, "hi", "--script", s, "--approve-all")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_the_runtime_never_reads_worker_files_or_the_manifest(build, script) -> None:
    bundle = build(SIMPLE)
    (bundle.parent / "main.worker").unlink()
    (bundle.parent / "project.json").unlink()
    s = script({"workers": {"main": [{"text": "still here"}]}})
    result = run_cli("exec", bundle, "hi", "--script", s)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "still here"


def test_an_edited_worker_file_stops_exec_unless_as_built(build) -> None:
    """.worker files are compiled into the bundle, which is no longer their build: refused (exit 3,
    tests/runtime/test_lock_sources.py), or run as built with --as-built."""
    bundle = build(SIMPLE)
    (bundle.parent / "main.worker").write_text("---\nmodel: nonsense\n---\nbroken {{\n", encoding="utf-8")
    assert_refused(run_cli("exec", bundle, "hi", "--model", "test"), "main.worker", "--as-built")
    result = run_cli("exec", bundle, "hi", "--model", "test", "--as-built")
    assert result.exit_code == 0, result.stderr


def test_the_bundle_root_is_relative_to_the_bundle(build, tmp_path: Path, script) -> None:
    """A bundle written elsewhere (`build -o`) runs against the project it was built from."""
    root = build(
        {
            "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
            "main.worker": worker("toolsets: [filesystem_project_ro]", "Read."),
            "notes.txt": "project notes\n",
        }
    ).parent
    out = tmp_path / "elsewhere" / "deep" / "app.lock"
    out.parent.mkdir(parents=True)
    assert run_cli("build", root, "-o", out).exit_code == 0
    events = tmp_path / "events.jsonl"
    s = script({"workers": {"main": [{"tool_calls": [{"tool": "read_file", "args": {"path": "notes.txt"}}]}, {"text": "ok"}]}})
    result = run_cli("exec", out, "hi", "--script", s, "--events", events, cwd_to=tmp_path)
    assert result.exit_code == 0, result.stderr
    returned = [json.loads(line) for line in events.read_text().splitlines() if '"tool_returned"' in line]
    assert returned[0]["outcome"] == "ok"
    assert "project notes" in returned[0]["result"]


@pytest.mark.process
def test_exec_imports_nothing_of_the_compiler(build, tmp_path: Path) -> None:
    bundle = build(
        {
            "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"},
                             "defaults": {"model": "openai:gpt-4o"}},
            "main.worker": worker("toolsets: [filesystem_project, shell_readonly, helper]", "Work."),
            "helper.worker": worker("toolsets: [filesystem_project_ro]", "Help."),
        }
    )
    s = tmp_path / "s.json"
    s.write_text(json.dumps({"workers": {
        "main": [{"tool_calls": [{"tool": "helper", "args": {"input": "x"}},
                                 {"tool": "shell", "args": {"command": "ls"}}]}, {"text": "done"}],
        "helper": [{"tool_calls": [{"tool": "list_files", "args": {}}]}, {"text": "listed"}],
    }}))
    env = {k: v for k, v in os.environ.items() if k != "LLM_DO_MODEL"}
    argv = ["exec", str(bundle), "hi", "--model", "test", "--next", "exec", str(bundle), "hi", "--script", str(s)]
    proc = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE, *argv], capture_output=True, text=True, env=env,
        stdin=subprocess.DEVNULL, timeout=120,
    )
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
    assert line, proc.stdout + proc.stderr
    codes, heavy, providers = eval(line[0][len("RESULT "):])
    assert codes == [0, 0], proc.stderr
    assert "done" in proc.stdout  # the scripted run got to its end
    assert heavy == [], f"exec imported {heavy}"
    # The project default is an OpenAI model, but both runs replaced it: no provider was imported.
    assert providers == [], f"exec imported {providers}"


@pytest.mark.process
def test_a_write_checks_the_protected_paths_without_yaml(build, tmp_path: Path) -> None:
    """Every write is checked against what no tool may touch (`toolkit.protected`), including the
    files the project's test cases name; the case files are read as text, and parsed (YAML) only
    when the written file's name occurs in one of them."""
    bundle = build(
        {
            "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
            "main.worker": worker("toolsets: [filesystem_project]\napprovals: [allow write_file]", "Work."),
            "tests/cases.yaml": "cases:\n  - name: a\n    cassette: cassettes/a.json\n",
        }
    )
    lock = bundle.read_bytes()
    s = tmp_path / "s.json"
    s.write_text(json.dumps({"workers": {"main": [
        {"tool_calls": [{"tool": "write_file", "args": {"path": "notes/out.md", "content": "x"}},
                        {"tool": "write_file", "args": {"path": "bundle.lock", "content": "forged"}}]},
        {"text": "done"}]}}))
    proc = subprocess.run(
        [sys.executable, "-c", IMPORT_PROBE, "exec", str(bundle), "hi", "--script", str(s)], capture_output=True,
        text=True, stdin=subprocess.DEVNULL, timeout=120,
    )
    line = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
    assert line, proc.stdout + proc.stderr
    codes, heavy, _ = eval(line[0][len("RESULT "):])
    assert codes == [0], proc.stderr
    assert (bundle.parent / "notes" / "out.md").read_text() == "x"
    assert bundle.read_bytes() == lock
    assert heavy == [], f"exec imported {heavy}"

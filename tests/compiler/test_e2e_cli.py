"""The installed `llm-do` executable, run as a user runs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import worker, write_project

pytestmark = [pytest.mark.process, pytest.mark.e2e]

LLM_DO = shutil.which("llm-do")


def llm_do(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    assert LLM_DO, "the llm-do console script is not on PATH"
    env = {k: v for k, v in os.environ.items() if k != "LLM_DO_MODEL"}
    return subprocess.run([LLM_DO, *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=120, env=env)


PROJECT = {
    "project.json": {
        "version": 1,
        "worker_files": ["*.worker"],
        "entry": {"worker": "main", "args": {"input": "hello"}},
    },
    "main.worker": worker("model: test\ntoolsets:\n  - filesystem_project_ro\n  - helper", "Answer."),
    "helper.worker": worker("description: Helps", "Help."),
}


def test_build_check_and_lint(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", PROJECT)

    stale = llm_do("build", "--check", cwd=root)
    assert stale.returncode == 1
    assert "bundle.lock" in stale.stderr

    built = llm_do("build", cwd=root)
    assert built.returncode == 0, built.stderr
    assert json.loads((root / "bundle.lock").read_text())["entry"]["worker"] == "main"

    current = llm_do("build", "--check", "proj", cwd=tmp_path)
    assert current.returncode == 0, current.stderr

    (root / "helper.worker").write_text(worker("description: Helps", "Help!"))
    changed = llm_do("build", "--check", cwd=root)
    assert changed.returncode == 1
    assert "helper.worker" in changed.stderr

    lint = llm_do("lint", "proj", "--format", "json", cwd=tmp_path)
    assert lint.returncode == 0, lint.stderr
    doc = json.loads(lint.stdout)
    assert doc["diagnostics"] == []


def test_lint_json_reports_a_broken_project(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", dict(PROJECT, **{"helper.worker": worker("toolsets: [helpr]", "Help.")}))
    lint = llm_do("lint", "--format", "json", cwd=root)
    assert lint.returncode == 1
    (diag,) = json.loads(lint.stdout)["diagnostics"]
    assert (diag["code"], diag["file"], diag["line"], diag["column"]) == ("N003", "helper.worker", 2, 12)
    assert set(diag) >= {"code", "severity", "message", "file", "line", "column", "hint", "project"}
    build = llm_do("build", cwd=root)
    assert build.returncode == 1
    assert not (root / "bundle.lock").exists()
    assert "Traceback" not in build.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("build", "no/such/dir"),
        ("build", "--check", "no/such/dir"),
        ("lint", "no/such/dir"),
        ("graph", "bundle.lock"),
        ("explain", "X999"),
    ],
    ids=["build", "check", "lint", "graph-bad-lock", "explain"],
)
def test_user_errors_exit_2_without_traceback(tmp_path: Path, args: tuple[str, ...]) -> None:
    (tmp_path / "bundle.lock").write_text("{not a lock}\n")
    proc = llm_do(*args, cwd=tmp_path)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip()
    assert len(proc.stderr.strip().splitlines()) == 1


def test_broken_front_matter_has_no_traceback(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", {"main.worker": "---\nmodel: [unclosed\n---\nHi.\n"})
    proc = llm_do("build", cwd=root)
    assert proc.returncode == 1
    assert "P001" in proc.stderr
    assert "Traceback" not in proc.stderr


ONLY_WHEN_USED = (
    # introspection and MCP listing: only for a project with Python or MCP servers
    "llm_do.compiler.facts.answers", "llm_do.compiler.facts.subprocess_runner", "llm_do.compiler.facts.static_reader",
    # the MCP server checks and the entry function's resolution: only for a project with servers, an entry function
    "llm_do.compiler.stages.mcp_servers", "llm_do.compiler.stages.resolve_entry",
    # stdlib toolsets the project's workers do not use (it uses filesystem_project_ro)
    "llm_do.stdlib.shell.descriptor", "llm_do.stdlib.shell.commands", "llm_do.stdlib.worker_create.descriptor",
    "llm_do.stdlib.worker_create.definition",
    # did-you-mean hints only for a misspelt name
    "difflib",
    # the approval rule grammar, condition checks and rule confinement: only for workers with approval rules
    "llm_do.compiler.approvals.nodes", "llm_do.compiler.approvals.grammar", "llm_do.compiler.approvals.check",
    "llm_do.compiler.approvals.params", "llm_do.compiler.approvals.lower", "llm_do.compiler.analysis.flows.rule_confinement",
    # the run options (frozen dataclasses, input handling): not for the commands that compile
    "llm_do.cli.options", "llm_do.cli.inputs",
    # the code index (`ast` fingerprints and effects of Python tools): only for a project with Python
    "llm_do.compiler.code.fingerprint", "llm_do.compiler.code.module_code", "llm_do.compiler.code.project_index",
    # a worker's edits kept and recalled (`build.local_edits`): only with the user's cache (LLM_DO_NO_CACHE here)
    "llm_do.compiler.build.local_edits",
)
"""Modules a compile loads only for a project that uses them."""

ONLY_FOR_BUILD = ("llm_do.compiler.stages.lower", "llm_do.compiler.stages.emit", "llm_do.compiler.cache.splice")
"""Modules that build and write the bundle document: `lint` writes none."""

COMPILE_PROBE = f"LAZY = {ONLY_WHEN_USED + ONLY_FOR_BUILD!r}\n" + """
import sys
from llm_do.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
loaded = sorted({m.split(".")[0] for m in sys.modules} & {"pydantic_ai", "mcp", "fastmcp", "dbos", "sqlalchemy",
                                                          "rich", "httpx", "openai", "anthropic", "llm_do",
                                                          "jinja2", "lark"}
                | {m for m in sys.modules if m.startswith("llm_do.runtime")}
                | {m for m in sys.modules if m in LAZY})
import tokenize
if tokenize._compile.cache_info().currsize:  # a builtin's signature read from text: `default_factory=list`
    loaded.append("tokenize-regex")
print("RESULT", code, " ".join(loaded))
"""

WITH_A_WARNING = {**PROJECT, "orphan.worker": worker("description: Unused", "Hi.")}


@pytest.mark.parametrize("files", [PROJECT, WITH_A_WARNING], ids=["clean", "a-warning"])
@pytest.mark.parametrize("command", ["build", "lint"])
def test_compiling_a_project_without_python_or_mcp_loads_no_runtime_library(tmp_path: Path, command: str,
                                                                          files: dict) -> None:
    """The compiler loads only what a project uses: no pydantic-ai, MCP client, DBOS, no Jinja for
    instructions without template syntax, no lark (JSON positions) without a JSON diagnostic, no
    rich for diagnostics printed without a terminal, no introspection records without Python and
    no descriptor of a stdlib toolset no worker lists, no difflib without a misspelt name, no
    approval rule grammar without approval rules, no lowering for `lint`, and no
    signature of a builtin read from text (`tokenize`'s large regular expression: pydantic reads
    the signature of every `default_factory`; a full compile: the build record is bypassed)."""
    root = write_project(tmp_path / "proj", files)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "LLM_DO_NO_CACHE": "1"}
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        env.pop(name, None)
    proc = subprocess.run([sys.executable, "-c", COMPILE_PROBE, command, str(root)], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL, env=env)
    [line] = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
    code, *loaded = line.split()[1:]
    assert code == "0", proc.stderr
    assert set(loaded) <= {"llm_do", "llm_do.runtime", "llm_do.runtime.args"} | set(ONLY_FOR_BUILD if command == "build" else ()), loaded
    assert ("G003 warning" in proc.stderr) == (files is WITH_A_WARNING), proc.stderr


ONE_WORKER = {
    "project.json": {"version": 1, "worker_files": ["*.worker"]},
    "main.worker": worker("model: test\ntoolsets:\n  - filesystem_project_ro", "Answer."),
}
"""No entry.args and no worker that calls another: nothing to validate against the run's input models."""

INPUT_AND_YAML_PROBE = """
import sys
from llm_do.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print("RESULT", code, " ".join(sorted(m for m in sys.modules if m.split(".")[0] == "yaml" or m == "llm_do.runtime.args")))
"""


def test_lint_loads_the_run_input_models_and_yaml_only_when_it_uses_them(tmp_path: Path) -> None:
    """`PromptInput` (llm_do.runtime.args) only for entry.args, a call of a prompt worker or a
    lock's worker node; PyYAML only for front matter the last build did not keep
    (`cache.front_matter_cache`): the first lint parses it, the second (of an edited body, so
    the first lint's record no longer holds) takes it from the cache."""
    root = write_project(tmp_path / "proj", ONE_WORKER)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("LLM_DO_NO_CACHE", None)
    run = {"capture_output": True, "text": True, "timeout": 120, "stdin": subprocess.DEVNULL, "env": env}
    loaded = []
    for body in ("Answer.", "Answer briefly."):
        (root / "main.worker").write_text(worker("model: test\ntoolsets:\n  - filesystem_project_ro", body))
        proc = subprocess.run([sys.executable, "-c", INPUT_AND_YAML_PROBE, "lint", str(root)], **run)
        [line] = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
        code, *modules = line.split()[1:]
        assert code == "0" and "no problems found" in proc.stderr, proc.stderr
        loaded.append(modules)
    first, second = loaded
    assert "yaml" in first and "llm_do.runtime.args" not in first
    assert second == []


RECORD_PROBE = """
import sys
from llm_do.cli.main import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"pydantic", "pydantic_core", "yaml", "jinja2", "lark", "rich"}
               | {m for m in sys.modules if m.startswith(("llm_do.compiler.pipeline", "llm_do.compiler.stages"))})
print("RESULT", code, " ".join(heavy))
"""


@pytest.mark.parametrize("command", [["build", "--check"], ["build"], ["lint"]])
def test_an_unchanged_project_is_checked_built_and_linted_without_loading_the_compiler(tmp_path: Path,
                                                                                      command: list[str]) -> None:
    """The build record (the lint record, after a first lint) answers: no pydantic, YAML, Jinja or
    compiler stage is imported."""
    root = write_project(tmp_path / "proj", PROJECT)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("LLM_DO_NO_CACHE", None)
    run = {"capture_output": True, "text": True, "timeout": 120, "stdin": subprocess.DEVNULL, "env": env}
    first = "lint" if command == ["lint"] else "build"
    assert subprocess.run([sys.executable, "-m", "llm_do.cli.main", first, str(root)], **run).returncode == 0
    proc = subprocess.run([sys.executable, "-c", RECORD_PROBE, *command, str(root)], **run)
    [line] = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
    code, *loaded = line.split()[1:]
    assert code == "0", proc.stderr
    assert ("no problems found" if command == ["lint"] else "is up to date") in proc.stderr
    assert loaded == []


def test_a_worker_edit_is_built_from_the_last_lock_without_pydantic_or_the_compiler(tmp_path: Path) -> None:
    """After an edit of a worker's description, model and body, `build` writes the lock from the
    last one (`build.local_edits`): YAML reads the edited front matter, emit's atomic
    write writes it, and no pydantic, Jinja or other compiler stage is imported."""
    root = write_project(tmp_path / "proj", PROJECT)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    run = {"capture_output": True, "text": True, "timeout": 120, "stdin": subprocess.DEVNULL, "env": env}
    assert subprocess.run([sys.executable, "-m", "llm_do.cli.main", "build", str(root)], **run).returncode == 0
    (root / "helper.worker").write_text(worker("description: 'Helps: more'\nmodel: openai:gpt-4o", "Help, edited."))
    proc = subprocess.run([sys.executable, "-c", RECORD_PROBE, "build", str(root)], **run)
    [line] = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
    code, *loaded = line.split()[1:]
    assert code == "0", proc.stderr
    assert "written" in proc.stderr
    assert loaded == ["llm_do.compiler.stages", "llm_do.compiler.stages.emit", "yaml"]


def test_an_unchanged_project_prints_its_recorded_diagnostics_without_pydantic_or_rich(tmp_path: Path) -> None:
    """What the first build said (a warning here) is said again from the build record, as text
    without a terminal: no pydantic to read it back, no rich to print it."""
    root = write_project(tmp_path / "proj", WITH_A_WARNING)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    run = {"capture_output": True, "text": True, "timeout": 120, "stdin": subprocess.DEVNULL, "env": env}
    first = subprocess.run([sys.executable, "-m", "llm_do.cli.main", "build", str(root)], **run)
    assert first.returncode == 0 and "warning" in first.stderr, first.stderr
    proc = subprocess.run([sys.executable, "-c", RECORD_PROBE, "build", str(root)], **run)
    [line] = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
    code, *loaded = line.split()[1:]
    assert code == "0", proc.stderr
    assert loaded == []
    assert proc.stderr.replace("is up to date", "written") == first.stderr

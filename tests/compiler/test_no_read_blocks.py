"""No read of a project file blocks (issue 31): a named pipe, or a link to a device, planted where
llm-do reads (the modules the introspection child imports, their bytecode, data their code reads,
what the introspection cache checks, an MCP server's script, what a run verifies, a test case) ends
in a diagnostic or a refusal naming the path within seconds, and the time limits on the import and
on the MCP listing end in one naming the line or the server, with no process left behind. (The
files the compiler reads itself, workers, templates, `file()`, the manifest, are in
test_robustness_files.py; attachments in tests/runtime/test_attachments.py.)"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llm_do.bundle.mcp_sources import changed_server_files
from llm_do.compiler.facts import fork_client
from tests.compiler.test_robustness_files import within
from tests.support.cli import run_cli, worker, write_project
from tests.support.lint import ANY, lint
from tests.support.processes import alive

pytestmark = [pytest.mark.process, pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")]

SECONDS = 30.0
"""A hang is forever; a loaded shared machine takes some seconds."""
LISTING_SECONDS = 90.0
"""An MCP listing: starting the listing process (it imports the `mcp` client), the limits, stopping the server."""
KINDS = {"fifo": "a named pipe (FIFO), not a regular file", "dev_zero": "a character device, not a regular file"}

TOOLS = '''
    import helper

    with open("data.txt") as f:
        GREETING = f.read().strip()


    def shout(text: str) -> str:
        """Shout the text."""
        return helper.up(text)


    TOOLS = [shout]
'''


def _project(root: Path, **files: str) -> Path:
    return write_project(root, {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"], "entry": {"worker": "main"}},
        "main.worker": worker("model: test\ntools: [shout]", "Shout."),
        "tools.py": TOOLS,
        "helper.py": "def up(text: str) -> str:\n    return text.upper()\n",
        "data.txt": "hello\n",
        **files,
    })


def _plant(path: Path, kind: str) -> None:
    """A named pipe, or a link to /dev/zero (which never ends), at `path`."""
    if path.is_symlink() or path.exists():
        path.unlink()
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")


def _left_in(root: Path) -> list[int]:
    """Processes still running in `root` (the introspection child and MCP servers start there)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                cwd = os.readlink(entry / "cwd")
            except OSError:
                continue
            if (cwd == str(root) or cwd.startswith(f"{root}{os.sep}")) and alive(int(entry.name)):
                found.append(int(entry.name))
    return found


@pytest.fixture(params=sorted(KINDS))
def kind(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    yield


def test_data_module_code_reads_is_refused_at_the_line_that_opens_it(tmp_path: Path, kind: str, cache: None) -> None:
    root = _project(tmp_path / "p")
    _plant(root / "data.txt", kind)
    result = within(SECONDS, lambda: lint(root), unblock=root / "data.txt" if kind == "fifo" else None)
    result.expect("Y001", "tools.py", 'open("data.txt")', column=ANY, mentions=(f"data.txt is {KINDS[kind]}",))


def test_a_module_whose_file_is_no_regular_file_is_named_where_the_import_passed_it_by(
        tmp_path: Path, kind: str, cache: None) -> None:
    root = _project(tmp_path / "p")
    _plant(root / "helper.py", kind)
    result = within(SECONDS, lambda: lint(root), unblock=root / "helper.py" if kind == "fifo" else None)
    result.expect("Y001", "tools.py", "import helper", column=ANY, mentions=(f"No module named 'helper' (helper.py is {KINDS[kind]})",))


def test_a_package_init_that_is_no_regular_file_is_named(tmp_path: Path, kind: str, cache: None) -> None:
    root = _project(tmp_path / "p", **{"tools.py": TOOLS.replace("import helper", "from helpers import helper"),
                                       "helpers/helper.py": "def up(text: str) -> str:\n    return text\n"})
    _plant(root / "helpers" / "__init__.py", kind)
    (root / "tools.py").write_text((root / "tools.py").read_text() + "\nfrom helpers import missing\n")
    result = within(SECONDS, lambda: lint(root), unblock=root / "helpers" / "__init__.py" if kind == "fifo" else None)
    result.expect("Y001", "tools.py", "from helpers import missing", column=ANY, mentions=(f"helpers/__init__.py is {KINDS[kind]}",))


def test_bytecode_that_is_no_regular_file_is_passed_by_for_its_source(tmp_path: Path, kind: str, cache: None) -> None:
    root = _project(tmp_path / "p")
    tag = sys.implementation.cache_tag
    _plant(root / "__pycache__" / f"helper.{tag}.pyc", kind)
    assert within(SECONDS, lambda: run_cli("build", root)).exit_code == 0
    assert "SHOUT" not in (root / "bundle.lock").read_text() and '"helper.py"' in (root / "bundle.lock").read_text()


def test_a_file_the_cache_checks_that_became_a_pipe_is_read_again_not_waited_on(tmp_path: Path, kind: str, cache: None) -> None:
    """The cache's checks hash what the last import read: a pipe there must fail its check, not hang the build."""
    root = _project(tmp_path / "p")
    assert run_cli("build", root).exit_code == 0
    _plant(root / "data.txt", kind)
    result = within(SECONDS, lambda: run_cli("build", root), unblock=root / "data.txt" if kind == "fifo" else None)
    assert result.exit_code == 1 and f"data.txt is {KINDS[kind]}" in result.stderr, result.stderr


BLOCKING = '''
    import os

    os.mkfifo("{pipe}")
    with open("{pipe}") as f:
        DATA = f.read()
'''


@pytest.mark.parametrize("forked", [True, False], ids=["forked", "fresh"])
def test_past_the_time_limit_the_import_is_named_at_the_line_it_was_running(
        tmp_path: Path, forked: bool, cache: None, monkeypatch: pytest.MonkeyPatch) -> None:
    pipe = tmp_path / "outside.fifo"  # outside the project: the child opens it, and waits
    root = _project(tmp_path / "p", **{"helper.py": BLOCKING.format(pipe=pipe)})
    limit = 5 if forked else 10  # time enough to reach the line: a fresh process imports pydantic first
    monkeypatch.setenv("LLM_DO_IMPORT_TIMEOUT", str(limit))
    if not forked:
        monkeypatch.setenv(fork_client.NO_FORK_SERVER_VARIABLE, "1")
    result = within(SECONDS, lambda: lint(root), unblock=pipe)
    result.expect("Y002", "helper.py", "with open", column=ANY, mentions=(f"took longer than {limit} s", "helper.py, line 4"))
    assert _left_in(root) == []


def _mcp_project(root: Path, servers: dict[str, str]) -> Path:
    return write_project(root, {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"},
                         "mcp_servers": {name: {"command": sys.executable, "args": [script]} for name, script in servers.items()}},
        "main.worker": worker("toolsets: [" + ", ".join(servers) + "]", "Use the tools."),
        "slow.py": "import time\ntime.sleep(600)\n",
    })


def test_a_server_started_with_a_pipe_is_not_started(tmp_path: Path, kind: str) -> None:
    root = _mcp_project(tmp_path / "p", {"srv": "server.py"})
    _plant(root / "server.py", kind)
    result = within(LISTING_SECONDS, lambda: lint(root), unblock=root / "server.py" if kind == "fifo" else None)
    result.expect("X001", "project.json", '"srv"', mentions=(f"'server.py' is {KINDS[kind]}: the server was not started",))
    assert _left_in(root) == []


def test_past_the_time_limits_the_mcp_listing_names_the_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _mcp_project(tmp_path / "p", {"slow": "slow.py"})
    monkeypatch.setenv("LLM_DO_MCP_START_TIMEOUT", "2")
    result = within(LISTING_SECONDS, lambda: lint(root))
    result.expect("X001", "project.json", '"slow"', mentions=("MCP server 'slow'", "did not list its tools within 2 s"))
    assert _left_in(root) == []

    monkeypatch.setenv("LLM_DO_MCP_START_TIMEOUT", "60")
    monkeypatch.setenv("LLM_DO_IMPORT_TIMEOUT", "4")
    root = _mcp_project(tmp_path / "q", {"slow": "slow.py", "after": "slow.py"})
    result = within(LISTING_SECONDS, lambda: lint(root))
    result.expect("X001", "project.json", '"slow"', mentions=("listing it took longer than 4 s",))
    result.expect("X001", "project.json", '"after"', mentions=("the time limit of 4 s passed while MCP server 'slow' was listed",))
    assert _left_in(root) == []


@pytest.fixture
def built(tmp_path: Path, cache: None) -> Path:
    root = _project(tmp_path / "built")
    assert run_cli("build", root).exit_code == 0
    return root


def test_a_run_refuses_a_python_source_that_became_a_pipe(built: Path, kind: str) -> None:
    _plant(built / "helper.py", kind)
    result = within(SECONDS, lambda: run_cli("exec", built / "bundle.lock", "hi"),
                    unblock=built / "helper.py" if kind == "fifo" else None)
    assert result.exit_code == 3 and f"refused: helper.py is {KINDS[kind]}" in result.stderr, result.stderr


def test_a_verify_key_that_is_a_pipe_is_a_usage_error(built: Path, tmp_path: Path, kind: str) -> None:
    pytest.importorskip("cryptography", reason="the `sign` extra (the test extra has it)")
    key = tmp_path / "key.pub"
    _plant(key, kind)
    result = within(SECONDS, lambda: run_cli("exec", built / "bundle.lock", "hi", "--verify", key),
                    unblock=key if kind == "fifo" else None)
    assert result.exit_code == 2 and f"cannot read the key ({KINDS[kind]})" in result.stderr, result.stderr


def test_a_lock_that_is_a_pipe_is_refused(tmp_path: Path, kind: str) -> None:
    lock = tmp_path / "bundle.lock"
    _plant(lock, kind)
    result = within(SECONDS, lambda: run_cli("exec", lock, "hi"), unblock=lock if kind == "fifo" else None)
    assert result.exit_code == 3 and f"it is {KINDS[kind]}" in result.stderr, result.stderr


def test_a_worker_file_that_became_a_pipe_is_a_changed_source_to_a_run(built: Path) -> None:
    """The run's check that its lock is the build of the sources beside it reads each source without
    waiting: a pipe where a worker file was is a difference, named, never a hang."""
    _plant(built / "main.worker", "fifo")
    result = within(SECONDS, lambda: run_cli("exec", built / "bundle.lock", "hi"), unblock=built / "main.worker")
    assert result.exit_code == 3 and "main.worker" in result.stderr, result.stderr


def test_an_mcp_server_script_that_became_a_pipe_is_changed(tmp_path: Path, kind: str) -> None:
    _plant(tmp_path / "server.py", kind)
    recorded: dict[str, Any] = {"server.py": "sha256:0"}
    unblock = tmp_path / "server.py" if kind == "fifo" else None
    assert within(SECONDS, lambda: changed_server_files(tmp_path, recorded), unblock=unblock) == ["server.py"]


def test_a_test_case_file_that_is_a_pipe_is_named(built: Path, kind: str) -> None:
    _plant(built / "tests" / "cases.yaml", kind)
    result = within(SECONDS, lambda: run_cli("test", built), unblock=built / "tests" / "cases.yaml" if kind == "fifo" else None)
    assert result.exit_code == 2 and f"tests/cases.yaml: cannot read it ({KINDS[kind]})" in result.stderr, result.stderr
    assert json.loads((built / "project.json").read_text())["version"] == 1


def test_a_chat_thread_that_is_a_pipe_is_refused(tmp_path: Path, kind: str) -> None:
    from llm_do.runtime.conversation_store import ThreadProblem, read_thread

    thread = tmp_path / "t.json"
    _plant(thread, kind)

    def read() -> str:
        with pytest.raises(ThreadProblem) as refused:
            read_thread(thread, "t")
        return str(refused.value)

    assert f"cannot read the thread ({KINDS[kind]})" in within(SECONDS, read, unblock=thread if kind == "fifo" else None)

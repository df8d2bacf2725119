"""Runs with MCP servers: scripted calls through the gate, the lock checked before any model call,
failures in one line, and no server process left behind however the run ends, nor any process a
server started, even a daemon that left its session and process group (Linux: llm-do is the
subreaper of what the servers start), nor one the build's listing started."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from llm_do.runtime.toolsets.mcp import locked_differences
from tests.support.cli import one_line_error, run_cli, write_project
from tests.support.events import of_kind, read_events
from tests.support.mcp import SERVER, STDIO_SERVER, call_script, mcp_project
from tests.support.processes import alive

RULES = "approvals: [\"deny echo(text == 'forbidden')\"]"
DAEMON_SERVER = {**STDIO_SERVER, "env": {**STDIO_SERVER["env"], "ECHO_DAEMON_FILE": "${ECHO_DAEMON_FILE:-}"}}
"""The test server, leaving a `sleep` daemon behind (forked twice, in a new session) each time it starts."""
LINUX = sys.platform.startswith("linux")
LAZY_SERVER = {**STDIO_SERVER, "env": {"ECHO_PID_FILE": "${LAZY_PID_FILE:-}", "ECHO_FAIL": "${LAZY_FAIL:-}",
                                       "ECHO_CWD_FILE": "${LAZY_CWD_FILE:-}"},
               "allowed_tools": ["echo"], "prefix": "lazy", "required": False}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One project for every run here (built once: listing starts the servers): `echo` asked by
    default and denied by a rule for one argument, `wait` asked; and a second server, `lazy`
    (`required: false`), giving `lazy_echo`. The bundle, and where the daemon its listing left wrote its pid."""
    root = tmp_path_factory.mktemp("mcp-runs") / "proj"
    listed = root.parent / "build-daemons.txt"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LLM_DO_TEST_PYTHON", sys.executable)
        mp.setenv("LLM_DO_TEST_MCP_SERVER", str(SERVER))
        mp.setenv("ECHO_DAEMON_FILE", str(listed))
        files = mcp_project({**DAEMON_SERVER, "allowed_tools": ["echo", "wait"]}, front=f"toolsets: [echo, lazy]\n{RULES}")
        files["project.json"]["mcp_servers"]["lazy"] = LAZY_SERVER
        write_project(root, files)
        result = run_cli("build", root)
    assert result.exit_code == 0, result.stdout + result.stderr
    return root / "bundle.lock", listed


@pytest.fixture(scope="module")
def bundle(built: tuple[Path, Path]) -> Path:
    return built[0]


def _daemons(path: Path) -> list[int]:
    return [int(line) for line in path.read_text().split()] if path.exists() else []


def _surviving_daemons(path: Path) -> list[int]:
    """The daemons recorded in `path` (at least one) still running after a moment's grace (a kill
    is not instant)."""
    assert _daemons(path), "the server never started its daemon"
    deadline = time.monotonic() + 10
    while True:
        left = [pid for pid in _daemons(path) if alive(pid)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


@pytest.mark.process
@pytest.mark.skipif(not LINUX, reason="the subreaper is Linux's")
def test_listing_the_servers_at_build_leaves_no_daemon(built: tuple[Path, Path]) -> None:
    assert not _surviving_daemons(built[1])


def _exec(bundle: Path, tmp_path: Path, *calls: tuple[str, dict], flags: tuple[str, ...] = ()) -> tuple[object, list[dict]]:
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", bundle, "go", "--script", call_script(tmp_path, *calls), "--events", events, *flags)
    return result, read_events(events) if events.exists() else []


def _calls(server_env: dict[str, Path]) -> list[str]:
    path = server_env["calls"]
    return path.read_text().split() if path.exists() else []


@pytest.mark.process
def test_an_asked_tool_is_denied_without_a_terminal(bundle: Path, tmp_path: Path, server_env) -> None:
    result, events = _exec(bundle, tmp_path, ("echo", {"text": "hi"}))
    assert result.exit_code == 0, result.stderr
    [returned] = of_kind(events, "tool_returned", tool="echo")
    assert returned["outcome"] == "denied"
    assert _calls(server_env) == []  # the server never saw the call
    assert not alive(int(server_env["pid"].read_text()))  # started at the run's start, stopped at its end


@pytest.mark.process
def test_approved_by_flag_the_call_reaches_the_server(bundle: Path, tmp_path: Path, server_env, monkeypatch) -> None:
    lazy_pid, lazy_cwd = tmp_path / "lazy.pid", tmp_path / "lazy.cwd"
    monkeypatch.setenv("LAZY_PID_FILE", str(lazy_pid))
    monkeypatch.setenv("LAZY_CWD_FILE", str(lazy_cwd))
    result, events = _exec(bundle, tmp_path, ("echo", {"text": "hi"}), flags=("--approve-all",))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "finished"
    [called] = of_kind(events, "tool_called", tool="echo")
    assert called["approval"] == "ask"
    [returned] = of_kind(events, "tool_returned", tool="echo")
    assert (returned["outcome"], returned["result"]) == ("ok", "echo: hi")
    assert _calls(server_env) == ["echo"]
    assert not alive(int(server_env["pid"].read_text()))
    assert not alive(int(lazy_pid.read_text()))  # started when main listed its tools, stopped at the end
    assert lazy_cwd.read_text() == str(bundle.parent)  # a stdio server starts in the project root
    if LINUX:  # a run that ends well kills what its servers started too
        assert not _surviving_daemons(server_env["daemons"])


@pytest.mark.process
def test_a_server_not_required_starts_when_first_used(bundle: Path, tmp_path: Path, server_env, monkeypatch) -> None:
    monkeypatch.setenv("LAZY_FAIL", "1")
    result, events = _exec(bundle, tmp_path, ("lazy_echo", {"text": "hi"}), flags=("--approve-all",))
    assert result.exit_code == 1
    assert "MCP server 'lazy'" in one_line_error(result)
    assert of_kind(events, "worker_started", worker="main")  # the run had started: the server was not needed before
    assert not alive(int(server_env["pid"].read_text()))  # the required one, started first, is stopped too


@pytest.mark.process
def test_a_rule_denies_even_with_approve_all(bundle: Path, tmp_path: Path, server_env) -> None:
    result, events = _exec(bundle, tmp_path, ("echo", {"text": "forbidden"}), flags=("--approve-all",))
    assert result.exit_code == 0, result.stderr
    [returned] = of_kind(events, "tool_returned", tool="echo")
    assert returned["outcome"] == "denied"
    assert "denied by the project's approval rules" in returned["result"]
    assert _calls(server_env) == []


@pytest.mark.process
def test_a_changed_schema_is_refused_before_any_model_call(bundle: Path, tmp_path: Path, server_env, monkeypatch) -> None:
    monkeypatch.setenv("ECHO_CHANGED", "1")
    result, events = _exec(bundle, tmp_path, ("echo", {"text": "hi"}), flags=("--approve-all",))
    assert result.exit_code == 3
    assert one_line_error(result) == ("llm-do: the input schema of tool 'echo' of MCP server 'echo' changed since the build; "
                                      "review the change and run `llm-do build`")
    assert not of_kind(events, "worker_started")  # refused before the entry worker started
    assert _calls(server_env) == []
    assert not alive(int(server_env["pid"].read_text()))


@pytest.mark.process
def test_a_server_that_fails_to_start_ends_the_run_in_one_line(bundle: Path, tmp_path: Path, server_env, monkeypatch) -> None:
    monkeypatch.setenv("ECHO_FAIL", "s3cr3t-LEAK")
    result, events = _exec(bundle, tmp_path, ("echo", {"text": "hi"}), flags=("--approve-all",))
    assert result.exit_code == 1
    line = one_line_error(result)
    # the command as written: what the environment fills in (a secret, perhaps) is not repeated,
    # not even when the server says it
    assert line.startswith("llm-do: run failed: MCP server 'echo' (${LLM_DO_TEST_PYTHON} ${LLM_DO_TEST_MCP_SERVER}) "
                           "failed to start: ")
    assert line.endswith("(the server said: echo server: refusing to start (ECHO_FAIL is ${ECHO_FAIL}))")
    assert "s3cr3t" not in result.stderr
    assert not of_kind(events, "worker_started")


@pytest.mark.process
def test_an_unset_variable_ends_the_run_in_one_line(bundle: Path, tmp_path: Path, server_env, monkeypatch) -> None:
    monkeypatch.delenv("LLM_DO_TEST_PYTHON")
    result, _ = _exec(bundle, tmp_path, ("echo", {"text": "hi"}))
    assert result.exit_code == 1
    assert one_line_error(result) == ("llm-do: run failed: MCP server 'echo' cannot be started: the environment variable "
                                      "LLM_DO_TEST_PYTHON is not set (it is used as ${LLM_DO_TEST_PYTHON})")


def test_locked_differences_names_a_missing_tool() -> None:
    node = {"name": "s", "prefix": "p", "tools": {"p_a": {"parameters": {"type": "object"}}}}
    assert locked_differences(node, {"a": {"type": "object"}}) is None
    assert locked_differences(node, {"b": {"type": "object"}}) == (
        "MCP server 's' no longer has the tool 'a' locked in the bundle; run `llm-do build`")


def _start(bundle: Path, tmp_path: Path, *flags: str) -> subprocess.Popen[bytes]:
    script = call_script(tmp_path, ("wait", {"seconds": 60}))
    command = [sys.executable, "-m", "llm_do.cli.main", "exec", str(bundle), "go", "--script", str(script), "--approve-all",
               *flags]
    return subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for(predicate, what: str, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"{what} did not happen"
        time.sleep(0.05)


def _stopped_in_wait(bundle: Path, tmp_path: Path, server_env, timeout: int | None) -> tuple[bool, int, str, int | None]:
    """Start a run whose script calls `wait`, and stop it: by Ctrl-C once the call is under way, or
    by `--timeout`. (whether the call had begun, the exit code, stderr, the server's pid)"""
    for path in server_env.values():
        path.unlink(missing_ok=True)
    proc = _start(bundle, tmp_path, *([] if timeout is None else ["--timeout", str(timeout)]))
    try:
        _wait_for(lambda: "wait" in _calls(server_env) or proc.poll() is not None, "the call to `wait`")
        if timeout is None:
            proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=90)
    finally:
        proc.kill()
    pid = int(server_env["pid"].read_text()) if server_env["pid"].exists() else None
    return "wait" in _calls(server_env), proc.returncode, err.decode(), pid


@pytest.mark.parametrize("how", ["timeout", "ctrl-c"])
@pytest.mark.process
def test_no_server_outlives_a_stopped_run(bundle: Path, tmp_path: Path, server_env, how: str) -> None:
    """The run is stopped in the middle of the server's `wait`. A timeout starts at 4 s and doubles
    (up to 32) while the run ended before its call began, as on a slow machine; each server ends."""
    if how == "ctrl-c":
        called, code, err, pid = _stopped_in_wait(bundle, tmp_path, server_env, None)
        assert called and code == 130, err
        _wait_for(lambda: not alive(pid), f"the end of the server (pid {pid})", seconds=10)
        if LINUX:
            assert not _surviving_daemons(server_env["daemons"])
        return
    timeout = 4
    while True:
        called, code, err, pid = _stopped_in_wait(bundle, tmp_path, server_env, timeout)
        assert code == 1
        assert err.strip() == f"llm-do: run failed: the run took longer than {timeout} s and was stopped"
        if pid is not None:
            _wait_for(lambda pid=pid: not alive(pid), f"the end of the server (pid {pid})", seconds=10)
        if LINUX and server_env["daemons"].exists():
            assert not _surviving_daemons(server_env["daemons"])
        if called or timeout >= 32:
            break
        timeout *= 2
    assert called, "the run never got to its call to `wait`, even with --timeout 32"
    assert pid is not None


@pytest.mark.process
def test_the_http_server_is_called_through_the_gate(mcp_build, http_server: str, tmp_path: Path, server_env) -> None:
    bundle = mcp_build(mcp_project({"url": http_server, "allowed_tools": ["echo", "add"]}))
    result, events = _exec(bundle, tmp_path, ("add", {"a": 2, "b": 3}), flags=("--approve-all",))
    assert result.exit_code == 0, result.stderr
    [returned] = of_kind(events, "tool_returned", tool="add")
    assert (returned["outcome"], json.loads(returned["result"])) == ("ok", 5)
    result, events = _exec(bundle, tmp_path, ("add", {"a": 2, "b": 3}))
    [returned] = of_kind(events, "tool_returned", tool="add")
    assert returned["outcome"] == "denied"


@pytest.mark.process
def test_without_the_mcp_extra_a_run_says_what_to_install(bundle: Path, tmp_path: Path, server_env) -> None:
    shadow = tmp_path / "shadow" / "fastmcp"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('fastmcp is not installed')\n")
    script = call_script(tmp_path, ("echo", {"text": "hi"}))
    env = {**os.environ, "PYTHONPATH": str(shadow.parent)}
    proc = subprocess.run([sys.executable, "-m", "llm_do.cli.main", "exec", str(bundle), "go", "--script", str(script)],
                          capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.strip() == "llm-do: run failed: MCP servers need llm-do's `mcp` extra: pip install 'llm-do[mcp]'"


@pytest.mark.process
@pytest.mark.skipif(not LINUX, reason="the subreaper is Linux's")
def test_a_call_served_over_mcp_leaves_no_daemon(bundle: Path, tmp_path: Path, server_env) -> None:
    """`llm-do serve`: the call's run starts the server, which leaves a daemon; the call's end kills it."""
    import asyncio

    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    script = call_script(tmp_path, ("echo", {"text": "hi"}))
    params = StdioServerParameters(command=sys.executable, args=["-m", "llm_do.cli.main", "serve", str(bundle), "--script",
                                                                str(script), "--approve-all"], env=dict(os.environ))

    async def scenario() -> str:
        with (tmp_path / "serve.err").open("w") as err:
            async with stdio_client(params, errlog=err) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("main", {"input": "go"})
                assert _surviving_daemons(server_env["daemons"]) == []  # gone with the call, the server still up
                return "".join(getattr(c, "text", "") for c in result.content)

    assert asyncio.run(asyncio.wait_for(scenario(), 120)) == "finished", (tmp_path / "serve.err").read_text()

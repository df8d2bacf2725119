"""Fixtures for MCP servers as toolsets: a project whose `mcp_servers` start the real test server
(`echo_server.py`, written with the official `mcp` package) over stdio or streamable HTTP.

The project names the interpreter and the server script through `${LLM_DO_TEST_PYTHON}` and
`${LLM_DO_TEST_MCP_SERVER}`, so its bundle holds no path of this machine and snapshots are stable;
what the server should do (change a schema, fail, record its pid and calls) goes through `${VAR}`s
of its `env` too, expanded when the server starts.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_cli, write_project
from tests.processes import free_port

SERVER = Path(__file__).with_name("echo_server.py")

STDIO_SERVER: dict[str, Any] = {
    "command": "${LLM_DO_TEST_PYTHON}",
    "args": ["${LLM_DO_TEST_MCP_SERVER}"],
    "env": {"ECHO_PID_FILE": "${ECHO_PID_FILE:-}", "ECHO_CALLS_FILE": "${ECHO_CALLS_FILE:-}",
            "ECHO_CHANGED": "${ECHO_CHANGED:-}", "ECHO_FAIL": "${ECHO_FAIL:-}"},
}


@pytest.fixture
def server_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Path]:
    """The variables the project's server configuration reads; the pid and calls files to look at."""
    files = {"pid": tmp_path / "server.pid", "calls": tmp_path / "calls.txt"}
    monkeypatch.setenv("LLM_DO_TEST_PYTHON", sys.executable)
    monkeypatch.setenv("LLM_DO_TEST_MCP_SERVER", str(SERVER))
    monkeypatch.setenv("ECHO_PID_FILE", str(files["pid"]))
    monkeypatch.setenv("ECHO_CALLS_FILE", str(files["calls"]))
    for name in ("ECHO_CHANGED", "ECHO_FAIL"):
        monkeypatch.delenv(name, raising=False)
    return files


def mcp_project(server: dict[str, Any], front: str = "toolsets: [echo]", name: str = "echo") -> dict[str, Any]:
    return {
        "project.json": {"version": 1, "worker_files": ["main.worker"], "entry": {"worker": "main"},
                         "mcp_servers": {name: server}},
        "main.worker": f"---\n{front}\n---\nUse the tools.\n",
    }


@pytest.fixture
def mcp_build(tmp_path: Path, server_env: dict[str, Path]) -> Callable[..., Path]:
    """`mcp_build(files) -> bundle.lock`: the project built (its servers listed for real)."""

    def _build(files: dict[str, Any], name: str = "proj") -> Path:
        root = write_project(tmp_path / name, files)
        result = run_cli("build", root)
        assert result.exit_code == 0, f"build failed:\n{result.stdout}\n{result.stderr}"
        return root / "bundle.lock"

    return _build



@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[str]:
    """The test server on streamable HTTP, on a free loopback port; stopped after the test."""
    port = free_port()
    log = (tmp_path / "http-server.log").open("w")
    proc = subprocess.Popen([sys.executable, str(SERVER), "--http", str(port)], stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, env={"PATH": "/usr/bin:/bin", "ECHO_CALLS_FILE": str(tmp_path / "calls.txt")})
    try:
        deadline = time.monotonic() + 60
        while True:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert proc.poll() is None, (tmp_path / "http-server.log").read_text()
            assert time.monotonic() < deadline, "the HTTP test server did not start"
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def call_script(tmp_path: Path, *calls: tuple[str, dict[str, Any]], name: str = "script.json") -> Path:
    path = tmp_path / name
    turns: list[dict[str, Any]] = [{"tool_calls": [{"tool": t, "args": a}]} for t, a in calls]
    path.write_text(json.dumps({"workers": {"main": [*turns, {"text": "finished"}]}}), encoding="utf-8")
    return path

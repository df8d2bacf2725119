"""The MCP test server (tests/runtime/mcp/echo_server.py) as a project's server, and scripts that
call its tools (tests/runtime/mcp/).

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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.processes import free_port

SERVER = Path(__file__).resolve().parents[1] / "runtime" / "mcp" / "echo_server.py"
"""The test server, written with the official `mcp` package."""

STDIO_SERVER: dict[str, Any] = {
    "command": "${LLM_DO_TEST_PYTHON}",
    "args": ["${LLM_DO_TEST_MCP_SERVER}"],
    "env": {"ECHO_PID_FILE": "${ECHO_PID_FILE:-}", "ECHO_CALLS_FILE": "${ECHO_CALLS_FILE:-}",
            "ECHO_CHANGED": "${ECHO_CHANGED:-}", "ECHO_FAIL": "${ECHO_FAIL:-}"},
}


def mcp_project(server: dict[str, Any], front: str = "toolsets: [echo]", name: str = "echo") -> dict[str, Any]:
    return {
        "project.json": {"version": 1, "worker_files": ["main.worker"], "entry": {"worker": "main"},
                         "mcp_servers": {name: server}},
        "main.worker": f"---\n{front}\n---\nUse the tools.\n",
    }


def call_script(tmp_path: Path, *calls: tuple[str, dict[str, Any]], name: str = "script.json") -> Path:
    path = tmp_path / name
    turns: list[dict[str, Any]] = [{"tool_calls": [{"tool": t, "args": a}]} for t, a in calls]
    path.write_text(json.dumps({"workers": {"main": [*turns, {"text": "finished"}]}}), encoding="utf-8")
    return path


def in_process_server() -> Any:
    """The test server's `MCPServer` object, for pydantic-ai's MCP toolset in this process (no subprocess)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("echo_server_in_process", SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.server


@contextmanager
def http_test_server(tmp_path: Path) -> Iterator[str]:
    """The test server on streamable HTTP on a free loopback port, its URL; stopped (and waited
    for) when the block ends, however it ends. It appends each call's tool to tmp_path/calls.txt."""
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

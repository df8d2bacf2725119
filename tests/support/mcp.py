"""The MCP test server (tests/runtime/mcp/echo_server.py) as a project's server, and scripts that
call its tools (tests/runtime/mcp/).

The project names the interpreter and the server script through `${LLM_DO_TEST_PYTHON}` and
`${LLM_DO_TEST_MCP_SERVER}`, so its bundle holds no path of this machine and snapshots are stable;
what the server should do (change a schema, fail, record its pid and calls) goes through `${VAR}`s
of its `env` too, expanded when the server starts.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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

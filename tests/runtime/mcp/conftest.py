"""Fixtures for MCP servers as toolsets: the variables a project's server configuration reads,
projects built with their servers listed for real, and the test server on streamable HTTP
(tests/support/mcp.py says how the project names the server)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_cli, write_project
from tests.support.mcp import SERVER, http_test_server


@pytest.fixture
def server_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Path]:
    """The variables the project's server configuration reads; the pid, calls and daemons files to
    look at."""
    files = {"pid": tmp_path / "server.pid", "calls": tmp_path / "calls.txt", "daemons": tmp_path / "daemons.txt"}
    monkeypatch.setenv("LLM_DO_TEST_PYTHON", sys.executable)
    monkeypatch.setenv("LLM_DO_TEST_MCP_SERVER", str(SERVER))
    monkeypatch.setenv("ECHO_PID_FILE", str(files["pid"]))
    monkeypatch.setenv("ECHO_CALLS_FILE", str(files["calls"]))
    monkeypatch.setenv("ECHO_DAEMON_FILE", str(files["daemons"]))  # read by a server configured with it
    for name in ("ECHO_CHANGED", "ECHO_FAIL"):
        monkeypatch.delenv(name, raising=False)
    return files


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
    with http_test_server(tmp_path) as url:
        yield url

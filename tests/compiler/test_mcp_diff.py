"""`llm-do diff` on MCP servers: servers and locked tools added or removed, connections changed.

Opaque servers are not started at build, so these projects build offline in milliseconds; the
locked tools of a listed server are set on the documents directly (what `diff` compares is data)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from llm_do.compiler.diff.bundle import diff_bundles
from tests.support.cli import run_cli, worker, write_project


def _doc(tmp_path: Path, name: str, servers: dict[str, Any], toolsets: str) -> dict[str, Any]:
    root = write_project(tmp_path / name, {
        "project.json": {"version": 1, "worker_files": ["main.worker"], "mcp_servers": servers},
        "main.worker": worker(f"toolsets: [{toolsets}]"),
    })
    result = run_cli("build", root)
    assert result.exit_code == 0, result.stdout + result.stderr
    return json.loads((root / "bundle.lock").read_text())


def _changes(old: dict, new: dict) -> list[tuple[str, str, str, str | None, str | None]]:
    return [(c.severity, c.verb, c.subject, c.before, c.after) for c in diff_bundles(old, new).changes if c.area == "mcp"]


def test_servers_added_removed_and_their_connections_changed(tmp_path: Path) -> None:
    old = _doc(tmp_path, "old", {"a": {"command": "srv", "args": ["one"], "opaque": True},
                                 "gone": {"url": "http://127.0.0.1:9/mcp", "opaque": True}}, "a, gone")
    new = _doc(tmp_path, "new", {"a": {"command": "srv2", "args": ["one"], "env": {"K": "${K}"}, "opaque": True},
                                 "b": {"url": "http://127.0.0.1:8/mcp", "opaque": True}}, "a, b")
    assert _changes(old, new) == [
        ("medium", "added", "MCP server b", None, "http://127.0.0.1:8/mcp"),
        ("medium", "changed", "command of MCP server a", "srv", "srv2"),
        ("medium", "changed", "env of MCP server a", None, '{"K": "${K}"}'),
        ("low", "removed", "MCP server gone", "http://127.0.0.1:9/mcp", None),
    ]
    capabilities = [(c.verb, c.subject) for c in diff_bundles(old, new).changes if c.area == "capability"]
    assert capabilities == []  # both opaque: custom:* before and after


def test_locked_tools_added_removed_and_changed(tmp_path: Path) -> None:
    old = _doc(tmp_path, "old", {"a": {"command": "srv", "opaque": True}}, "a")
    new = copy.deepcopy(old)

    def tool(schema: dict[str, Any]) -> dict[str, Any]:
        return {"name": "t", "description": "d", "parameters": {"type": "object", "properties": schema}, "approval": "ask",
                "capabilities": [], "hash": json.dumps(schema)}

    old["toolsets"]["a"].update(hash="1", tools={"keep": tool({"x": {"type": "string"}}), "drop": tool({})})
    new["toolsets"]["a"].update(hash="2", tools={"keep": tool({"x": {"type": "integer"}}), "new": tool({})})
    changes = diff_bundles(old, new).changes
    assert _changes(old, new) == [
        ("medium", "changed", "input schema of tool keep of MCP server a", None, None),
        ("medium", "added", "tool new of MCP server a", None, "d"),
        ("low", "removed", "tool drop of MCP server a", "d", None),
    ]
    [schema] = [c for c in changes if c.subject.startswith("input schema")]
    assert schema.note == "breaking"
    assert schema.detail == ["x: type changed (string -> integer)"]

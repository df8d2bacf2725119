"""`server_side_tools` (run by the model provider, never gated) are capabilities: `capabilities`
shows them, with the path to them, and `diff` reports one gained (issue 15)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.compiler.test_diff import flattened
from tests.support.cli import run_cli, worker, write_project

SEARCHING = "server_side_tools:\n  - tool_type: web_search\n    max_uses: 2\n  - tool_type: code_execution"


def _project(root: Path, helper_front: str) -> Path:
    return write_project(root, {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "defaults": {"model": "test"}},
        "main.worker": worker("toolsets: [helper]", "Delegate."),
        "helper.worker": worker(helper_front, "Help."),
    })


def test_capabilities_show_the_provider_tools_and_who_reaches_them(tmp_path: Path) -> None:
    root = _project(tmp_path / "p", SEARCHING)
    result = run_cli("capabilities", root, "--format", "json")
    assert result.exit_code == 0, result.stderr
    caps = {w["name"]: {c["capability"]: c for c in w["capabilities"]} for w in result.json()["workers"]}
    search = caps["main"]["provider:web_search"]
    assert (search["path"], search["tool"], search["gate"], search["side_effect"]) == (["main", "helper"], "web_search",
                                                                                      "allow", True)
    assert set(caps["helper"]) == {"provider:web_search", "provider:code_execution"}


def test_diff_reports_a_provider_tool_gained(tmp_path: Path) -> None:
    old = _project(tmp_path / "old", "description: Helps.")
    new = _project(tmp_path / "new", SEARCHING)
    result = run_cli("diff", old, new, "--format", "json")
    changes = flattened(json.loads(result.stdout)["changes"])
    gained = [c for c in changes if c["area"] == "capability" and "provider:code_execution" in c["subject"]]
    assert [(c["worker"], c["verb"]) for c in gained] == [("helper", "added"), ("main", "added")], changes

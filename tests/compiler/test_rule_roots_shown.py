"""Newcomer F4 on the review screens: `capabilities` (text and JSON) and `diff` name, beside a
worker's rules, the toolset's root their path conditions are relative to; a move of that root is a
change of what the rules mean."""

from __future__ import annotations

import json
from pathlib import Path

from llm_do.compiler.report.schemas import CapabilitiesDocument
from tests.support.cli import run_cli, worker, write_project

RULES = "approvals:\n  - allow write_file\n  - deny write_file(path ~ 'secret*')"


def project(root: Path, path: str) -> Path:
    front = f"toolsets:\n  - filesystem_project:\n      path: {path}\n{RULES}"
    return write_project(root, {"main.worker": worker(front), f"{path}/.keep": ""})


def test_capabilities_say_where_the_rules_see_paths(tmp_path: Path) -> None:
    root = project(tmp_path / "p", "docs")
    text = run_cli("capabilities", root)
    assert text.exit_code == 0, text.stderr
    assert "by allow write_file; deny write_file(path ~ 'secret*') (paths in docs/)]" in text.stdout
    doc = json.loads(run_cli("capabilities", root, "--format", "json").stdout)
    CapabilitiesDocument.model_validate(doc)
    [write] = [c for c in doc["workers"][0]["capabilities"] if c["capability"].startswith("fs.write")]
    assert write["gated_steps"][0]["paths_in"] == "docs/"


def test_the_project_root_is_named_too(tmp_path: Path) -> None:
    root = write_project(tmp_path / "p", {"main.worker": worker(f"toolsets: [filesystem_project]\n{RULES}")})
    assert "(paths in the project)]" in run_cli("capabilities", root).stdout


def test_moving_the_root_under_the_rules_is_a_change(tmp_path: Path) -> None:
    old, new = project(tmp_path / "old", "docs"), project(tmp_path / "new", "notes")
    result = run_cli("diff", old, new, "--format", "json")
    assert result.exit_code in (0, 1), result.stderr
    [change] = [c for c in result.json()["changes"] if c["area"] == "approval"]
    assert change["subject"] == "approval of main.write_file"
    assert change["before"].endswith("(paths in docs/)") and change["after"].endswith("(paths in notes/)")

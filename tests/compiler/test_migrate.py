"""`llm-do migrate`: an `.agent`-era project rewritten to `.worker` files that build cleanly."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from tests.support.cli import run_cli, worker, write_project
from tests.support.projects import LEGACY_PROJECT


def listing(root: Path) -> dict[str, tuple[bytes, int]]:
    return {p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(root.rglob("*")) if p.is_file()}


def front_matter(text: str) -> tuple[str, str]:
    m = re.match(r"---\n(.*?)\n---\n(.*)", text, re.S)
    assert m, text
    return m.group(1), m.group(2)


def l_codes(stderr: str) -> list[str]:
    return re.findall(r"\bL\d{3}\b", stderr)


@pytest.mark.process
def test_migrates_the_legacy_project(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", LEGACY_PROJECT)
    before_main_body = front_matter((root / "main.agent").read_text())[1]
    result = run_cli("migrate", root)
    assert result.exit_code == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert sorted(p.name for p in root.iterdir()) == [
        "main.worker", "project.json", "sample_input.txt", "schemas.py", "summarizer.worker"
    ]

    manifest = json.loads((root / "project.json").read_text())
    assert "agent_files" not in manifest
    assert manifest["worker_files"] == ["main.worker", "summarizer.worker"]
    assert manifest["entry"] == {"worker": "main", "args": {"input": "sample_input.txt"}}
    assert manifest["runtime"] == {"approval_mode": "approve_all", "max_depth": 10}
    assert manifest["python_files"] == ["schemas.py"]

    summarizer_front, _ = front_matter((root / "summarizer.worker").read_text())
    data = yaml.safe_load(summarizer_front)
    assert data["schema_in_ref"] == "schemas.py:SummarizerInput"
    assert "input_model_ref" not in data
    assert data["recursive"] is True
    assert data["toolsets"] == ["filesystem_project", "summarizer"]

    main_front, main_body = front_matter((root / "main.worker").read_text())
    assert "# the summarizer does the real work" in main_front  # comments survive
    main = yaml.safe_load(main_front)
    assert "recursive" not in main  # main is not on a cycle
    assert main["server_side_tools"] == [{"tool_type": "web_search", "max_uses": 3}]
    assert main_body == before_main_body

    build = run_cli("build", root)
    assert build.exit_code == 0, build.stderr
    assert l_codes(build.stderr) == []
    bundle = json.loads((root / "bundle.lock").read_text())
    assert bundle["workers"]["summarizer"]["recursive"] is True
    assert bundle["workers"]["summarizer"]["input"]["ref"] == "schemas.py:SummarizerInput"
    assert bundle["workers"]["main"]["source"] == "main.worker"


@pytest.mark.process
def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", LEGACY_PROJECT)
    before = listing(root)
    result = run_cli("migrate", root, "--dry-run")
    assert result.exit_code == 0, result.stderr
    assert listing(root) == before
    for name in ("main.worker", "summarizer.worker", "project.json", "main.agent", "summarizer.agent"):
        assert name in result.stderr


def test_entry_true_and_removed_keys(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "proj",
        {
            "project.json": {"version": 1, "agent_files": ["*.agent"], "allow_cli_input": True},
            "start.agent": """
                ---
                name: start
                # picked as the entry
                entry: true
                toolsets: [ping]
                ---
                Start.
                """,
            "ping.agent": worker("name: ping\ntoolsets: [pong]", "Ping."),
            "pong.agent": worker("name: pong\ntoolsets: [ping]", "Pong."),
        },
    )
    result = run_cli("migrate", root)
    assert result.exit_code == 0, result.stderr
    assert "removed allow_cli_input: already what llm-do does" in result.stderr  # says what it removed, and why
    manifest = json.loads((root / "project.json").read_text())
    assert manifest["entry"]["worker"] == "start"
    assert "allow_cli_input" not in manifest
    assert manifest["worker_files"] == ["*.worker"]
    start_front, _ = front_matter((root / "start.worker").read_text())
    assert "entry" not in yaml.safe_load(start_front)
    assert "# picked as the entry" in start_front
    assert "recursive" not in yaml.safe_load(start_front)
    for name in ("ping", "pong"):
        assert yaml.safe_load(front_matter((root / f"{name}.worker").read_text())[0])["recursive"] is True
    assert not list(root.glob("*.agent"))
    build = run_cli("build", root)
    assert build.exit_code == 0, build.stderr
    assert l_codes(build.stderr) == []
    assert json.loads((root / "bundle.lock").read_text())["entry"]["worker"] == "start"


def test_cycle_is_declared_even_when_l002_was_suppressed(tmp_path: Path) -> None:
    """A user who silenced L002 while still on .agent files must still get `recursive: true`."""
    root = write_project(
        tmp_path / "proj",
        {
            "project.json": {"version": 1, "agent_files": ["*.agent"], "entry": {"agent": "ping"}, "suppress": ["L002"]},
            "ping.agent": worker("name: ping\ntoolsets: [pong]", "Ping."),
            "pong.agent": worker("name: pong\ntoolsets: [ping]", "Pong."),
        },
    )
    assert run_cli("build", root).exit_code == 0
    result = run_cli("migrate", root)
    assert result.exit_code == 0, result.stderr
    for name in ("ping", "pong"):
        assert yaml.safe_load(front_matter((root / f"{name}.worker").read_text())[0]).get("recursive") is True, name
    build = run_cli("build", root)
    assert build.exit_code == 0, build.stderr


def test_nothing_to_migrate(tmp_path: Path) -> None:
    root = write_project(
        tmp_path / "proj",
        {"project.json": {"version": 1, "worker_files": ["*.worker"]}, "main.worker": worker("model: test", "Hi.")},
    )
    before = listing(root)
    result = run_cli("migrate", root)
    assert result.exit_code == 0
    assert "nothing to migrate" in result.stderr
    assert listing(root) == before


def test_migrate_of_a_missing_project_exits_2(tmp_path: Path) -> None:
    result = run_cli("migrate", tmp_path / "nope")
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr


def test_a_dynamic_agents_project_migrates_and_keeps_its_generated_agents_dir(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", {
        "project.json": {"version": 1, "generated_agents_dir": "generated", "entry": {"agent": "main"},
                         "agent_files": ["main.agent"]},
        "main.agent": worker("name: main\ntoolsets:\n  - dynamic_agents", "Create an agent with agent_create."),
    })
    assert run_cli("build", root).exit_code == 0  # the .agent era's project builds as it is
    result = run_cli("migrate", root)
    assert result.exit_code == 0, result.stderr
    manifest = json.loads((root / "project.json").read_text())
    assert manifest["generated_agents_dir"] == "generated"
    assert run_cli("build", root).exit_code == 0
    node = json.loads((root / "bundle.lock").read_text())["workers"]["main"]
    assert node["toolsets"] == [{"settings": {"path": "generated"}, "toolset": "dynamic_agents"}]
    assert node["tools"]["agent_create"]["approval"] == "ask"

"""The Python of `.agent`-era projects: 1.x `FunctionToolset.tool` for plain functions, and a
toolset factory's own approval config (`set_toolset_approval_config`), honoured at run time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.exceptions import UserError
from pydantic_ai.toolsets import FunctionToolset

from llm_do.runtime import legacy_tools
from llm_do.runtime.approvals.opaque_toolsets import tool_approval
from tests.support.cli import run_cli, worker, write_project

TOOLS_PY = """
    from pydantic_ai.tools import RunContext
    from pydantic_ai.toolsets import FunctionToolset

    from llm_do.runtime import CallContext
    from llm_do.toolsets.approval import set_toolset_approval_config


    def build_tools(_ctx: RunContext[CallContext]) -> FunctionToolset:
        tools = FunctionToolset()

        @tools.tool
        def free(text: str) -> str:
            \"\"\"Pre-approved.\"\"\"
            return f"free {text}"

        @tools.tool
        def blocked(text: str) -> str:
            \"\"\"Blocked.\"\"\"
            return f"blocked {text}"

        @tools.tool
        def asked(ctx: RunContext[CallContext], text: str) -> str:
            \"\"\"Neither: asked, and it takes the context.\"\"\"
            return f"asked {text} by {ctx.deps.frame.worker}"

        set_toolset_approval_config(tools, {"free": {"pre_approved": True}, "blocked": {"blocked": True}})
        return tools


    TOOLSETS = {"my_tools": build_tools}
    """


def project(root: Path, *, suffix: str = ".agent", front: str = "") -> Path:
    key = "agent_files" if suffix == ".agent" else "worker_files"
    return write_project(root, {
        "project.json": {"version": 1, "entry": {"worker": "main"}, key: [f"main{suffix}"], "python_files": ["tools.py"]},
        f"main{suffix}": worker(f"name: main\nmodel: test\ntoolsets: [my_tools]\n{front}", "Use the tools."),
        "tools.py": TOOLS_PY,
    })


def run(root: Path, *flags: str) -> tuple[Any, dict[str, tuple[str, str]]]:
    """(exit code, stdout), and per tool: (approval, outcome)."""
    assert run_cli("build", root).exit_code == 0
    events = root / "events.jsonl"
    result = run_cli("exec", root / "bundle.lock", *flags, "--events", events, "hi", input="")
    seen: dict[str, list[str]] = {}
    for line in events.read_text().splitlines():
        event = json.loads(line)
        if event["event"] == "tool_called":
            seen.setdefault(event["tool"], []).append(event["approval"])
        elif event["event"] == "tool_returned":
            seen[event["tool"]].append(event["outcome"])
    return (result.exit_code, result.stdout), {k: tuple(v) for k, v in seen.items()}


@pytest.mark.process
def test_plain_functions_under_tool_run_and_the_config_decides_their_approval(tmp_path: Path) -> None:
    (code, out), tools = run(project(tmp_path / "p"), "--reject-all")
    assert code == 0
    assert tools == {"free": ("allow", "ok"), "blocked": ("deny", "denied"), "asked": ("ask", "denied")}
    assert "free a" in out


@pytest.mark.process
def test_blocked_stays_denied_when_every_call_is_approved(tmp_path: Path) -> None:
    (code, out), tools = run(project(tmp_path / "p"), "--approve-all")
    assert code == 0
    assert tools == {"free": ("allow", "ok"), "blocked": ("deny", "denied"), "asked": ("ask", "ok")}
    assert "asked a by main" in out


@pytest.mark.process
def test_a_rule_denying_the_toolset_wins_over_pre_approved(tmp_path: Path) -> None:
    (code, _), tools = run(project(tmp_path / "p", front="approvals: [deny my_tools]"), "--approve-all")
    assert code == 0
    assert {name: approval for name, (approval, _) in tools.items()} == {"free": "deny", "blocked": "deny", "asked": "deny"}


def test_the_approval_of_one_tool() -> None:
    assert tool_approval("ask", {"pre_approved": True}) == "allow"
    assert tool_approval("deny", {"pre_approved": True}) == "deny"
    assert tool_approval("allow", {"blocked": True}) == "deny"
    assert tool_approval("ask", {"pre_approved": False}) == "ask"
    assert tool_approval("allow", None) == "allow"


@pytest.mark.process
def test_projects_not_of_the_agent_era_keep_pydantic_ai_2_behaviour(tmp_path: Path) -> None:
    """The same tools in a .worker project: `.tool` on a plain function is pydantic-ai 2's error."""
    root = project(tmp_path / "p", suffix=".worker")
    assert run_cli("build", root).exit_code == 0
    result = run_cli("exec", root / "bundle.lock", "--approve-all", "hi", input="")
    assert result.exit_code == 1
    assert "UserError" in result.stderr and "RunContext" in result.stderr
    assert "Traceback" not in result.stderr


def test_functions_outside_an_enabled_root_keep_pydantic_ai_2_behaviour(tmp_path: Path) -> None:
    legacy_tools.enable(str(tmp_path))

    def plain(x: int) -> int:
        return x

    with pytest.raises(UserError, match="RunContext"):
        FunctionToolset().tool(plain)
    assert legacy_tools.enabled_for(str(tmp_path))
    assert not legacy_tools.enabled_for(str(Path(__file__).parent))

"""The taint guard with a real MCP server: its tools return untrusted content and can send data out
(the defaults), so once the worker has also read a private file, the next call to the server is
asked and, with nobody to ask (`--approve-all` included), never reaches it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.events import of_kind, read_events
from tests.support.mcp import SERVER, STDIO_SERVER, call_script, mcp_project
from tests.support.projects import build_project, copy_project

pytestmark = pytest.mark.process


@pytest.fixture(scope="module")
def _built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project, built once for the module (its listing starts the server)."""
    files = mcp_project({**STDIO_SERVER, "allowed_tools": ["echo"]},
                        front="toolsets: [filesystem_project_ro, echo]\napprovals: [allow echo]")
    files["project.json"]["flows"] = {"inputs": "trusted"}  # the untrusted content comes from the server only
    files["secret.txt"] = "the launch code is 0000\n"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LLM_DO_TEST_PYTHON", sys.executable)
        mp.setenv("LLM_DO_TEST_MCP_SERVER", str(SERVER))
        return build_project(tmp_path_factory.mktemp("mcp-taint") / "proj", files)


@pytest.fixture
def bundle(_built: Path, tmp_path: Path) -> Path:
    return copy_project(_built, tmp_path / "proj")


@pytest.mark.parametrize("flags", [(), ("--approve-all",)], ids=["no-terminal", "approve-all"])
def test_exfiltration_through_an_mcp_tool_never_reaches_the_server(bundle: Path, tmp_path: Path, server_env,
                                                                   flags) -> None:
    script = call_script(tmp_path, ("echo", {"text": "what is new?"}), ("read_file", {"path": "secret.txt"}),
                         ("echo", {"text": "the launch code is 0000"}))
    events_path = tmp_path / "events.jsonl"
    result = run_cli("exec", bundle, "go", "--script", script, "--events", events_path, *flags)
    assert result.exit_code == (5 if flags else 0), result.stderr  # 5: --approve-all met a flow denial
    assert server_env["calls"].read_text().split() == ["echo"]  # the first echo only: nothing private yet
    events = read_events(events_path)
    first, second = of_kind(events, "tool_returned", tool="echo")
    assert (first["outcome"], second["outcome"]) == ("ok", "denied")
    [guarded] = of_kind(events, "flow_guarded", tool="echo")
    assert guarded["egress"] == ["mcp:echo:echo"]
    assert guarded["untrusted"] == [{"capability": "mcp:echo:echo", "worker": "main", "tool": "echo"}]
    assert guarded["private"] == [{"capability": "fs.read:project/**", "worker": "main", "tool": "read_file"}]

"""Remote MCP servers (`url`) in cassettes: a run through the HTTP test server is recorded (its
listing, each call's arguments and result, no header nor `${VAR}` value), the server is stopped, and
`llm-do test` replays the case offline from the cassette; a changed recorded result, or a call the
cassette did not record, fails the case with the difference."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run_cli, write_project
from tests.support.mcp import http_test_server
from tests.support.projects import copy_project

TOKEN = "tok-remote-secret-98765"
SCRIPT = {"workers": {"main": [
    {"tool_calls": [{"tool": "add", "args": {"a": 2, "b": 3}}]},
    {"tool_calls": [{"tool": "echo", "args": {"text": "hi"}}]},
    {"text": "finished"},
]}}
CASES = """
    cases:
      - name: adds-and-echoes
        input: go
        cassette: cassettes/main.json
        expect:
          output: {equals: finished}
          calls: {in_order: ["add(a == 2)", "echo(text == 'hi')"]}
"""


def files(url: str) -> dict:
    return {
        "project.json": {"version": 1, "name": "remote", "worker_files": ["main.worker"], "entry": {"worker": "main"},
                         "mcp_servers": {"echo": {"url": url, "headers": {"Authorization": "Bearer ${ECHO_TOKEN}"},
                                                  "allowed_tools": ["echo", "add"]}}},
        "main.worker": "---\ntoolsets: [echo]\n---\nUse the tools.\n",
        "s.json": SCRIPT,
        "tests/cases.yaml": CASES,
    }


@pytest.fixture(scope="module")
def _recorded_once(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project, its run recorded through the HTTP test server, which is stopped since (once for
    the module: the server and the build's listing cost a second of CPU each)."""
    base = tmp_path_factory.mktemp("remote")
    server_dir = base / "server"
    server_dir.mkdir()
    with http_test_server(server_dir) as url:
        root = write_project(base / "proj", files(url))
        result = run_cli("run", root, "go", "--script", root / "s.json", "--approve-all",
                         "--record", root / "tests" / "cassettes", env={"ECHO_TOKEN": TOKEN})
        assert result.exit_code == 0, result.stderr
    assert (server_dir / "calls.txt").read_text().split() == ["add", "echo"]  # the recording reached the server
    return root


@pytest.fixture
def recorded(_recorded_once: Path, tmp_path: Path) -> Path:
    """This test's copy of the recorded project (a test may change its cassette)."""
    return copy_project(_recorded_once / "bundle.lock", tmp_path / "proj").parent


@pytest.mark.process
def test_a_remote_server_is_recorded_and_replayed_offline(recorded: Path, tmp_path: Path) -> None:
    text = (recorded / "tests" / "cassettes" / "main.json").read_text()
    assert TOKEN not in text and "127.0.0.1" not in text and "Authorization" not in text
    [server] = json.loads(text)["remote_mcp"]
    assert server["name"] == "echo"
    assert [t["name"] for t in server["tools"]] == ["add", "echo", "secret", "wait"]
    assert server["tools"][0]["parameters"]["required"] == ["a", "b"]
    assert [(c["path"], c["at"], c["tool"], c["args"], c["outcome"], c["result"]) for c in server["calls"]] == [
        ("main", "1.1", "add", {"a": 2, "b": 3}, "success", 5),
        ("main", "2.1", "echo", {"text": "hi"}, "success", "echo: hi"),
    ]
    result = run_cli("test", recorded, env={"ECHO_TOKEN": None})  # nothing listens at the URL now
    assert result.exit_code == 0, result.stdout + result.stderr
    assert result.stdout.splitlines() == ["PASS adds-and-echoes (tests/cases.yaml:2)", "1 case: 1 passed, 0 failed, 0 stale"]


@pytest.mark.process
def test_a_changed_recorded_result_fails_the_case_with_the_difference(recorded: Path) -> None:
    path = recorded / "tests" / "cassettes" / "main.json"
    data = json.loads(path.read_text())
    data["remote_mcp"][0]["calls"][0]["result"] = 6
    path.write_text(json.dumps(data))
    result = run_cli("test", recorded)
    assert result.exit_code == 1, result.stdout + result.stderr
    out = result.stdout
    assert "FAIL adds-and-echoes" in out
    assert "request 2 of worker 'main' (main) differs from the recorded one" in out
    assert '-        "content": 5,' in out and '+        "content": 6,' in out


@pytest.mark.process
def test_a_call_the_cassette_did_not_record_fails_the_case_with_the_difference(recorded: Path) -> None:
    path = recorded / "tests" / "cassettes" / "main.json"
    data = json.loads(path.read_text())
    data["remote_mcp"][0]["calls"][0]["args"] = {"a": 2, "b": 4}
    path.write_text(json.dumps(data))
    result = run_cli("test", recorded)
    assert result.exit_code == 1, result.stdout + result.stderr
    out = result.stdout
    assert ("worker call main called tool 'add' of remote MCP server 'echo' with arguments the cassette did not "
            "record") in out
    assert '-  "b": 4' in out and '+  "b": 3' in out


def test_a_server_the_cassette_did_not_record_or_listed_otherwise_is_not_reached() -> None:
    """The replay stands in for a remote server without starting it: one the cassette did not
    record fails the run naming what it did record; one whose locked tools differ from the recorded
    listing makes the case stale."""
    import asyncio

    from llm_do.runtime.recording.cassette import Cassette
    from llm_do.runtime.recording.replay import CassetteStale, Replayer, ReplayMismatch

    cassette = Cassette.model_validate({"project": "remote", "bundle_digest": "sha256:0", "worker": "main", "inputs": ["go"],
                                        "remote_mcp": [{"name": "echo", "tools": [{"name": "add", "parameters": {"type": "object"}}]}]})
    replayer = Replayer(cassette, bundle=None)

    def never() -> None:
        raise AssertionError("a replay started the server")

    node = {"name": "docs", "server": {"url": "https://example.com/mcp"}, "tools": {}}
    with pytest.raises(ReplayMismatch, match=r"remote MCP server 'docs', which the cassette did not record \(it recorded: echo\)"):
        asyncio.run(replayer.remote_mcp("docs", node, never))  # type: ignore[arg-type]
    node = {"name": "echo", "server": {"url": "https://example.com/mcp"}, "prefix": "e",
            "tools": {"e_add": {"parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}, "e_echo": {"parameters": {}}}}
    with pytest.raises(CassetteStale) as stale:
        asyncio.run(replayer.remote_mcp("echo", node, never))  # type: ignore[arg-type]
    assert stale.value.changes == ["input schema of tool add of MCP server echo changed since the recording",
                                   "tool echo of MCP server echo added since the recording"]


def test_an_opaque_prefixed_server_replays_its_listing_answers_and_failures() -> None:
    """In process (the test server's object): what the recording wrapper wrote down, read back from
    JSON, serves an opaque, prefixed server's tools and answers as the server did, failures included."""
    import asyncio
    from types import SimpleNamespace

    from pydantic_ai import RunContext
    from pydantic_ai.exceptions import ModelRetry, ToolFailed
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.models.test import TestModel
    from pydantic_ai.usage import RunUsage

    from llm_do.bundle.views import UsedToolset
    from llm_do.runtime.recording.call_sites import CallSites
    from llm_do.runtime.recording.cassette import RemoteServer
    from llm_do.runtime.recording.remote_mcp import RecordingServer
    from llm_do.runtime.recording.remote_replay import ReplayedServer
    from llm_do.runtime.toolsets.mcp import LockedMcpToolset
    from tests.support.mcp import in_process_server

    node = {"name": "echo", "kind": "mcp", "prefix": "ec", "opaque": True, "tools": {}}

    class Servers:
        def __init__(self, server: object) -> None:
            self.started = server

        async def server(self, key: str, node: dict) -> object:
            return self.started

    async def through(server: object) -> tuple[dict, list]:
        toolset = LockedMcpToolset(SimpleNamespace(mcp_servers=Servers(server)), node, UsedToolset("echo", None, {}, "ask"))  # type: ignore[arg-type]
        ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
        await server.list_tools()  # type: ignore[attr-defined]
        tools = await toolset.get_tools(ctx)
        seen = {name: (t.tool_def.description, t.tool_def.parameters_json_schema) for name, t in tools.items()}
        out: list = [await toolset.call_tool("ec_add", {"a": 1, "b": 2}, ctx, tools["ec_add"]),
                     await toolset.call_tool("ec_echo", {"text": "hi"}, ctx, tools["ec_echo"])]
        try:
            await toolset.call_tool("ec_add", {"a": "one"}, ctx, tools["ec_add"])
        except (ToolFailed, ModelRetry) as exc:
            out.append((type(exc).__name__, str(exc)))
        return seen, out

    async def record() -> tuple[dict, list, RemoteServer]:
        record = RemoteServer(name="echo")
        async with MCPToolset(in_process_server(), tool_error_behavior="failed") as real:
            seen, out = await through(RecordingServer(real, record, CallSites()))
        return seen, out, record

    seen, answered, record = asyncio.run(record())
    assert sorted(seen) == ["ec_add", "ec_echo", "ec_secret", "ec_wait"]
    assert answered[:2] == [3, "echo: hi"] and answered[2][0] == "ToolFailed"
    assert [c.outcome for c in record.calls] == ["success", "success", "failed"]
    replayed = ReplayedServer(RemoteServer.model_validate_json(record.model_dump_json()), CallSites())
    assert asyncio.run(through(replayed)) == (seen, answered)
    assert replayed.unused() == []


def test_recording_again_offline_reaches_no_remote_server(recorded: Path, listener: tuple[str, list[bytes]]) -> None:
    """`llm-do test --record` plays the cassette's script again, offline: the run that would start the
    remote server fails instead (a listener at its address hears nothing), and the cassette is kept."""
    url, heard = listener
    manifest = recorded / "project.json"
    data = json.loads(manifest.read_text())
    data["mcp_servers"]["echo"]["url"] = url
    manifest.write_text(json.dumps(data))
    (recorded / "main.worker").write_text("---\ntoolsets: [echo]\n---\nUse the tools, please.\n")
    cassette = recorded / "tests" / "cassettes" / "main.json"
    before = cassette.read_bytes()
    result = run_cli("test", recorded, "--record", env={"ECHO_TOKEN": TOKEN})
    assert result.exit_code == 1, result.stdout + result.stderr
    assert "the run failed: remote MCP server 'echo' is not reached without --live" in result.stdout
    assert "not recorded: the run did not pass the case, so tests/cassettes/main.json is kept as it was" in result.stdout
    assert cassette.read_bytes() == before and heard == []

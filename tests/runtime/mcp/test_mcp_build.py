"""Build and lint with MCP servers: tools listed (by starting the real server) and locked, the
checks of `mcp_servers` with their positions, and nothing started with --no-import."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from llm_do.bundle.mcp_config import config_hash
from llm_do.bundle.schema import validate as validate_bundle
from tests.support.cli import run_cli, write_project
from tests.support.mcp import STDIO_SERVER, mcp_project


def _lint(tmp_path: Path, files: dict[str, Any], *flags: str) -> list[dict[str, Any]]:
    root = write_project(tmp_path / "lintproj", files)
    result = run_cli("lint", root, "--format", "json", *flags)
    return result.json()["diagnostics"]


def _codes(diagnostics: list[dict[str, Any]]) -> list[tuple[str, str, int, int]]:
    return [(d["code"], d["severity"], d["line"], d["column"]) for d in diagnostics]


@pytest.mark.process
def test_the_listed_tools_are_locked_with_the_servers_configuration(mcp_build, snapshot: SnapshotAssertion) -> None:
    server = {**STDIO_SERVER, "allowed_tools": ["echo", "add"]}
    bundle = mcp_build(mcp_project(server))
    doc = json.loads(bundle.read_text())
    validate_bundle(doc)
    node = doc["toolsets"]["echo"]
    assert node["server"] == {k: v for k, v in STDIO_SERVER.items()}  # as written: ${VAR}s unexpanded
    assert node["config_hash"] == config_hash(STDIO_SERVER)
    assert sorted(node["tools"]) == ["add", "echo"]  # `secret` and `wait` are not allowed, so not locked
    main = doc["workers"]["main"]
    assert main["tools"] == {"add": {"approval": "ask", "toolset": "echo"}, "echo": {"approval": "ask", "toolset": "echo"}}
    assert node == snapshot(name="toolset")
    assert main["capabilities"] == snapshot(name="capabilities")


@pytest.mark.process
def test_a_prefix_renames_the_exposed_tools(mcp_build) -> None:
    bundle = mcp_build(mcp_project({**STDIO_SERVER, "prefix": "ec", "allowed_tools": ["echo"]}))
    doc = json.loads(bundle.read_text())
    assert list(doc["toolsets"]["echo"]["tools"]) == ["ec_echo"]
    assert doc["workers"]["main"]["capabilities"] == [{"capability": "mcp:echo:echo", "tool": "ec_echo",
                                                     "labels": ["untrusted", "egress"]}]  # an MCP tool by default


@pytest.mark.process
def test_the_http_server_is_listed_and_locked(mcp_build, http_server: str) -> None:
    bundle = mcp_build(mcp_project({"url": http_server, "allowed_tools": ["echo"]}))
    node = json.loads(bundle.read_text())["toolsets"]["echo"]
    assert node["server"] == {"url": http_server}
    assert node["tools"]["echo"]["parameters"]["required"] == ["text"]


@pytest.mark.process
def test_every_page_of_a_servers_tools_is_listed_and_locked(mcp_build) -> None:
    """A server that lists its tools a page at a time (tests/runtime/mcp/paged_server.py): the
    listing follows its cursors to the last page."""
    server = {"command": "${LLM_DO_TEST_PYTHON}", "args": [str(Path(__file__).with_name("paged_server.py"))]}
    bundle = mcp_build(mcp_project(server, front="toolsets: [paged]", name="paged"))
    node = json.loads(bundle.read_text())["toolsets"]["paged"]
    assert sorted(node["tools"]) == ["first", "second", "third"]
    assert node["tools"]["third"]["parameters"]["required"] == ["text"]


@pytest.mark.process
def test_the_same_project_builds_to_the_same_bytes(mcp_build) -> None:
    first = mcp_build(mcp_project(STDIO_SERVER), name="a").read_bytes()
    second = mcp_build(mcp_project(STDIO_SERVER), name="b").read_bytes()
    assert first == second


@pytest.mark.process
def test_an_unlistable_server_is_an_error_at_its_name(tmp_path: Path, server_env, monkeypatch) -> None:
    monkeypatch.setenv("ECHO_FAIL", "1")
    [d] = _lint(tmp_path, mcp_project(STDIO_SERVER))
    assert (d["code"], d["severity"], d["line"], d["column"]) == ("X001", "error", 10, 5)  # at the server's name
    assert "MCP server 'echo' could not be listed" in d["message"]
    assert "refusing to start (ECHO_FAIL is 1)" in d["message"]  # the server's own last word on stderr


@pytest.mark.process
def test_no_secret_from_the_environment_is_reported_in_any_format(tmp_path: Path, server_env, monkeypatch) -> None:
    """A `${VAR}` value that a server's error repeats (a command not found) or that the server says
    on stderr is written back as `${VAR}`, in every lint format."""
    from llm_do.cli.commands._compile import as_report
    from llm_do.compiler.pipeline import compile_project
    from llm_do.compiler.report.diagnostics import RENDERERS

    monkeypatch.setenv("SRV_TOKEN", "ghp_SECRET123")
    monkeypatch.setenv("ECHO_FAIL", "s3cr3t-LEAK")
    files = mcp_project(STDIO_SERVER)
    files["project.json"]["mcp_servers"]["missing"] = {"command": "${SRV_TOKEN}"}
    root = write_project(tmp_path / "secrets", files)
    result = compile_project(root, emit_bundle=False)
    said = {d.message.partition("could not be listed: ")[0]: d.message for d in result.diagnostics if d.code == "X001"}
    assert set(said) == {"MCP server 'echo' ", "MCP server 'missing' "}
    assert "'${SRV_TOKEN}'" in said["MCP server 'missing' "]  # the command as written, not as the environment fills it
    assert "(ECHO_FAIL is ${ECHO_FAIL})" in said["MCP server 'echo' "]
    for fmt in RENDERERS:
        rendered = RENDERERS[fmt]([as_report("secrets", result)])
        assert "${SRV_TOKEN}" in rendered, fmt
        assert "SECRET123" not in rendered and "s3cr3t" not in rendered, fmt


@pytest.mark.process
def test_an_unset_variable_is_an_error_naming_it(tmp_path: Path, server_env, monkeypatch) -> None:
    monkeypatch.delenv("LLM_DO_TEST_MCP_SERVER")
    [d] = _lint(tmp_path, mcp_project(STDIO_SERVER))
    assert d["code"] == "X001"
    assert "LLM_DO_TEST_MCP_SERVER is not set" in d["message"]


@pytest.mark.process
def test_allowed_tools_naming_a_missing_tool(tmp_path: Path, server_env) -> None:
    [d] = _lint(tmp_path, mcp_project({**STDIO_SERVER, "allowed_tools": ["echo", "ehco2"]}))
    assert _codes([d]) == [("X002", "error", 23, 9)]  # at the item of allowed_tools
    assert d["message"] == "MCP server 'echo' has no tool 'ehco2'"
    assert d["hint"] == "did you mean 'echo'?"


def test_an_opaque_server_is_not_started_and_warns(tmp_path: Path, server_env, monkeypatch) -> None:
    monkeypatch.setenv("ECHO_FAIL", "1")  # it would fail: it is not started
    root = write_project(tmp_path / "p", mcp_project({**STDIO_SERVER, "opaque": True}))
    result = run_cli("build", root)
    assert result.exit_code == 0, result.stderr
    assert "X003" in result.stdout + result.stderr
    doc = json.loads((root / "bundle.lock").read_text())
    assert doc["toolsets"]["echo"]["tools"] == {}
    assert doc["workers"]["main"]["toolsets"] == [{"opaque_approval": "ask", "settings": {}, "toolset": "echo"}]
    assert doc["workers"]["main"]["capabilities"] == [{"capability": "custom:*", "toolset": "echo", "labels": ["untrusted", "egress"]}]
    assert not server_env["pid"].exists()


def test_no_import_starts_nothing(tmp_path: Path, server_env) -> None:
    diagnostics = _lint(tmp_path, mcp_project(STDIO_SERVER), "--no-import")
    assert [d["code"] for d in diagnostics] == ["X006"]
    assert not server_env["pid"].exists()


def test_server_names_share_the_toolset_namespace(tmp_path: Path, server_env) -> None:
    files = mcp_project({"command": "x"}, name="filesystem_project")
    files["project.json"]["mcp_servers"]["main"] = {"command": "x"}
    found = _lint(tmp_path, files, "--no-import")
    by_code = {d["code"]: d for d in found}
    assert by_code["X004"]["message"] == "MCP server 'filesystem_project' has the name of a stdlib toolset"
    assert by_code["N002"]["message"] == "worker 'main' has the name of an MCP server"


def test_a_server_needs_one_of_command_and_url(tmp_path: Path, server_env) -> None:
    [d] = [d for d in _lint(tmp_path, mcp_project({"args": ["x"]}), "--no-import") if d["code"] != "X006"]
    assert (d["code"], d["message"]) == ("X005", "MCP server 'echo' has neither `command` nor `url`")
    found = _lint(tmp_path, mcp_project({"url": "http://127.0.0.1:1/mcp", "env": {"A": "b"}}), "--no-import")
    [d] = [d for d in found if d["code"] != "X006"]
    assert (d["code"], d["message"]) == ("X005", "MCP server 'echo' has `env`, which only a stdio server takes")


@pytest.mark.process
def test_tool_names_conflict_across_servers(tmp_path: Path, server_env) -> None:
    files = mcp_project({**STDIO_SERVER, "allowed_tools": ["echo"]}, front="toolsets: [echo, echo2]")
    files["project.json"]["mcp_servers"]["echo2"] = {**STDIO_SERVER, "allowed_tools": ["echo"]}
    [d] = [d for d in _lint(tmp_path, files) if d["code"] == "N005"]
    assert d["message"] == "tool 'echo' from 'echo2' conflicts with 'echo' from 'echo'"


@pytest.mark.process
def test_approval_conditions_are_checked_against_the_locked_schema(tmp_path: Path, server_env) -> None:
    files = mcp_project({**STDIO_SERVER, "allowed_tools": ["echo", "add"]},
                        front="toolsets: [echo]\napprovals: [\"allow echo(txt == 'hi')\", \"allow add(a ~ 'x')\"]")
    codes = sorted(d["code"] for d in _lint(tmp_path, files))
    assert codes == ["A003", "A005"]


@pytest.mark.process
def test_without_the_mcp_extra_the_build_says_what_to_install(tmp_path: Path, server_env, monkeypatch) -> None:
    shadow = tmp_path / "shadow"
    for package in ("mcp", "fastmcp"):  # the extra brings both: the listing imports the first
        (shadow / package).mkdir(parents=True)
        (shadow / package / "__init__.py").write_text(f"raise ImportError('{package} is not installed')\n")
    monkeypatch.setenv("PYTHONPATH", str(shadow))
    [d] = _lint(tmp_path, mcp_project(STDIO_SERVER))
    assert d["code"] == "X001"
    assert d["message"] == ("MCP server 'echo' could not be listed: "
                            "MCP servers need llm-do's `mcp` extra: pip install 'llm-do[mcp]'")


def test_a_credential_written_literally_warns_at_its_value(tmp_path: Path, server_env) -> None:
    server = {"url": "http://127.0.0.1:1/mcp", "headers": {"Authorization": "Bearer sk-1", "X-Trace": "on",
                                                           "X-Api-Key": "${KEY}"}}
    found = [d for d in _lint(tmp_path, mcp_project(server), "--no-import") if d["code"] != "X006"]
    assert _codes(found) == [("X007", "warning", 13, 26)]
    assert found[0]["message"] == "MCP server 'echo': `headers.Authorization` is written literally, so bundle.lock would hold it"


@pytest.mark.process
def test_the_listing_child_loads_no_pydantic_ai() -> None:
    """Listing a server at build costs the official `mcp` client (and the server): not pydantic-ai,
    nor FastMCP, which a run's toolsets use."""
    probe = ("import sys, runpy\n"
             "runpy.run_module('llm_do.compiler.facts.mcp_child', run_name='probe')\n"
             "from mcp import Client\n"
             "from mcp.client.stdio import stdio_client\n"
             "from mcp.client.streamable_http import streamable_http_client\n"
             "from mcp.client.sse import sse_client\n"
             "from llm_do.bundle.mcp_config import UnsetVariable\n"
             "from llm_do.runtime.toolsets.mcp_transport import failure_text, listed_tools\n"
             "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic_ai', 'fastmcp')))\n")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"

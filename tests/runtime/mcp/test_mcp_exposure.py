"""What a worker sees of a server: the locked tools with the locked schemas, nothing else; an
opaque server's tools as it lists them, prefixed and carrying the worker's approval. Against the
test server in process (pydantic-ai's MCP toolset takes a server object), so no subprocess."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from pydantic_ai.mcp import MCPToolset
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RunUsage

from llm_do.bundle.approval import APPROVAL_METADATA_KEY, TOOLSET_METADATA_KEY
from llm_do.bundle.views import UsedToolset
from llm_do.runtime.toolsets.mcp import LockedMcpToolset
from tests.support.mcp import in_process_server


class _Servers:
    def __init__(self, server: MCPToolset[Any]) -> None:
        self.started = server

    async def server(self, key: str, node: dict[str, Any]) -> MCPToolset[Any]:
        return self.started


LOCKED_ECHO = {"description": "As locked.", "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}


async def _tools(node: dict[str, Any], use: UsedToolset) -> tuple[dict[str, Any], Any]:
    from pydantic_ai import RunContext

    server = MCPToolset(in_process_server())
    async with server:
        toolset = LockedMcpToolset(SimpleNamespace(mcp_servers=_Servers(server)), node, use)  # type: ignore[arg-type]
        ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
        tools = await toolset.get_tools(ctx)
        first = sorted(tools)[0]
        result = await toolset.call_tool(first, {"text": "hi"} if first.endswith("echo") else {"a": 1, "b": 2}, ctx,
                                         tools[first])
        return tools, result


def test_only_the_locked_tools_are_exposed_as_locked() -> None:
    node = {"name": "echo", "kind": "mcp", "prefix": "ec", "opaque": False, "tools": {"ec_echo": LOCKED_ECHO}}
    tools, result = asyncio.run(_tools(node, UsedToolset("echo", None, {}, None)))
    assert list(tools) == ["ec_echo"]  # add, wait and secret are on the server, not in the lock
    tool_def = tools["ec_echo"].tool_def
    assert (tool_def.description, tool_def.parameters_json_schema) == ("As locked.", LOCKED_ECHO["parameters"])
    assert tool_def.metadata == {TOOLSET_METADATA_KEY: "echo"}
    assert result == "echo: hi"  # called on the server by its own name


def test_an_opaque_server_exposes_what_it_lists_with_the_workers_approval() -> None:
    node = {"name": "echo", "kind": "mcp", "prefix": "ec", "opaque": True, "tools": {}}
    tools, result = asyncio.run(_tools(node, UsedToolset("echo", None, {}, "ask")))
    assert sorted(tools) == ["ec_add", "ec_echo", "ec_secret", "ec_wait"]
    metadata = tools["ec_add"].tool_def.metadata
    assert (metadata[APPROVAL_METADATA_KEY], metadata[TOOLSET_METADATA_KEY]) == ("ask", "echo")
    assert result == 3

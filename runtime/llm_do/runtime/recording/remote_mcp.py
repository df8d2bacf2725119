"""Remote MCP servers (`url`) while recording: each started server is wrapped by one that passes every
listing and call on and writes down what the server listed (names, descriptions, input schemas) and
what each call was given and answered, placed by the call path of the worker call that made it. The
server's address and headers are never written (they may hold `${VAR}` secrets); what it answered
goes through the cassette's redaction like everything else."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from pydantic_ai.exceptions import ModelRetry, ToolFailed

from ..call_scope import RUNNING_TOOL_CALL
from .cassette import ListedTool, RemoteCall, RemoteServer
from .message_data import tool_return_data

if TYPE_CHECKING:
    from pydantic import JsonValue
    from pydantic_ai import RunContext
    from pydantic_ai.tools import ToolDefinition
    from pydantic_ai.toolsets import ToolsetTool

    from ..call_scope import CallContext
    from ..config import ListedMcpTool, McpServer
    from .call_sites import CallSites


def plain_args(args: object) -> dict[str, JsonValue]:
    """Arguments as JSON reads them back: a recorded call and a replayed one compare equal when equal."""
    plain: dict[str, JsonValue] = json.loads(json.dumps(args or {}, sort_keys=True, default=str))
    return plain


class RecordingServer:
    """A started remote server (pydantic-ai's `MCPToolset`), recording what it lists and answers.
    Offers what the run's MCP toolsets use of a server."""

    def __init__(self, server: McpServer, record: RemoteServer, sites: CallSites) -> None:
        self.server = server
        self.record = record
        self.sites = sites

    async def list_tools(self) -> list[ListedMcpTool]:
        tools = await self.server.list_tools()
        self.record.tools = sorted((ListedTool(name=t.name, description=t.description, parameters=dict(t.input_schema))
                                    for t in tools), key=lambda t: t.name)
        return list(tools)

    async def get_tools(self, ctx: RunContext[CallContext]) -> dict[str, ToolsetTool[CallContext]]:
        return await self.server.get_tools(ctx)

    def tool_for_tool_def(self, tool_def: ToolDefinition, *, ctx: RunContext[CallContext]) -> ToolsetTool[CallContext]:
        return self.server.tool_for_tool_def(tool_def, ctx=ctx)

    async def direct_call_tool(self, name: str, args: dict[str, object]) -> object:
        where = self.sites.where(RUNNING_TOOL_CALL.get())
        call = RemoteCall(path=where[0] if where else "", at=where[1] if where else None, tool=name, args=plain_args(args))
        try:
            result = await self.server.direct_call_tool(name, args)
        except ToolFailed as exc:
            self.record.calls.append(call.model_copy(update={"outcome": "failed", "result": exc.message}))
            raise
        except ModelRetry as exc:
            self.record.calls.append(call.model_copy(update={"outcome": "retry", "result": exc.message}))
            raise
        self.record.calls.append(call.model_copy(update={"result": tool_return_data(result)}))
        return result


def finished(record: RemoteServer) -> RemoteServer:
    """The record in the file's order: calls by where they were made, not by when parallel ones ran."""
    record.calls.sort(key=lambda c: (c.path, c.at or "", c.tool, json.dumps(c.args, sort_keys=True)))
    return record

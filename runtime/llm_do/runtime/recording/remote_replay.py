"""Remote MCP servers (`url`) while replaying: a toolset standing in for each server, started by
nobody and reaching no network, that lists what the server listed when recorded and answers each
call with the recorded answer of the call made at the same call path with the same tool and
arguments. A call the cassette did not record ends the case with the difference, as a differing
model request does."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic_ai import RunContext
from pydantic_ai.exceptions import ModelRetry, ToolFailed
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
from pydantic_core import SchemaValidator, core_schema

from ..call_scope import RUNNING_TOOL_CALL
from .call_sites import CallSites
from .cassette import RemoteCall, RemoteServer
from .message_data import tool_return_of
from .remote_mcp import plain_args
from .replay_errors import ReplayMismatch

if TYPE_CHECKING:
    from pydantic import JsonValue

    from llm_do.bundle.model import ToolsetNode

    from ..call_scope import CallContext

ARGS_VALIDATOR = SchemaValidator(core_schema.dict_schema(core_schema.str_schema(), core_schema.any_schema()))
"""A replayed tool's arguments are checked as pydantic-ai checks an MCP tool's: a JSON object."""


@dataclass(frozen=True)
class Listed:
    """One recorded tool, shaped as an MCP listing's (what the run's lock check reads)."""

    name: str
    description: str | None
    input_schema: dict[str, Any]


def locked_changes(name: str, node: ToolsetNode, record: RemoteServer) -> list[str]:
    """How the tools the bundle locks differ from what the server listed when recorded."""
    listed = {t.name: t.parameters for t in record.tools}
    prefix = node.get("prefix")
    out = []
    for exposed, tool in sorted((node.get("tools") or {}).items()):
        tool_name = exposed[len(prefix) + 1:] if prefix else exposed
        if tool_name not in listed:
            out.append(f"tool {tool_name} of MCP server {name} added since the recording")
        elif plain_args(listed[tool_name]) != plain_args(tool.get("parameters")):
            out.append(f"input schema of tool {tool_name} of MCP server {name} changed since the recording")
    return out


class ReplayedServer(AbstractToolset["CallContext"]):
    """The recorded listing and answers of one remote server."""

    def __init__(self, record: RemoteServer, sites: CallSites) -> None:
        self.record = record
        self.sites = sites
        self.used: set[int] = set()
        """Indexes of the recorded calls answered so far."""

    @property
    def id(self) -> str | None:
        return f"mcp:{self.record.name}"

    async def list_tools(self) -> list[Listed]:
        return [Listed(t.name, t.description, t.parameters) for t in self.record.tools]

    async def get_tools(self, ctx: RunContext[CallContext]) -> dict[str, ToolsetTool[CallContext]]:
        return {t.name: self.tool_for_tool_def(ToolDefinition(name=t.name, description=t.description,
                                                              parameters_json_schema=t.parameters), ctx=ctx)
                for t in self.record.tools}

    def tool_for_tool_def(self, tool_def: ToolDefinition, *, ctx: RunContext[CallContext]) -> ToolsetTool[CallContext]:
        return ToolsetTool(toolset=self, tool_def=tool_def, max_retries=ctx.max_retries, args_validator=ARGS_VALIDATOR)

    async def call_tool(self, name: str, tool_args: dict[str, object], ctx: RunContext[CallContext],
                        tool: ToolsetTool[CallContext]) -> object:
        return await self.direct_call_tool(name, tool_args)

    async def direct_call_tool(self, name: str, args: dict[str, object]) -> object:
        where = self.sites.where(RUNNING_TOOL_CALL.get())
        path = where[0] if where else ""
        plain = plain_args(args)
        same = [(i, c) for i, c in enumerate(self.record.calls) if i not in self.used and c.path == path and c.tool == name]
        found = next(((i, c) for i, c in same if c.args == plain), None)
        if found is None:
            raise ReplayMismatch(self._unrecorded(path, name, plain, [c for _, c in same]))
        index, call = found
        self.used.add(index)
        if call.outcome == "failed":
            raise ToolFailed(str(call.result))
        if call.outcome == "retry":
            raise ModelRetry(str(call.result))
        return tool_return_of(call.result)

    def unused(self) -> list[str]:
        return [f"{c.path}: {self.record.name}.{c.tool}" for i, c in enumerate(self.record.calls) if i not in self.used]

    def _unrecorded(self, path: str, tool: str, args: dict[str, JsonValue], same: list[RemoteCall]) -> str:
        head = (f"worker call {path or '(none)'} called tool '{tool}' of remote MCP server '{self.record.name}' with "
                "arguments the cassette did not record")
        if not same:
            recorded = sorted({f"{c.path}: {c.tool}" for c in self.record.calls}) or ["none"]
            return f"{head} (it recorded calls of this server at: {', '.join(recorded)})"
        return f"{head}:\n{args_diff(same[0].args, args)}"


def args_diff(recorded: object, live: object) -> str:
    """A unified diff of two calls' arguments as indented JSON."""
    import difflib

    def lines(value: object) -> list[str]:
        return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).splitlines()

    return "\n".join(difflib.unified_diff(lines(recorded), lines(live), "recorded", "replayed", lineterm="", n=2))

"""MCP servers as toolsets: started for a run, checked against the lock, stopped with the run.

A server lives as long as the run (`McpServers`, opened by the runtime around the outermost call):
required servers are started and their tools checked when the run starts, before any model call;
a `required: false` one when a worker first lists its tools. Each worker call gets a
`LockedMcpToolset` over the run's server that exposes only the tools the bundle locked, with the
locked schemas (what the model sees is what the build recorded, and what the rules were checked
against); a server whose live tools differ from the lock refuses the run (exit 3).
Imported only when a worker uses MCP: the plain `exec` path never loads an MCP client. A remote
server (`url`) goes through the run's `RuntimeConfig.remote_mcp` when it has one: recording wraps
the started server, a replay stands in for it and starts nothing.

A stdio server may start processes that leave its process group or session (a wrapper's helper, a
double-forked daemon): llm-do becomes their subreaper before starting one (Linux), marks each
server's environment with the run's `LLM_DO_MCP_RUN` value, and when the servers stop kills every
descendant that carries it (`toolkit.processes.end_marked`), after a normal end too.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from contextlib import AsyncExitStack
from dataclasses import replace
from typing import TYPE_CHECKING

from pydantic_ai import RunContext
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool

from llm_do.bundle.approval import APPROVAL_METADATA_KEY, TOOLSET_METADATA_KEY
from llm_do.bundle.errors import REBUILD, BundleRefused
from llm_do.bundle.mcp_config import MISSING_CLIENT, UnsetVariable, describe, redacted, start_timeout
from llm_do.bundle.views import UsedToolset, WorkerSpec

from ..errors import RunFailed
from .mcp_transport import failure_text, transport

if TYPE_CHECKING:
    from pydantic_ai.mcp import MCPToolset

    from llm_do.bundle.model import McpConnection, ToolsetNode

    from ..bundle import LoadedBundle
    from ..call_scope import CallContext, RunHost
    from ..config import McpServer, RemoteMcp


RUN_MARK = "LLM_DO_MCP_RUN"
"""The environment variable that marks the processes of one run's stdio servers (and whatever they start)."""


def _plain(value: object) -> object:
    """A schema as JSON reads it back: the lock's copy and the live one compare equal when equal."""
    return json.loads(json.dumps(value, sort_keys=True))


def locked_differences(node: ToolsetNode, live: Mapping[str, Mapping[str, object]]) -> str | None:
    """Why the live tools (server name -> input schema) do not match the lock, or None."""
    server = node["name"]
    prefix = node.get("prefix")
    for exposed, tool in sorted(node.get("tools", {}).items()):
        name = exposed[len(prefix) + 1 :] if prefix else exposed
        if name not in live:
            return f"MCP server '{server}' no longer has the tool '{name}' locked in the bundle; {REBUILD}"
        if _plain(live[name]) != _plain(tool["parameters"]):
            return (f"the input schema of tool '{name}' of MCP server '{server}' changed since the build; "
                    f"review the change and {REBUILD}")
    return None


def _connection(node: ToolsetNode) -> McpConnection:
    """How to reach an MCP toolset's server (the bundle gives every MCP node one)."""
    connection = node["server"]
    assert connection is not None, node["name"]
    return connection


class McpServers:
    """The run's MCP servers: started when needed, kept for the run, stopped when it ends
    (normally, on Ctrl-C, on a timeout: the exit stack closes whatever was started)."""

    def __init__(self, bundle: LoadedBundle, environ: dict[str, str] | None = None,
                 remote: RemoteMcp | None = None) -> None:
        self.bundle = bundle
        self.remote = remote
        self.environ = dict(os.environ if environ is None else environ)
        self._servers: dict[str, McpServer] = {}
        self._stack = AsyncExitStack()
        self._mark: str | None = None
        """`LLM_DO_MCP_RUN=VALUE`, set when the first stdio server starts."""

    async def __aenter__(self) -> McpServers:
        try:
            for key in self.bundle.mcp_server_keys():
                node = self.bundle.toolset(key)
                if node is not None and node.get("required", True):
                    await self.server(key, node)
        except BaseException:  # the servers started before the one that failed are stopped too
            await self.__aexit__(None, None, None)
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._servers.clear()
        if self._mark is None:
            await self._stack.aclose()
            return
        from llm_do.toolkit.processes import carries, descendants, end_marked

        me = os.getpid()
        servers = {pid for pid in descendants(me) if carries(pid, self._mark)}
        trees = servers.union(*(descendants(pid) for pid in servers))
        try:
            await self._stack.aclose()
        finally:
            end_marked(self._mark, trees)

    def _stdio_mark(self) -> str:
        """This run's mark for its stdio servers; this process becomes their subreaper first."""
        if self._mark is None:
            import secrets

            from llm_do.toolkit.processes import become_subreaper

            become_subreaper()
            self._mark = f"{RUN_MARK}={os.getpid()}-{secrets.token_hex(8)}"
        return self._mark

    async def server(self, key: str, node: ToolsetNode) -> McpServer:
        """The started server of toolset `key`, started (and checked against the lock) if not yet; a
        remote one through the run's `remote_mcp` when it has one (recording, replaying)."""
        found = self._servers.get(key)
        if found is not None:
            return found
        name = node["name"]
        server: McpServer
        if _connection(node).get("url") and self.remote is not None:
            server = await self.remote(name, node, lambda: self._start(node))
        else:
            server = await self._start(node)
        live = {t.name: t.input_schema for t in await server.list_tools()}  # listed once started: cached
        if not node.get("opaque"):
            problem = locked_differences(node, live)
            if problem is not None:
                raise BundleRefused(problem)
        self._servers[key] = server
        return server

    async def _start(self, node: ToolsetNode) -> MCPToolset[CallContext]:
        try:
            from pydantic_ai.mcp import MCPToolset
        except ImportError:
            raise RunFailed(MISSING_CLIENT) from None

        name = node["name"]
        self._verify_files(name, node)
        log = self._stack.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace"))
        try:
            mark = None if _connection(node).get("url") else self._stdio_mark()
            server: MCPToolset[CallContext] = MCPToolset(transport(_connection(node), self.bundle.root, self.environ, log, mark),
                                                 id=f"mcp:{name}", tool_error_behavior="failed",
                                                 init_timeout=start_timeout())
            await self._stack.enter_async_context(server)
            await server.list_tools()  # a server that does not answer fails here, in one line
        except UnsetVariable as exc:
            raise RunFailed(f"MCP server '{name}' cannot be started: {exc}") from None
        except Exception as exc:  # a server that will not start or answer: one line, exit 1
            said = redacted(failure_text(exc, log), _connection(node), self.environ)  # no secret from ${VAR}s
            raise RunFailed(f"MCP server '{name}' ({describe(_connection(node))}) failed to start: {said}") from None
        return server

    def _verify_files(self, name: str, node: ToolsetNode) -> None:
        """Refuse to start a server whose project files (`mcp_sources`) changed since the build,
        as an edited Python tool is refused: checked now, just before it starts, since a worker
        may have written one since the bundle was loaded."""
        recorded = node.get("sources")
        if not recorded:
            return
        from llm_do.bundle.mcp_sources import changed_server_files

        changed = changed_server_files(self.bundle.root, recorded)
        if changed:
            raise BundleRefused(f"{self.bundle.path}: stale: {', '.join(changed)} changed since the build (run by MCP "
                                f"server '{name}'); {REBUILD}")


class LockedMcpToolset(AbstractToolset["CallContext"]):
    """One worker call's view of a run's MCP server: only the locked tools, as locked (an opaque
    server: every tool it lists, with the worker's approval for the toolset)."""

    def __init__(self, runtime: RunHost, node: ToolsetNode, use: UsedToolset) -> None:
        self.runtime = runtime
        self.node = node
        self.use = use
        self.key = use.toolset or node["name"]

    @property
    def id(self) -> str | None:
        return f"mcp:{self.node['name']}"

    async def _server(self) -> McpServer:
        servers = self.runtime.mcp_servers
        if servers is None:
            raise RunFailed(f"MCP server '{self.node['name']}' is used outside a run")
        return await servers.server(self.key, self.node)

    async def get_tools(self, ctx: RunContext[CallContext]) -> dict[str, ToolsetTool[CallContext]]:
        server = await self._server()
        if self.node.get("opaque"):
            live = await server.get_tools(ctx)
            approval = {APPROVAL_METADATA_KEY: self.use.opaque_approval} if self.use.opaque_approval else {}
            metadata = {TOOLSET_METADATA_KEY: self.key, **approval}
            return {self._exposed(name): replace(tool, toolset=self, tool_def=replace(
                        tool.tool_def, name=self._exposed(name), metadata={**(tool.tool_def.metadata or {}), **metadata}))
                    for name, tool in live.items()}
        tools = {}
        for name, locked in self.node.get("tools", {}).items():
            tool_def = ToolDefinition(name=name, description=locked.get("description"),
                                      parameters_json_schema=locked["parameters"], metadata={TOOLSET_METADATA_KEY: self.key})
            tools[name] = replace(server.tool_for_tool_def(tool_def, ctx=ctx), toolset=self)
        return tools

    async def call_tool(self, name: str, tool_args: dict[str, object], ctx: RunContext[CallContext],
                        tool: ToolsetTool[CallContext]) -> object:
        server = await self._server()
        prefix = self.node.get("prefix")
        return await server.direct_call_tool(name[len(prefix) + 1 :] if prefix else name, tool_args)

    def _exposed(self, name: str) -> str:
        prefix = self.node.get("prefix")
        return f"{prefix}_{name}" if prefix else name


def mcp_toolset(runtime: RunHost, node: ToolsetNode, use: UsedToolset, spec: WorkerSpec) -> AbstractToolset[CallContext]:
    return LockedMcpToolset(runtime, node, use)

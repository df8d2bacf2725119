"""How a server's configuration becomes a connection, and a failed start one line of text.

A run's MCP toolsets (pydantic-ai's, over a FastMCP transport: `transport`) and the compiler's
listing subprocess (`facts/mcp_child`: `listed_tools`) start a server alike: the same command,
arguments, environment and working directory, or the same URL and headers. Listing needs no more
than the official `mcp` client, which starts in about half the CPU time FastMCP does (FastMCP is
built on it), and imports no pydantic-ai.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import IO, Any

from llm_do.bundle.errors import innermost
from llm_do.bundle.mcp_config import expanded


def transport(config: Mapping[str, Any], root: Path, environ: dict[str, str], log_file: Any = None,
              mark: str | None = None) -> Any:
    """The FastMCP transport for a server's configuration as written, `${VAR}`s filled from
    `environ`: stdio started in the project root (not kept alive past its session, so nothing
    outlives the run) with `mark` (`NAME=VALUE`) added to its environment, or streamable HTTP (SSE
    for a URL ending in `/sse`)."""
    from fastmcp.client.transports import SSETransport, StdioTransport, StreamableHttpTransport

    if config.get("url"):
        url = expanded(config["url"], environ)
        headers = expanded(config.get("headers") or {}, environ) or None
        if url.rstrip("/").endswith("/sse"):
            return SSETransport(url, headers=headers)
        return StreamableHttpTransport(url, headers=headers)
    env = expanded(config.get("env") or {}, environ)
    if mark is not None:
        name, _, value = mark.partition("=")
        env = {**env, name: value}
    return StdioTransport(command=expanded(config["command"], environ), args=expanded(list(config.get("args") or []), environ),
                          env=env or None, cwd=str(root), keep_alive=False, log_file=log_file)


LISTING_PAGES = 250
"""At most this many pages of a server's tool list are read (FastMCP's own limit)."""


def _streams(config: dict[str, Any], root: Path, environ: dict[str, str], log_file: Any) -> AbstractAsyncContextManager[Any]:
    """The official `mcp` client's transport for a server's configuration, as `transport` reads it."""
    if config.get("url"):
        url = expanded(config["url"], environ)
        headers = expanded(config.get("headers") or {}, environ) or None
        if url.rstrip("/").endswith("/sse"):
            from mcp.client.sse import sse_client

            return sse_client(url, headers=headers)
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        return streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=expanded(config["command"], environ),
                                   args=expanded(list(config.get("args") or []), environ),
                                   env=expanded(config.get("env") or {}, environ) or None, cwd=str(root))
    return stdio_client(params, errlog=log_file)


async def listed_tools(config: dict[str, Any], root: Path, environ: dict[str, str], log_file: Any,
                       timeout: float) -> list[Any]:
    """Start the server as a run would (stdio: in the project root, stderr to `log_file`, stopped
    when listed; or over HTTP), and return every page of its tools (`mcp_types.Tool`), each request
    within `timeout` seconds."""
    from mcp import Client

    async with Client(_streams(config, root, environ, log_file), read_timeout_seconds=timeout, cache=None) as client:
        tools: list[Any] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(LISTING_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None or cursor in seen:
                return tools
            seen.add(cursor)
        raise RuntimeError(f"the server's tool list goes on past {LISTING_PAGES} pages")


def failure_text(exc: BaseException, log: IO[str]) -> str:
    """The failure in one line: the server's last word on stderr when it said something."""
    exc = innermost(exc)
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    try:
        log.seek(0)
        said = [line.strip() for line in log.read().splitlines() if line.strip()]
    except (OSError, ValueError):
        said = []
    if said:
        text += f" (the server said: {said[-1][:300]})"
    return " ".join(text.split())[:1000]

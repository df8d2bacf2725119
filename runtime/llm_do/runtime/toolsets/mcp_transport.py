"""How a server's configuration becomes a FastMCP transport, and a failed start one line of text.

Shared by the runtime's MCP toolsets and the compiler's listing subprocess (`facts/mcp_child`),
which imports no pydantic-ai: listing a server costs a FastMCP client, not an agent framework too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from llm_do.bundle.errors import innermost
from llm_do.bundle.mcp_config import expanded


def transport(config: dict[str, Any], root: Path, environ: dict[str, str], log_file: Any = None,
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


def failure_text(exc: BaseException, log: Any) -> str:
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

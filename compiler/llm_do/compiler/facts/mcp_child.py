"""The MCP listing subprocess: starts each MCP server of the project, lists its tools, stops it,
and answers with one JSON document (`McpFacts`) on stdout.

A server is a program the project names: starting one runs it, which is why this happens in a
separate, time-limited process, as importing the project's Python does (`child`). Servers are
listed one after another; each failure is data (the server's `error`), never a traceback.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from .records import McpFacts, McpRequest, McpServerFact, McpToolFact


async def _list(name: str, config: dict[str, Any], root: Path, timeout: float) -> McpServerFact:
    from llm_do.bundle.mcp_config import UnsetVariable, redacted
    from llm_do.runtime.toolsets.mcp_transport import failure_text, listed_tools

    environ = dict(os.environ)
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as log:
        try:
            tools = await listed_tools(config, root, environ, log, timeout)
        except UnsetVariable as exc:
            return McpServerFact(name=name, error=str(exc))
        except Exception as exc:  # what the environment filled in (a secret, perhaps) is written back as ${VAR}
            return McpServerFact(name=name, error=redacted(failure_text(exc, log), config, environ))
    return McpServerFact(name=name, tools=[McpToolFact(name=t.name, description=t.description, input_schema=t.input_schema)
                                           for t in tools])


async def _list_all(request: McpRequest) -> McpFacts:
    root = Path(request.root)
    facts = McpFacts()
    try:
        import mcp  # noqa: F401
    except ImportError:
        from llm_do.bundle.mcp_config import MISSING_CLIENT

        return McpFacts(failure=MISSING_CLIENT)
    for name, config in request.servers.items():
        facts.servers[name] = await _list(name, config, root, request.start_timeout)
    return facts


def main() -> None:
    request = McpRequest.model_validate_json(sys.stdin.read())
    out = sys.stdout
    sys.stdout = sys.stderr  # whatever else prints goes to stderr; stdout carries the answer only
    facts = asyncio.run(_list_all(request))
    out.write(facts.model_dump_json())
    out.flush()


if __name__ == "__main__":
    main()

"""The MCP listing subprocess: starts each MCP server of the project, lists its tools, stops it,
and answers with one JSON line (`McpFacts`) per server on stdout, written as soon as it is listed.

A server is a program the project names: starting one runs it, which is why this happens in a
separate, time-limited process, as importing the project's Python does (`child`). Servers are
listed one after another, each within the start time limit (`LLM_DO_MCP_START_TIMEOUT`); each
failure is data (the server's `error`), never a traceback. A project file the server is started
with (its command or an argument) that is no regular file, such as a named pipe the server would
wait on forever, is refused without starting it. If the whole listing passes the parent's time
limit, the lines written so far say which servers were listed, and so which one was not done.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path
from typing import IO, Any

from .answers import McpFacts, McpRequest, McpServerFact, McpToolFact

STOP_GRACE = 5.0
"""Past its start time limit, how long a server's listing may take to stop it (the `mcp` client
waits 2 s for it to exit, then ends its process group)."""


async def _list(name: str, config: dict[str, Any], root: Path, timeout: float) -> McpServerFact:
    from llm_do.bundle.mcp_config import UnsetVariable, redacted
    from llm_do.runtime.toolsets.mcp_transport import failure_text, listed_tools

    environ = dict(os.environ)
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as log:
        try:
            irregular = _irregular_file(config, root, environ)
            if irregular is not None:
                return McpServerFact(name=name, error=f"{irregular}: the server was not started")
            tools = await asyncio.wait_for(listed_tools(config, root, environ, log, timeout), timeout + STOP_GRACE)
        except UnsetVariable as exc:
            return McpServerFact(name=name, error=str(exc))
        except TimeoutError:
            return McpServerFact(name=name, error=f"it did not list its tools within {timeout:g} s (LLM_DO_MCP_START_TIMEOUT)")
        except Exception as exc:  # what the environment filled in (a secret, perhaps) is written back as ${VAR}
            return McpServerFact(name=name, error=redacted(failure_text(exc, log), config, environ))
    return McpServerFact(name=name, tools=[McpToolFact(name=t.name, description=t.description, input_schema=t.input_schema)
                                           for t in tools])


def _irregular_file(config: dict[str, Any], root: Path, environ: dict[str, str]) -> str | None:
    """The first project file a stdio server is started with (its command, an argument) that is
    neither a regular file nor a folder, said with what it is; None when there is none."""
    from llm_do.bundle.mcp_config import expanded
    from llm_do.bundle.regular_files import special_file

    if config.get("url"):
        return None
    inside = str(root) + os.sep
    for word in [expanded(config.get("command") or "", environ), *expanded(list(config.get("args") or []), environ)]:
        if not isinstance(word, str) or not word or word.startswith("-"):
            continue
        place = os.path.abspath(os.path.join(root, word))
        problem = special_file(place) if place.startswith(inside) else None
        if problem is not None:
            return f"'{Path(place[len(inside):]).as_posix()}' is {problem}"
    return None


async def _list_all(request: McpRequest, out: IO[str]) -> None:
    root = Path(request.root)
    try:
        import mcp  # noqa: F401
    except ImportError:
        from llm_do.bundle.mcp_config import MISSING_CLIENT

        _say(out, McpFacts(failure=MISSING_CLIENT))
        return
    for name, config in request.servers.items():
        _say(out, McpFacts(servers={name: await _list(name, config, root, request.start_timeout)}))


def _say(out: IO[str], facts: McpFacts) -> None:
    out.write(facts.model_dump_json() + "\n")
    out.flush()


def main() -> None:
    request = McpRequest.model_validate_json(sys.stdin.read())
    out = sys.stdout
    sys.stdout = sys.stderr  # whatever else prints goes to stderr; stdout carries the answer only
    asyncio.run(_list_all(request, out))


if __name__ == "__main__":
    main()

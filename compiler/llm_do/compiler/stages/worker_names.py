"""Whether a worker may have a name: one namespace holds workers, stdlib toolsets, Python toolsets
and MCP servers (language.md, toolsets). The resolve stage reports a clash (N001, N002); `llm-do
init --worker` asks the same question before it writes a worker."""

from __future__ import annotations

from collections.abc import Container, Mapping
from dataclasses import dataclass

from llm_do.stdlib.registry import STDLIB_TOOLSETS

from .. import codes


@dataclass(frozen=True)
class NameClash:
    code: codes.Rule
    message: str


def name_clash(name: str, workers: Mapping[str, str], python_toolsets: Container[str],
               mcp_servers: Container[str]) -> NameClash | None:
    """Why a worker cannot be named `name`, or None: `workers` maps each name taken to its file."""
    first = workers.get(name)
    if first is not None:
        return NameClash(codes.DUPLICATE_WORKER, f"a worker named '{name}' is already defined in '{first}'")
    if name in STDLIB_TOOLSETS or name in python_toolsets or name in mcp_servers:
        kind = ("a stdlib toolset" if name in STDLIB_TOOLSETS else "a Python toolset" if name in python_toolsets
                else "an MCP server")
        return NameClash(codes.WORKER_SHADOWS_TOOLSET, f"worker '{name}' has the name of {kind}")
    return None

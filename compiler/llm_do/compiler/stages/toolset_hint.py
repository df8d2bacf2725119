"""The hint of N003, a `toolsets:` entry that names nothing: the toolsets and workers it most likely
means, or, for the name of a tool (`shell`, `read_file`), the toolsets that have that tool."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from llm_do.stdlib.registry import STDLIB_TOOLSETS

from ..suggest import closest, closest_names, one_of
from .resolved import ResolvedProject


@dataclass(frozen=True)
class ToolsetHint:
    text: str | None
    names: list[str]
    """The toolsets and workers the hint suggests (a worker among them counts as called)."""


def tool_homes(project: ResolvedProject, worker: str) -> dict[str, list[str]]:
    """Each tool name a toolset can give `worker`, with the toolsets that give it, in the order of
    preference of a did-you-mean: stdlib, the worker's own Python, the project's, MCP servers."""
    homes: dict[str, list[str]] = {}

    def add(toolset: str, tools: Iterable[str]) -> None:
        for tool in tools:
            homes.setdefault(tool, []).append(toolset)

    for name, descriptor in STDLIB_TOOLSETS.items():
        add(name, [t.name for t in descriptor.tools])
    own = project.own_python.get(worker)
    python = {**{k: v for k, v in project.python_toolsets.items() if "." not in k}, **(own.toolsets if own else {})}
    for name, toolset in python.items():
        add(name, [t.name for t in toolset.fact.tools or ()])
    for name, server in sorted(project.mcp_servers.items()):
        add(name, sorted(server.tools or ()))
    return homes


def unknown_toolset_hint(name: str, names: Sequence[str], homes: Mapping[str, Sequence[str]]) -> ToolsetHint:
    """What to say of `toolsets: [name]` naming none of `names` (the toolsets and workers, in order
    of preference), given which toolsets have which tool (`homes`)."""
    if name in homes:
        toolsets = list(homes[name])
        return ToolsetHint(f"'{name}' is a tool, not a toolset: list the toolset that has it, {one_of(toolsets)}",
                           toolsets)
    near = closest_names(name, names)
    if near:
        return ToolsetHint(f"did you mean {one_of(near)}?", near)
    tool = closest(name, homes)
    if tool is not None:
        toolsets = list(homes[tool])
        return ToolsetHint(f"did you mean the tool '{tool}'? list the toolset that has it, {one_of(toolsets)}", toolsets)
    return ToolsetHint(None, [])

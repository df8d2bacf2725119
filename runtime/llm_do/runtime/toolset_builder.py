"""A worker call's toolsets, built fresh from the bundle, all behind one approval gate: a
`{kind: builder}` table over `toolsets/`, each builder imported only when a worker uses its kind
(MCP's client is loaded only by a worker that has an MCP server)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic_ai.toolsets import AbstractToolset, CombinedToolset

from llm_do.bundle.views import WorkerSpec

from .errors import ToolsetProblem

if TYPE_CHECKING:
    from .call_scope import RunHost
    from .toolsets.gate import ApprovalGate

BUILDERS: dict[str, str] = {
    "stdlib": "llm_do.runtime.toolsets.python:stdlib_toolset",
    "python": "llm_do.runtime.toolsets.python:python_toolset",
    "mcp": "llm_do.runtime.toolsets.mcp:mcp_toolset",
}
"""Bundle toolset kind -> `module:function(runtime, node, use, spec)` building its toolset."""

Wrap = Callable[[WorkerSpec, AbstractToolset[Any]], AbstractToolset[Any]]


def build_toolsets(runtime: RunHost, spec: WorkerSpec, wrap: Wrap | None = None) -> ApprovalGate | None:
    """The worker's toolsets behind the gate; None for a worker with no tools (nothing to gate).
    `wrap`: applied to the toolsets before the gate is put around them (a durable run's steps)."""
    toolsets: list[AbstractToolset[Any]] = []
    callees = [u.worker for u in spec.toolsets if u.worker]
    for use in spec.toolsets:
        if use.worker:
            continue
        node = runtime.bundle.toolset(use.toolset) if use.toolset else None
        if node is None:
            raise ToolsetProblem(f"the bundle has no toolset '{use.toolset}'")
        toolsets.append(_builder(node["kind"])(runtime, node, use, spec))
    if callees:
        from .toolsets.workers import WorkerCallToolset

        toolsets.append(WorkerCallToolset(runtime, callees))
    if not toolsets:
        return None
    from .toolsets.gate import ApprovalGate

    inner: AbstractToolset[Any] = toolsets[0] if len(toolsets) == 1 else CombinedToolset(toolsets)
    if wrap is not None:
        inner = wrap(spec, inner)
    return ApprovalGate(inner, spec=spec, runtime=runtime)


def _builder(kind: str) -> Any:
    target = BUILDERS.get(kind)
    if target is None:
        raise ToolsetProblem(f"this llm-do cannot build a toolset of kind '{kind}'")
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)

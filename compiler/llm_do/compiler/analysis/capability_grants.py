"""A worker's own capabilities, as the bundle records them (`WorkerNode.capabilities`).

Each grant is one capability `KIND:SCOPE` and what gives it: a tool of the worker, an opaque
toolset, or (for `env:`) the worker's model. Stdlib scopes come from the toolset's settings
(`ToolsetDescriptor.grants`), so they are per worker; a Python tool is `custom:NAME` plus what its
module's CAPABILITIES declares; an opaque toolset is `custom:*`; a call to a worker `call:NAME`; an MCP tool `mcp:SERVER:TOOL` (an opaque server `custom:*`).
Only a worker's own grants are stored: what it reaches through its callees is computed from the
call edges (`capabilities.py`), so the bundle grows with the number of workers, not with paths.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from llm_do.stdlib.registry import STDLIB_TOOLSETS

from ..provider_env import front_models, model_grants
from .flows.grant_labels import (
    capability_labels,
    label_policy,
    opaque_mcp_labels,
    opaque_python_labels,
    python_tool_labels,
)
from .flows.labels import NONE, sorted_labels

if TYPE_CHECKING:
    from ..stages.resolved import ResolvedProject, ResolvedTool, ResolvedWorker

CUSTOM = "custom"
CALL = "call"
MCP = "mcp"
ENV = "env"
OPAQUE = "custom:*"


def python_tool_capabilities(name: str, declared: list[str] | None) -> list[str]:
    """`custom:NAME` first, then what the module declares for the tool, sorted and deduplicated."""
    return [f"{CUSTOM}:{name}", *sorted(set(declared or ()) - {f"{CUSTOM}:{name}"})]


def mcp_capability(server: str, tool: str) -> str:
    """`mcp:SERVER:TOOL`, with the server's own name of the tool (not the prefixed one)."""
    return f"{MCP}:{server}:{tool}"


def worker_model(project: ResolvedProject, worker: ResolvedWorker) -> list[str]:
    """The models or patterns the worker may run on: its `model`, its `compatible_models`, or the
    project default."""
    return front_models(worker.parsed.front.model, worker.parsed.front.compatible_models, project.manifest.defaults.model)


def worker_grants(project: ResolvedProject, worker: ResolvedWorker) -> list[dict[str, Any]]:
    """The worker's grants, computed on first use and kept on the worker (callers must not change
    them: the same list goes into the bundle)."""
    if worker.grants is None:
        worker.grants = _worker_grants(project, worker)
    return worker.grants


def _worker_grants(project: ResolvedProject, worker: ResolvedWorker) -> list[dict[str, Any]]:
    scoped = {u.name: _stdlib_grants(u.name, u.settings) for u in worker.toolsets if u.kind == "stdlib"}
    grants: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    """(capability, tool, toolset, model) -> the grant; the first of equal keys is kept."""

    def add(key: tuple[str, str, str, str], grant: dict[str, Any], labels: frozenset[str],
            conditional: frozenset[str] | None = None) -> None:
        if key not in grants:
            if labels:
                grant["labels"] = sorted_labels(labels)
            if conditional is not None:
                grant["conditional_labels"] = sorted_labels(conditional)
            grants[key] = grant

    for name, tool in worker.tools.items():
        if tool.kind == "worker":
            add((f"{CALL}:{tool.worker}", name, "", ""), {"capability": f"{CALL}:{tool.worker}", "tool": name}, NONE)
            continue
        if tool.kind == "stdlib":
            for c in scoped[tool.group].get(name, ()):
                labels = capability_labels(project, c, stdlib=True)
                narrowed = _conditional_labels(project, tool, c, labels) if tool.rules else None
                add((c, name, "", ""), {"capability": c, "tool": name}, labels, narrowed)
        elif tool.kind == "mcp":
            c = mcp_capability(tool.group, project.mcp_servers[tool.group].server_tool(name))
            add((c, name, "", ""), {"capability": c, "tool": name}, capability_labels(project, c))
        else:
            own = f"{CUSTOM}:{name}"
            declared = _declared(project, worker.name, tool.toolset, name)
            for c in python_tool_capabilities(name, declared):
                labels = python_tool_labels(project, worker, tool) if c == own else capability_labels(project, c)
                narrowed = _destination_labels(tool, labels, declared) if tool.rules and labels else None
                add((c, name, "", ""), {"capability": c, "tool": name}, labels, narrowed)
    for use in worker.toolsets:
        if use.kind == "mcp" and use.opaque_approval is not None:
            add((OPAQUE, "", use.name, ""), {"capability": OPAQUE, "toolset": use.name}, opaque_mcp_labels(project, use.name))
        if use.kind == "python" and use.opaque_approval is not None:
            for c in [OPAQUE, *_declared_toolset(project, use.name)]:
                labels = opaque_python_labels(project, use.name) if c == OPAQUE else capability_labels(project, c)
                add((c, "", use.name, ""), {"capability": c, "toolset": use.name}, labels)
    for key, grant in model_grants(worker_model(project, worker)).items():
        add(key, grant, NONE)
    # sorted by capability, then tool, toolset, model (an absent key sorts first)
    return [grants[k] for k in sorted(grants)]


_STDLIB_GRANTS: dict[tuple[str, str], dict[str, tuple[str, ...]]] = {}


def _conditional_labels(project: ResolvedProject, tool: ResolvedTool, capability: str, labels: frozenset[str]) -> frozenset[str] | None:
    """`flows.rule_confinement.conditional_labels`, imported for a tool with conditional rules only."""
    from .flows.rule_confinement import conditional_labels

    return conditional_labels(capability, labels, tool.rules, tool.approval, label_policy(project))


def _destination_labels(tool: ResolvedTool, labels: frozenset[str], declared: list[str]) -> frozenset[str] | None:
    """`flows.rule_confinement.destination_labels` for a Python tool that says where it sends."""
    from .flows.rule_confinement import destination_labels, destinations

    params = destinations(declared)
    return destination_labels(labels, tool.rules, tool.approval, params) if params else None


def tool_destinations(project: ResolvedProject, worker: ResolvedWorker, tool: ResolvedTool) -> tuple[str, ...]:
    """The parameters a Python tool's declaration says it sends to (`to:PARAM`)."""
    if tool.kind not in ("python_tool", "python_toolset"):
        return ()
    from .flows.rule_confinement import destinations

    return destinations(_declared(project, worker.name, tool.toolset, tool.name))


def _stdlib_grants(name: str, settings: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """Thousands of workers share a handful of (toolset, settings) pairs."""
    key = (name, repr(sorted(settings.items())))
    found = _STDLIB_GRANTS.get(key)
    if found is None:
        found = _STDLIB_GRANTS[key] = STDLIB_TOOLSETS[name].grants(settings)
    return found


def _declared(project: ResolvedProject, worker: str, toolset: str | None, tool: str) -> list[str]:
    python_tool = project.python_tool(worker, tool)
    if python_tool is not None and python_tool.toolset_key == toolset:
        return python_tool.module.capabilities.get(tool, [])
    python_toolset = project.python_toolsets.get(toolset or "")
    if python_toolset is not None:
        caps = python_toolset.module.capabilities
        return sorted(set(caps.get(tool, [])) | set(caps.get(python_toolset.fact.name, [])))
    return []


def _declared_toolset(project: ResolvedProject, key: str) -> list[str]:
    python_toolset = project.python_toolsets[key]
    return sorted(set(python_toolset.module.capabilities.get(python_toolset.fact.name, [])) - {OPAQUE})

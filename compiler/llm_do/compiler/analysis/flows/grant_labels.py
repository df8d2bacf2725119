"""The labels of a worker's grants, from the project: the policy of project.json and, for a Python
tool that declares nothing, what its code does: its effects, its reads of files and its calls into
third-party code the effects table does not know (spec/language.md, "flows")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .folders import FolderResolver
from .labels import NONE, LabelPolicy, labels_of, mcp_labels, policy_of, python_labels

if TYPE_CHECKING:
    from ...code.fingerprint import TracedCode
    from ...stages.resolved import ResolvedProject, ResolvedTool, ResolvedWorker


def label_policy(project: ResolvedProject) -> LabelPolicy:
    """The project's policy, made on first use and kept on the project."""
    if project.label_policy is None:
        manifest = project.manifest
        project.label_policy = policy_of(
            manifest.flows.paths, {name: (s.labels, s.tool_labels) for name, s in manifest.mcp_servers.items()},
            FolderResolver(str(project.loaded.root)))
    return project.label_policy


def undeclared_tool_code(project: ResolvedProject, worker: ResolvedWorker, tool: ResolvedTool) -> TracedCode | None:
    """The code of an undeclared Python tool of the worker (its module's `TOOLS`, or the `TOOLSETS`
    toolset that builds it); None for a tool its module's `CAPABILITIES` declares, or no such code."""
    from ...code.fingerprint import trace_tool, trace_toolset  # the code index: only for a project with Python
    from ...code.project_index import project_code_index

    python_tool = project.python_tool(worker.name, tool.name)
    if python_tool is not None and python_tool.toolset_key == tool.toolset:
        if tool.name in python_tool.module.capabilities:
            return None
        return trace_tool(project_code_index(project), python_tool.module.file, python_tool.fact.name)
    toolset = project.python_toolsets.get(tool.toolset or "")
    if toolset is None or toolset.fact.name in toolset.module.capabilities or tool.name in toolset.module.capabilities:
        return None
    return trace_toolset(project_code_index(project), toolset.module.file, toolset.fact.name)


def python_tool_labels(project: ResolvedProject, worker: ResolvedWorker, tool: ResolvedTool) -> frozenset[str]:
    """The labels of an undeclared Python tool's `custom:NAME`: from what its code does (a tool
    with a `CAPABILITIES` entry is labelled by what it declares, and this is empty)."""
    return code_labels(undeclared_tool_code(project, worker, tool))


def opaque_python_labels(project: ResolvedProject, key: str, tool: str | None = None) -> frozenset[str]:
    """A `TOOLSETS` toolset's tools are built by its module's code: its effects label them, unless
    the module declares the tool or the toolset."""
    toolset = project.python_toolsets[key]
    declared = toolset.module.capabilities
    if toolset.fact.name in declared or (tool is not None and tool in declared):
        return NONE
    from ...code.fingerprint import trace_toolset  # the code index: only for a project with Python
    from ...code.project_index import project_code_index

    return code_labels(trace_toolset(project_code_index(project), toolset.module.file, toolset.fact.name))


def code_labels(code: TracedCode | None) -> frozenset[str]:
    """The labels undeclared code has: its effects', a read of a file (private) and a call into
    third-party code the effects table does not know (`code.flow_calls`)."""
    if code is None:
        return NONE
    return python_labels(code.effects, reads=code.reads, unknown_calls=bool(code.unknown))


def capability_labels(project: ResolvedProject, capability: str, *, stdlib: bool = False) -> frozenset[str]:
    return labels_of(capability, label_policy(project), stdlib=stdlib)


def opaque_mcp_labels(project: ResolvedProject, server: str) -> frozenset[str]:
    return mcp_labels(server, "*", label_policy(project))

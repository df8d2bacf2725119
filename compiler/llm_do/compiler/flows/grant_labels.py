"""The labels of a worker's grants, from the project: the policy of project.json and, for a Python
tool that declares nothing, the effects of its code (spec/language.md, "flows")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .folders import folder_resolver
from .labels import NONE, LabelPolicy, labels_of, mcp_labels, policy_of, python_labels

if TYPE_CHECKING:
    from ..stages.resolved import ResolvedProject, ResolvedTool, ResolvedWorker


def label_policy(project: ResolvedProject) -> LabelPolicy:
    """The project's policy, made on first use and kept on the project."""
    if project.label_policy is None:
        manifest = project.manifest
        project.label_policy = policy_of(
            manifest.flows.paths, {name: (s.labels, s.tool_labels) for name, s in manifest.mcp_servers.items()},
            folder_resolver(str(project.loaded.root)))
    return project.label_policy


def python_tool_labels(project: ResolvedProject, worker: ResolvedWorker, tool: ResolvedTool) -> frozenset[str]:
    """The labels of an undeclared Python tool's `custom:NAME`: from what its code does (a tool
    with a `CAPABILITIES` entry is labelled by what it declares, and this is empty)."""
    from ..code.fingerprint import tool_code  # the code index: only for a project with Python
    from ..code.project_index import project_code_index

    index = project_code_index(project)
    python_tool = project.python_tool(worker.name, tool.name)
    if python_tool is not None and python_tool.toolset_key == tool.toolset:
        if tool.name in python_tool.module.capabilities:
            return NONE
        code = tool_code(index, python_tool.module.file, python_tool.fact.name)
        return python_labels(code.get("effects") or ()) if code is not None else NONE
    toolset = project.python_toolsets.get(tool.toolset or "")
    if toolset is None:
        return NONE
    return opaque_python_labels(project, toolset.key, tool.name)


def opaque_python_labels(project: ResolvedProject, key: str, tool: str | None = None) -> frozenset[str]:
    """A `TOOLSETS` toolset's tools are built by its module's code: its effects label them, unless
    the module declares the tool or the toolset."""
    toolset = project.python_toolsets[key]
    declared = toolset.module.capabilities
    if toolset.fact.name in declared or (tool is not None and tool in declared):
        return NONE
    from ..code.fingerprint import toolset_code  # the code index: only for a project with Python
    from ..code.project_index import project_code_index

    code = toolset_code(project_code_index(project), toolset.module.file, toolset.fact.name)
    return python_labels(code.get("effects") or ()) if code is not None else NONE


def capability_labels(project: ResolvedProject, capability: str, *, stdlib: bool = False) -> frozenset[str]:
    return labels_of(capability, label_policy(project), stdlib=stdlib)


def opaque_mcp_labels(project: ResolvedProject, server: str) -> frozenset[str]:
    return mcp_labels(server, "*", label_policy(project))

"""Builders for the toolsets the runtime imports: the stdlib's, and the project's Python (a
module's TOOLS, or one of its TOOLSETS), each with a stable id from its bundle key."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic_ai.toolsets import AbstractToolset

from llm_do.bundle.errors import BundleRefused
from llm_do.bundle.views import UsedToolset, WorkerSpec
from llm_do.toolkit import user_code

from ..errors import ToolsetProblem

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType

    from pydantic_ai import Tool

    from llm_do.bundle.model import ToolsetNode

    from ..call_scope import CallContext, RunHost


def stdlib_toolset(runtime: RunHost, node: ToolsetNode, use: UsedToolset, spec: WorkerSpec) -> AbstractToolset[CallContext]:
    from llm_do.stdlib.registry import stdlib_toolset as descriptor_of

    name = node["name"]
    descriptor = descriptor_of(name)
    if descriptor is None:
        raise ToolsetProblem(f"this llm-do has no stdlib toolset '{name}'")
    module, _, cls_name = descriptor.implementation.partition(":")
    cls = getattr(importlib.import_module(module), cls_name)
    settings = descriptor.settings_model.model_validate(use.settings)
    base = runtime.bundle.root if descriptor.root == "project" else Path(runtime.config.cwd or Path.cwd()).resolve()
    from llm_do.toolkit.protected import protected_paths

    try:
        toolset: AbstractToolset[CallContext] = cls(descriptor, settings, base, protected_paths(runtime.bundle.root, runtime.bundle.path))
        return toolset
    except ValueError as exc:  # PathRefused: the settings' path leads out of the root, or is missing
        raise ToolsetProblem(f"{name}: {exc}") from None


def python_toolset(runtime: RunHost, node: ToolsetNode, use: UsedToolset, spec: WorkerSpec) -> AbstractToolset[CallContext]:
    """A module's TOOLS (the worker's tools of it only), or one of its TOOLSETS."""
    if node.get("export") == "TOOLSETS":
        return _exported_toolset(runtime, node, use)
    names = [n for n, b in spec.tools.items() if b.toolset == use.toolset]
    return _python_tools(runtime, node, names, use.toolset or node["name"])


def _module_name(node: ToolsetNode) -> str:
    """The module a Python toolset's node names (the bundle gives every Python node one)."""
    name = node.get("module")
    assert name is not None, node["name"]
    return name


def _module(runtime: RunHost, name: str) -> ModuleType:
    try:
        return runtime.bundle.import_module(name)
    except BundleRefused:
        raise
    except Exception as exc:  # user code: report, do not crash the runtime with a traceback
        raise ToolsetProblem(f"importing '{name}' failed: {type(exc).__name__}: {exc}") from None


def _python_tools(runtime: RunHost, node: ToolsetNode, names: list[str], key: str) -> AbstractToolset[CallContext]:
    from pydantic_ai import FunctionToolset, Tool

    module_name = _module_name(node)
    module = _module(runtime, module_name)
    _, exported = user_code.exported_tools(module)
    by_name = dict(exported)
    tools = []
    for name in names:
        value = by_name.get(name)
        if value is None:
            raise ToolsetProblem(f"'{node['module']}' no longer exports the tool '{name}'")
        if isinstance(value, Tool):
            tools.append(value)
        elif callable(value):
            tools.append(_tool(runtime, module_name, value, name))
        else:
            raise ToolsetProblem(f"'{node['module']}' exports the tool '{name}' as a {type(value).__name__}, not a function or Tool")
    return FunctionToolset(tools, id=key)


def _tool(runtime: RunHost, module: str, function: Callable[..., object], name: str) -> Tool[CallContext]:
    """The function's `Tool`, made once per loaded bundle (`LoadedBundle.tools`)."""
    from pydantic_ai import Tool

    made = runtime.bundle.tools
    tool = made.get((module, name))
    if tool is None or tool.function is not function:
        tool = made[(module, name)] = Tool(function, name=name)
    return tool


def _exported_toolset(runtime: RunHost, node: ToolsetNode, use: UsedToolset) -> AbstractToolset[CallContext]:
    from pydantic_ai.toolsets import DynamicToolset

    module = _module(runtime, _module_name(node))
    value = dict(user_code.exported_toolsets(module)).get(node["key"])
    if value is None:
        raise ToolsetProblem(f"'{node['module']}' no longer exports the toolset '{node['key']}'")
    if not isinstance(value, AbstractToolset) and not callable(value):
        raise ToolsetProblem(f"'{node['module']}' exports the toolset '{node['key']}' as a {type(value).__name__}, "
                             "not a toolset or a toolset factory")
    if use.opaque_approval is None:
        return value if isinstance(value, AbstractToolset) else DynamicToolset(value, per_run_step=False, id=node["name"])
    from ..approvals.opaque_toolsets import factory_with_approvals, with_approvals

    if isinstance(value, AbstractToolset):
        return with_approvals(value, use.opaque_approval, node["name"])
    return DynamicToolset(factory_with_approvals(value, use.opaque_approval, node["name"]), per_run_step=False, id=node["name"])

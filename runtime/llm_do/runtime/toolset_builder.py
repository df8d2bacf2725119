"""A worker call's toolsets, built fresh from the bundle: stdlib, Python and worker calls, all
behind one approval gate."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_ai.toolsets import AbstractToolset, CombinedToolset

from . import user_code
from .bundle import BundleRefused, ToolsetUse, WorkerSpec
from .errors import ToolsetProblem

if TYPE_CHECKING:
    from .approval_gate import ApprovalGate
    from .call_scope import RunHost


def build_toolsets(runtime: RunHost, spec: WorkerSpec) -> ApprovalGate | None:
    """The worker's toolsets behind the gate; None for a worker with no tools (nothing to gate)."""
    toolsets: list[AbstractToolset[Any]] = []
    callees = [u.worker for u in spec.toolsets if u.worker]
    for use in spec.toolsets:
        if use.worker:
            continue
        node = runtime.bundle.toolset(use.toolset)
        if node is None:
            raise ToolsetProblem(f"the bundle has no toolset '{use.toolset}'")
        if node["kind"] == "stdlib":
            toolsets.append(_stdlib(runtime, node["name"], use))
        elif node.get("export") == "TOOLSETS":
            toolsets.append(_python_toolset(runtime, node, use))
        else:
            names = [n for n, b in spec.tools.items() if b.toolset == use.toolset]
            toolsets.append(_python_tools(runtime, node, names))
    if callees:
        from .worker_calls import WorkerCallToolset

        toolsets.append(WorkerCallToolset(runtime, callees))
    if not toolsets:
        return None
    from .approval_gate import ApprovalGate

    inner = toolsets[0] if len(toolsets) == 1 else CombinedToolset(toolsets)
    return ApprovalGate(inner, spec=spec, runtime=runtime)


def _stdlib(runtime: RunHost, name: str, use: ToolsetUse) -> AbstractToolset[Any]:
    from llm_do.stdlib.registry import stdlib_toolset

    descriptor = stdlib_toolset(name)
    if descriptor is None:
        raise ToolsetProblem(f"this llm-do has no stdlib toolset '{name}'")
    module, _, cls_name = descriptor.implementation.partition(":")
    cls = getattr(importlib.import_module(module), cls_name)
    settings = descriptor.settings_model.model_validate(use.settings)
    base = runtime.bundle.root if descriptor.root == "project" else Path(runtime.config.cwd or Path.cwd()).resolve()
    try:
        return cls(descriptor, settings, base)
    except ValueError as exc:  # PathRefused: the settings' path leads out of the root, or is missing
        raise ToolsetProblem(f"{name}: {exc}") from None


def _module(runtime: RunHost, name: str) -> Any:
    try:
        return runtime.bundle.import_module(name)
    except BundleRefused:
        raise
    except Exception as exc:  # user code: report, do not crash the runtime with a traceback
        raise ToolsetProblem(f"importing '{name}' failed: {type(exc).__name__}: {exc}") from None


def _python_tools(runtime: RunHost, node: dict[str, Any], names: list[str]) -> AbstractToolset[Any]:
    from pydantic_ai import FunctionToolset, Tool

    module = _module(runtime, node["module"])
    _, exported = user_code.exported_tools(module)
    by_name = dict(exported)
    tools = []
    for name in names:
        value = by_name.get(name)
        if value is None:
            raise ToolsetProblem(f"'{node['module']}' no longer exports the tool '{name}'")
        tools.append(value if isinstance(value, Tool) else Tool(value, name=name))
    return FunctionToolset(tools)


def _python_toolset(runtime: RunHost, node: dict[str, Any], use: ToolsetUse) -> AbstractToolset[Any]:
    from pydantic_ai.toolsets import DynamicToolset

    module = _module(runtime, node["module"])
    value = dict(user_code.exported_toolsets(module)).get(node["key"])
    if value is None:
        raise ToolsetProblem(f"'{node['module']}' no longer exports the toolset '{node['key']}'")
    if use.opaque_approval is None:
        return value if isinstance(value, AbstractToolset) else DynamicToolset(value, per_run_step=False)
    from .toolset_approvals import factory_with_approvals, with_approvals

    if isinstance(value, AbstractToolset):
        return with_approvals(value, use.opaque_approval, node["name"])
    return DynamicToolset(factory_with_approvals(value, use.opaque_approval, node["name"]), per_run_step=False)

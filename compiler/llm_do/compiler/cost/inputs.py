"""What the cost bound reads of a project, in one shape for a bundle document (`of_bundle`:
`capabilities`, `graph`, `diff`) and a resolved project (`of_project`: `lint`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from llm_do.bundle.views import entry_name

if TYPE_CHECKING:
    from ..stages.resolved import ResolvedProject

CREATING_TOOLSETS = frozenset({"worker_create", "dynamic_agents"})
"""Stdlib toolsets whose tools create workers in the run, on a model the model names."""


@dataclass(frozen=True)
class CostWorker:
    name: str
    model: str | None
    compatible_models: tuple[str, ...] | None
    model_settings: Mapping[str, Any] | None
    """Its own; None: the project default's."""
    server_side_tools: tuple[Mapping[str, Any], ...]
    calls: tuple[str, ...]
    """Every worker it may call (as a tool, or from its Python)."""
    python_calls: bool = False
    """Its Python may call workers (front matter `calls:`, or `.agent`-era Python, which may call
    any): several at once, as Python chooses."""
    creates_workers: bool = False
    """It has a toolset that creates workers in the run (`worker_create`): on a model the build
    cannot see."""


@dataclass(frozen=True)
class CostInputs:
    workers: dict[str, CostWorker]
    entry: str
    """The entry worker's name, or the entry function's label."""
    function_calls: tuple[str, ...] | None
    """The entry function's callees (every worker when it declares none); None: the entry is a worker."""
    max_depth: int
    limits: Mapping[str, Any]
    """`runtime.usage_limits` as set (absent keys at pydantic-ai's defaults)."""
    default_model: str | None
    default_settings: Mapping[str, Any] | None
    prices: Mapping[str, Any]
    """project.json `cost.prices`."""
    override: str | None = None
    """A run's `--model`: every worker runs on it."""

    def settings(self, worker: str) -> Mapping[str, Any] | None:
        """Its model settings as a run uses them: its own, else (also when empty) the default's."""
        return self.workers[worker].model_settings or self.default_settings


def of_bundle(doc: Mapping[str, Any], override: str | None = None) -> CostInputs:
    toolsets = doc.get("toolsets") or {}
    names = tuple(doc["workers"])
    workers = {}
    for name, node in doc["workers"].items():
        python = any(b.get("toolset") and (toolsets.get(b["toolset"]) or {}).get("kind") == "python"
                     for b in (node.get("tools") or {}).values())
        legacy = python and str(node.get("source") or "").endswith(".agent")
        as_tools = {u["worker"] for u in node.get("toolsets") or () if u.get("worker")}
        calls = tuple(node.get("calls") or ())
        creates = any((toolsets.get(u.get("toolset") or "") or {}).get("kind") == "stdlib"
                      and toolsets[u["toolset"]].get("name") in CREATING_TOOLSETS for u in node.get("toolsets") or ())
        workers[name] = CostWorker(
            name, node.get("model"), _tuple(node.get("compatible_models")), node.get("model_settings"),
            tuple(node.get("server_side_tools") or ()), names if legacy else calls,
            python_calls=legacy or any(c not in as_tools for c in calls), creates_workers=creates)
    function = (doc.get("entry") or {}).get("function")
    runtime = doc["runtime"]
    defaults = doc.get("defaults") or {}
    return CostInputs(workers, entry_name(doc["entry"]), tuple(function["calls"]) if function else None, runtime["max_depth"],
                      runtime.get("usage_limits") or {}, defaults.get("model"), defaults.get("model_settings"),
                      (doc.get("cost") or {}).get("prices") or {}, override)


def of_project(project: ResolvedProject) -> CostInputs:
    manifest = project.manifest
    names = tuple(sorted(project.workers))
    workers = {}
    for name in names:
        worker = project.workers[name]
        front = worker.parsed.front
        python = any(t.kind in ("python_tool", "python_toolset") for t in worker.tools.values())
        legacy = python and worker.parsed.legacy
        workers[name] = CostWorker(
            name, front.model, _tuple(front.compatible_models), front.model_settings,
            tuple(t.model_dump() for t in front.server_side_tools), names if legacy else tuple(sorted(worker.calls)),
            python_calls=legacy or bool(front.calls),
            creates_workers=any(u.kind == "stdlib" and u.name in CREATING_TOOLSETS for u in worker.toolsets))
    function = project.entry_function
    limits = manifest.runtime.usage_limits
    return CostInputs(workers, project.entry, tuple(sorted(function.calls)) if function is not None else None,
                      manifest.runtime.max_depth, limits.model_dump(exclude_none=True) if limits else {},
                      manifest.defaults.model, manifest.defaults.model_settings,
                      {model: price.model_dump(exclude_none=True) for model, price in manifest.cost.prices.items()})


def _tuple(items: Any) -> tuple[str, ...] | None:
    return tuple(items) if items is not None else None

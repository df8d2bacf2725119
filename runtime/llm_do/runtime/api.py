"""The Python API in a few functions: run a bundle's worker, or delegate from inside a tool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .call_scope import CallContext
from .config import RuntimeConfig
from .runtime import RunResult, Runtime


def _runtime(bundle: str | Path | Runtime, config: RuntimeConfig | None) -> Runtime:
    if isinstance(bundle, Runtime):
        return bundle
    return Runtime.load(bundle, config)


async def run_worker_async(
    bundle: str | Path | Runtime, *args: Any, worker: str | None = None, config: RuntimeConfig | None = None, **kwargs: Any
) -> RunResult:
    """Run the entry worker (or `worker`) of a bundle; input as keyword arguments, a string, a
    mapping or a WorkerArgs (default: the bundle's entry.args). Returns output and messages."""
    return await _runtime(bundle, config).run_async(*args, worker=worker, **kwargs)


def run_worker(
    bundle: str | Path | Runtime, *args: Any, worker: str | None = None, config: RuntimeConfig | None = None, **kwargs: Any
) -> RunResult:
    """`run_worker_async` for code that is not async."""
    return _runtime(bundle, config).run(*args, worker=worker, **kwargs)


async def call_worker_async(ctx: Any, name: str, *args: Any, **kwargs: Any) -> Any:
    """From a Python tool: call worker `name` one level deeper. `ctx` is the tool's RunContext
    (or its `deps`)."""
    deps = ctx if isinstance(ctx, CallContext) else ctx.deps
    return await deps.call_worker(name, *args, **kwargs)


def create_worker(
    bundle: str | Path | Runtime, name: str, instructions: str, description: str, model: str | None = None, *,
    folder: str | None = None,
) -> Path:
    """What an approved `worker_create` does, for host code: write `NAME.worker` (no tools; the
    given model, else its caller's) in `folder` below the project root (default
    `workers/generated`), never replacing a file, and, given a Runtime, make the worker callable in
    that run (`runtime.run(..., worker=name)`, `worker_call`). Returns the file's path; raises
    `DefinitionProblem` (a ValueError) saying why not."""
    return _runtime(bundle, None).create_worker(name, instructions, description, model, folder=folder)

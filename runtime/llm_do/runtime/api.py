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
    bundle: str | Path | Runtime, *args: Any, worker: str | None = None, config: RuntimeConfig | None = None,
    message_history: list[Any] | None = None, **kwargs: Any
) -> RunResult:
    """Run the entry worker (or `worker`) of a bundle; input as keyword arguments, a string, a
    mapping or a WorkerArgs (default: the bundle's entry.args). Returns output and messages;
    `message_history` (an earlier result's `messages`) continues that conversation. `worker`,
    `config` and `message_history` are run keywords, never input fields."""
    return await _runtime(bundle, config).run_async(*args, worker=worker, message_history=message_history, **kwargs)


def run_worker(
    bundle: str | Path | Runtime, *args: Any, worker: str | None = None, config: RuntimeConfig | None = None,
    message_history: list[Any] | None = None, **kwargs: Any
) -> RunResult:
    """`run_worker_async` for code that is not async."""
    return _runtime(bundle, config).run(*args, worker=worker, message_history=message_history, **kwargs)


async def call_worker_async(ctx: Any, name: str, *args: Any, **kwargs: Any) -> Any:
    """From a Python tool: call worker `name` one level deeper. `ctx` is the tool's RunContext
    (or its `deps`)."""
    deps = ctx if isinstance(ctx, CallContext) else ctx.deps
    return await deps.call_worker(name, *args, **kwargs)

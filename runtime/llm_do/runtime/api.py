"""The Python API in a few functions: run a bundle's worker, or delegate from inside a tool."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from .call_scope import CallContext
from .config import RuntimeConfig
from .errors import InputProblem
from .runtime import RunResult, Runtime


def _runtime(bundle: str | Path | Runtime, config: RuntimeConfig | None) -> Runtime:
    if isinstance(bundle, Runtime):
        return bundle
    return Runtime.load(bundle, config)


async def run_worker_async(
    bundle: str | Path | Runtime, /, *args: Any, worker: str | None = None, config: RuntimeConfig | None = None,
    input_data: Any = None, message_callback: Callable[[str, int, list[Any]], None] | None = None,
    message_history: list[Any] | None = None, **kwargs: Any
) -> RunResult:
    """Run the entry worker (or `worker`) of a bundle; input as keyword arguments, a string, a
    mapping or a WorkerArgs, or as `input_data=` (default: the bundle's entry.args). Returns output,
    messages and usage; `message_history` (an earlier result's `messages`) continues that
    conversation.

    The run's own keywords (`worker`, `config`, `input_data`, `message_callback`, `message_history`) are never input
    fields: a worker whose input has a field of one of those names gets it through `input_data=`
    (or a positional mapping). `message_callback(worker, depth, messages)` is the seed API's name
    for `RuntimeConfig.on_message`."""
    runtime, args = _prepare(bundle, args, kwargs, config, input_data, message_callback)
    return await runtime.run_async(*args, worker=worker, message_history=message_history, **kwargs)


def run_worker(
    bundle: str | Path | Runtime, /, *args: Any, worker: str | None = None, config: RuntimeConfig | None = None,
    input_data: Any = None, message_callback: Callable[[str, int, list[Any]], None] | None = None,
    message_history: list[Any] | None = None, **kwargs: Any
) -> RunResult:
    """`run_worker_async` for code that is not async."""
    runtime, args = _prepare(bundle, args, kwargs, config, input_data, message_callback)
    return runtime.run(*args, worker=worker, message_history=message_history, **kwargs)


def _prepare(
    bundle: str | Path | Runtime, args: tuple[Any, ...], kwargs: dict[str, Any], config: RuntimeConfig | None,
    input_data: Any, message_callback: Callable[[str, int, list[Any]], None] | None,
) -> tuple[Runtime, tuple[Any, ...]]:
    """The runtime and the positional input, the seed API's keywords taken in where they say one
    thing only."""
    if input_data is not None:
        if args or kwargs:
            raise InputProblem("give the input once: as input_data=, as a positional argument, or as field keywords")
        args = (input_data,)
    if message_callback is not None:
        if isinstance(bundle, Runtime):
            raise InputProblem("message_callback= cannot be added to a loaded Runtime; load it with "
                               "RuntimeConfig(on_message=...)")
        if config is not None and config.on_message is not None:
            raise InputProblem("both message_callback= and RuntimeConfig.on_message are given; give one")
        config = replace(config or RuntimeConfig(), on_message=message_callback)
    return _runtime(bundle, config), args


async def call_worker_async(ctx: Any, name: str, /, *args: Any, **kwargs: Any) -> Any:
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

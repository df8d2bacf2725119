"""The Python API in a few functions: run a bundle's worker, or delegate from inside a tool.

They take the seed API's keywords too (`registry=`, `input_data=`, `attachments=`, `cli_model=`,
`approval_callback=`, `message_callback=`, `caller_context=`): its calls run as written, each
keyword a thin name for llm-do's own (spec/legacy.md, "The seed API")."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .call_scope import RUN_LOOP, CallContext
from .config import RuntimeConfig
from .errors import InputProblem
from .runtime import RunResult, Runtime

if TYPE_CHECKING:
    from os import PathLike

    from pydantic_ai import RunContext
    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.models import Model

    from .call_scope import RunHost
    from .seed_api import CreationSpec, WorkerCreationDefaults

    Caller = RunContext[CallContext] | CallContext
    """A Python tool's context: its RunContext, or that context's `deps`."""
    Attachments = Iterable[str | PathLike[str]]
    """The seed API's `attachments=`: paths."""

Bundle = str | Path | Runtime
"""A bundle file, a project directory holding `bundle.lock`, or a loaded Runtime."""


def _runtime(bundle: Bundle, config: RuntimeConfig | None) -> Runtime:
    if isinstance(bundle, Runtime):
        return bundle
    path = Path(bundle)
    if path.is_dir():
        if not (path / "bundle.lock").is_file():
            raise InputProblem(f"{path} has no bundle.lock: run `llm-do build {path}` first")
        path = path / "bundle.lock"
    return Runtime.load(path, config)


def _bundle(bundle: Bundle | None, registry: Bundle | None) -> Bundle:
    """The positional bundle, or the seed API's `registry=` naming the same thing."""
    if (bundle is None) == (registry is None):
        raise InputProblem("name the bundle once: as the first argument, or as registry= (the seed API's name)")
    return bundle if bundle is not None else registry  # type: ignore[return-value]


async def run_worker_async(
    bundle: Bundle | None = None, /, *args: object, registry: Bundle | None = None, worker: str | None = None,
    config: RuntimeConfig | None = None, input_data: object = None, attachments: Attachments | None = None,
    cli_model: Model | str | None = None, approval_callback: Callable[..., object] | None = None,
    message_callback: Callable[[str, int, list[ModelMessage]], None] | None = None,
    message_history: list[ModelMessage] | None = None, confine_attachments: bool = False, **kwargs: object
) -> RunResult:
    """Run the entry worker (or `worker`) of a bundle; input as keyword arguments, a string, a
    mapping or a WorkerArgs, or as `input_data=` (default: the bundle's entry.args). Returns output,
    messages and usage; `message_history` (an earlier result's `messages`) continues that
    conversation.

    The run's own keywords are never input fields: a worker whose input has a field named `worker`,
    `config`, `registry`, `input_data`, `attachments`, `cli_model`, `approval_callback`,
    `message_callback` or `message_history` gets it through `input_data=` (or a positional
    mapping). The seed API's keywords: `registry` is the bundle, `attachments` join the input's
    `attachments`, `cli_model` is `RuntimeConfig.fallback_model`, `approval_callback` and
    `message_callback(worker, depth, messages)` are `RuntimeConfig.approval_callback` and
    `on_message`. `confine_attachments`: as `Runtime.run_async`'s."""
    runtime, args = _prepare(_bundle(bundle, registry), args, kwargs, config, input_data, attachments, cli_model,
                             approval_callback, message_callback)
    return await runtime.run_async(*args, worker=worker, message_history=message_history,
                                   confine_attachments=confine_attachments, **kwargs)


def run_worker(
    bundle: Bundle | None = None, /, *args: object, registry: Bundle | None = None, worker: str | None = None,
    config: RuntimeConfig | None = None, input_data: object = None, attachments: Attachments | None = None,
    cli_model: Model | str | None = None, approval_callback: Callable[..., object] | None = None,
    message_callback: Callable[[str, int, list[ModelMessage]], None] | None = None,
    message_history: list[ModelMessage] | None = None, confine_attachments: bool = False, **kwargs: object
) -> RunResult:
    """`run_worker_async` for code that is not async."""
    runtime, args = _prepare(_bundle(bundle, registry), args, kwargs, config, input_data, attachments, cli_model,
                             approval_callback, message_callback)
    return runtime.run(*args, worker=worker, message_history=message_history, confine_attachments=confine_attachments,
                       **kwargs)


def _prepare(
    bundle: Bundle, args: tuple[object, ...], kwargs: dict[str, object], config: RuntimeConfig | None,
    input_data: object, attachments: Attachments | None, cli_model: Model | str | None,
    approval_callback: Callable[..., object] | None,
    message_callback: Callable[[str, int, list[ModelMessage]], None] | None,
) -> tuple[Runtime, tuple[object, ...]]:
    """The runtime and the positional input, the seed API's keywords taken in where they say one
    thing only."""
    args = seed_input(args, kwargs, input_data, attachments)
    settings: dict[str, Any] = {}  # RuntimeConfig field -> value, of its field's type
    if approval_callback is not None:
        settings["approval_callback"] = approval_callback  # either form (`approvals.request_callback`)
    if cli_model is not None:
        settings["fallback_model"] = cli_model
    if message_callback is not None:
        settings["on_message"] = message_callback
    if settings:
        keyword = {"fallback_model": "cli_model", "on_message": "message_callback"}
        named = ", ".join(f"{keyword.get(f, f)}=" for f in settings)
        if isinstance(bundle, Runtime):
            raise InputProblem(f"{named} cannot be added to a loaded Runtime; load it with RuntimeConfig(...) instead")
        for field in settings:
            if config is not None and getattr(config, field) is not None:
                raise InputProblem(f"both {keyword.get(field, field)}= and RuntimeConfig.{field} are given; give one")
        config = replace(config or RuntimeConfig(), **settings)
    return _runtime(bundle, config), args


def seed_input(args: tuple[object, ...], kwargs: dict[str, object], input_data: object,
               attachments: Attachments | None) -> tuple[object, ...]:
    """The positional input once the seed API's `input_data=` and `attachments=` are taken in (a
    run's and a call's alike)."""
    if input_data is not None:
        if args or kwargs:
            raise InputProblem("give the input once: as input_data=, as a positional argument, or as field keywords")
        args = (input_data,)
    if attachments is not None:
        args = with_attachments(args, kwargs, attachments)
    return args


def with_attachments(args: tuple[object, ...], kwargs: dict[str, object], attachments: Attachments) -> tuple[object, ...]:
    """The input with the seed API's `attachments=` (paths) as its `attachments` field: added to
    field keywords or to a mapping, or making a text input `{"input": TEXT, "attachments": [...]}`."""
    import os

    paths = [os.fspath(a) for a in attachments]
    if not args:
        if "attachments" in kwargs:
            raise InputProblem("attachments are given twice")
        kwargs["attachments"] = paths
        return args
    if len(args) != 1:
        raise InputProblem("attachments= needs one input (a text or a mapping)")
    value = args[0]
    if isinstance(value, str):
        return ({"input": value, "attachments": paths},)
    if hasattr(value, "model_dump"):
        value = value.model_dump()
    if not isinstance(value, dict):
        raise InputProblem(f"attachments= needs a text or mapping input, not {type(value).__name__}")
    if "attachments" in value:
        raise InputProblem("attachments are given twice: in the input and as attachments=")
    return ({**value, "attachments": paths},)


async def call_worker_async(
    ctx: Caller | None = None, name: str | None = None, /, *args: object, registry: Bundle | None = None,
    worker: str | None = None, input_data: object = None, caller_context: Caller | None = None,
    attachments: Attachments | None = None, **kwargs: object
) -> object:
    """From a Python tool: call worker `name` one level deeper. `ctx` is the tool's RunContext
    (or its `deps`). The seed API's form, `call_worker_async(registry=..., worker=...,
    input_data=..., caller_context=ctx, attachments=...)`, is the same call: `registry` must be
    the caller's own bundle (a call runs in its caller's run), and the caller's `calls` decide
    which workers it may reach. In the first form (`ctx` and `name` positional), `worker=` is an
    input field like any other keyword."""
    deps, name, args = _call(ctx, name, args, kwargs, registry, worker, input_data, caller_context, attachments)
    return await deps.call_worker(name, *args, **kwargs)


def call_worker(
    ctx: Caller | None = None, name: str | None = None, /, *args: object, registry: Bundle | None = None,
    worker: str | None = None, input_data: object = None, caller_context: Caller | None = None,
    attachments: Attachments | None = None, **kwargs: object
) -> object:
    """`call_worker_async` for a synchronous Python tool (which runs on a thread of the run): the
    call runs on the run's event loop, in the tool's context, so the caller's `calls` still decide
    which workers it may reach. Not for async code (`await call_worker_async(...)`)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise InputProblem("call_worker was called inside a running event loop; use `await call_worker_async(...)`")
    loop = RUN_LOOP.get()
    if loop is None:
        raise InputProblem("call_worker is for a synchronous tool during a run; from host code use run_worker")
    done: concurrent.futures.Future[object] = concurrent.futures.Future()

    def settle(task: asyncio.Task[object]) -> None:
        if task.cancelled():  # the run was stopped (Ctrl-C, --timeout): the waiting tool thread ends too
            done.cancel()
        elif (exc := task.exception()) is not None:
            done.set_exception(exc)
        else:
            done.set_result(task.result())

    def start() -> None:
        loop.create_task(call_worker_async(ctx, name, *args, registry=registry, worker=worker, input_data=input_data,
                                           caller_context=caller_context, attachments=attachments,
                                           **kwargs)).add_done_callback(settle)

    loop.call_soon_threadsafe(start, context=contextvars.copy_context())
    return done.result()


def _call(
    ctx: Caller | None, name: str | None, args: tuple[object, ...], kwargs: dict[str, object], registry: Bundle | None,
    worker: str | None, input_data: object, caller_context: Caller | None, attachments: Attachments | None,
) -> tuple[CallContext, str, tuple[object, ...]]:
    """The caller's context, the callee and the input of a call from Python, in either form."""
    if (ctx is None) == (caller_context is None):
        raise InputProblem("give the caller's context once: first, or as caller_context= (the seed API's name)")
    if ctx is not None and name is not None and worker is not None:
        kwargs["worker"] = worker  # the callee is named already: `worker=` is an input field, as before the seed API
        worker = None
    if (name is None) == (worker is None):
        raise InputProblem("name the worker to call once: second, or as worker= (the seed API's name)")
    context = ctx if ctx is not None else caller_context
    assert context is not None  # one of the two, checked above
    deps = context if isinstance(context, CallContext) else context.deps
    if registry is not None and not _same_bundle(registry, deps.runtime):
        raise InputProblem(f"registry={registry!r} is not the bundle of the caller's run; a worker call runs in its "
                           "caller's run (leave registry= out)")
    args = seed_input(args, kwargs, input_data, attachments)
    return deps, name if name is not None else worker, args  # type: ignore[return-value]


def _same_bundle(registry: Bundle, runtime: RunHost) -> bool:
    if isinstance(registry, Runtime) or not isinstance(registry, (str, Path)):
        return registry is runtime
    path = Path(registry)
    path = path / "bundle.lock" if path.is_dir() else path
    return path.resolve() == Path(runtime.bundle.path).resolve()


def create_worker(
    bundle: Bundle | None = None, name: str | None = None, instructions: str | None = None,
    description: str | None = None, model: str | None = None, *, folder: str | None = None,
    registry: Bundle | None = None, spec: CreationSpec | None = None, defaults: WorkerCreationDefaults | None = None,
    force: bool = False,
) -> Path:
    """What an approved `worker_create` does, for host code: write `NAME.worker` (no tools; the
    given model, else its caller's) in `folder` below the project root (default
    `workers/generated`), and, given a Runtime, make the worker callable in that run
    (`runtime.run(..., worker=name)`, `worker_call`). Returns the file's path; raises
    `DefinitionProblem` (a ValueError) saying why not.

    The seed API's form, `create_worker(registry=..., spec=WorkerSpec(...),
    defaults=WorkerCreationDefaults(default_model=...), force=False)`, is the same call.
    `force=True` (trusted host code only; a model's `worker_create` never can) replaces the file
    of a worker created before, rather than refusing it."""
    if spec is not None:
        if name is not None or instructions is not None or description is not None or model is not None:
            raise InputProblem("give the worker once: as spec=WorkerSpec(...), or as name, instructions, description")
        name, instructions, description = spec.name, spec.instructions, spec.description
        model = spec.model
    if model is None and defaults is not None:
        model = defaults.default_model
    if name is None or instructions is None:
        raise InputProblem("create_worker needs a name and instructions (or spec=WorkerSpec(...))")
    return _runtime(_bundle(bundle, registry), None).create_worker(
        name, instructions, description or "", model, folder=folder, replace=force)

"""Running an entry function: a project's Python function that orchestrates workers as trusted code.

It runs at depth 0 with no model and no tools of its own. Through its context it calls workers like
functions (`await ctx.call_worker("a", "text")`, `ctx.call_worker("a", field=...)`, `ctx.worker("a")`,
`call_agent` as the `.agent`-era alias); each runs at depth 1, behind the approval gate like any
call. Only the workers the bundle's entry node lists (`entry.calls`, or every worker when the
project declared none) may be called, through the context or any other API (`python_calls`): any
other raises `CallRefused`, which, uncaught, fails the run. A sync function runs in a thread, where `ctx.call_worker` returns the output directly.
Loaded only when a bundle's entry is a function.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from llm_do.bundle.errors import BundleRefused
from llm_do.toolkit import user_code

from .args import PromptInput
from .call_scope import CallContext, CallFrame, RunHost, WorkerHandle
from .entry_signature import EntrySignatureProblem, entry_params
from .errors import CallRefused, InputProblem, RunFailed
from .inputs import WorkerInputProblem, normalize_input
from .worker_calls_from_python import PythonCaller, python_running

if TYPE_CHECKING:
    from llm_do.bundle.model import EntryFunctionNode


class EntryContext(CallContext):
    """What an entry function gets as its context: a `CallContext` at depth 0 that may call only
    the workers the bundle declares for it."""

    __slots__ = ("label", "allowed", "loop")

    def __init__(self, runtime: RunHost, frame: CallFrame, label: str, allowed: frozenset[str],
                 loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(runtime, frame)
        self.label = label
        self.allowed = allowed
        self.loop = loop

    def _allow(self, name: str) -> None:
        if name not in self.allowed:
            declared = ", ".join(sorted(self.allowed)) or "none"
            raise CallRefused(f"the entry function '{self.label}' called worker '{name}', which its entry.calls does not "
                              f"declare (it may call: {declared})")

    def call_worker(self, name: str, /, *args: object, **kwargs: Any) -> object:  # type: ignore[override]
        """Call worker `name` at depth 1: awaitable in an async function, the output itself in a
        sync one (which runs in a thread of its own). (So not a coroutine function, as
        `CallContext.call_worker` is: the one override that returns either.) The keywords reach
        `call_worker_async` as they are, `parent` and `from_model` included."""
        self._allow(name)
        call = self.runtime.call_worker_async(name, *args, parent=self.frame, **kwargs)
        if _on_loop(self.loop):
            return call
        return asyncio.run_coroutine_threadsafe(call, self.loop).result()

    call_agent = call_worker  # type: ignore[assignment]  # as call_worker
    """The `.agent`-era name."""

    def worker(self, name: str) -> WorkerHandle:
        self._allow(name)
        return super().worker(name)


def _on_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False


def _function(runtime: RunHost, node: EntryFunctionNode) -> object:
    try:
        return user_code.resolve_attr(runtime.bundle.import_module(node["module"]), node["qualname"])
    except BundleRefused:
        raise
    except Exception as exc:
        raise RunFailed(f"cannot load the entry function {node['name']}: {type(exc).__name__}: {exc}") from None


async def run_entry_function(runtime: RunHost, node: EntryFunctionNode, args: tuple[object, ...],
                             kwargs: dict[str, object]) -> object:
    """Run the bundle's entry function (`node`); its return value is the run's output."""
    label = node["name"]
    func = _function(runtime, node)
    try:
        params = entry_params(func)
    except EntrySignatureProblem as exc:
        raise RunFailed(f"the entry function {label} {exc}") from None
    assert callable(func)  # entry_params took only a function
    try:
        value = normalize_input(label, params.input_class or PromptInput, args, kwargs)
    except WorkerInputProblem as exc:
        raise InputProblem(str(exc).replace(f"worker '{label}'", f"the entry function '{label}'")) from None
    loop = asyncio.get_running_loop()
    context = EntryContext(runtime, CallFrame(label, 0), label, frozenset(node["calls"]), loop)
    given = [context if name == params.context else value for name in params.order]
    caller = PythonCaller(f"the entry function '{label}'", context.allowed, "entry.calls in project.json", frame=context.frame)
    with python_running(caller):  # also what it calls through ctx.runtime, CallContext or a handle
        if params.is_async:
            return await func(*given)
        return await asyncio.to_thread(func, *given)

"""Which workers Python may call while it runs: a tool of worker W may call the workers W declares
(its `calls`, the edges of the call graph), the entry function those of `entry.calls`.

The caller is a context variable, set by the gate around every tool call and by the entry
function's run, so the rule holds whichever API the call goes through (`ctx.deps.call_worker`,
`ctx.deps.runtime.call_worker_async`, `CallContext.call_worker`, a `WorkerHandle`,
`call_worker_async(ctx, ...)`) and in a sync tool's thread (threads and tasks copy the context).
A host's call (`run_worker`, `Runtime.run`, `Runtime.call_worker_async` outside any tool) has no
caller and is not restricted; a model's call (`from_model`) is checked by the bundle's edges.
A worker of an `.agent` file (that era had no `calls:`) is warned about, not refused.

The caller also names the frame the Python runs in: a call made without a `parent` (the host API
`ctx.deps.runtime.call_worker_async`, a handle from `runtime.worker`) is that frame's callee, so
every call inside a run has a parent, and its taint, depth and limits are the run's (red team L5).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, NamedTuple

from .errors import CallRefused

if TYPE_CHECKING:
    from .call_scope import CallFrame


class PythonCaller(NamedTuple):
    """The Python running now: who it runs for, what it may call, and how to declare more."""

    who: str
    """`worker 'main'`, `the entry function 'flow.py:main'`."""
    allowed: frozenset[str]
    declare: str
    """Where a call is declared: "`calls:` in the front matter of main.worker"."""
    legacy: bool = False
    """An `.agent`-era worker: an undeclared call is warned about once, and runs."""
    frame: CallFrame | None = None
    """The frame the Python runs in (the tool's worker's, the entry function's): the parent of
    the workers it calls, whichever API the call goes through."""


_CALLER: ContextVar[PythonCaller | None] = ContextVar("llm_do_python_caller", default=None)
_WARNED: set[tuple[str, str]] = set()


@contextmanager
def python_running(caller: PythonCaller) -> Iterator[None]:
    """While the block runs (a tool, the entry function), its worker calls are `caller`'s."""
    token = _CALLER.set(caller)
    try:
        yield
    finally:
        _CALLER.reset(token)


def check_python_call(name: str) -> None:
    """Refuse a call to worker `name` that the running Python's worker (or entry) does not declare."""
    caller = _CALLER.get()
    if caller is None or name in caller.allowed:
        return
    message = (f"{caller.who} called worker '{name}' from Python, which it does not declare; "
               f"add '{name}' to {caller.declare}")
    if not caller.legacy:
        raise CallRefused(f"{message} (it was not called)")
    if (caller.who, name) not in _WARNED:
        _WARNED.add((caller.who, name))
        sys.stderr.write(f"llm-do: warning: {message}; `.agent` files run such calls for now, a `.worker` file "
                         f"refuses them (`llm-do migrate`, then add `calls:`)\n")
        sys.stderr.flush()


def running_frame() -> CallFrame | None:
    """The frame of the Python running now (None outside any tool and entry function)."""
    caller = _CALLER.get()
    return None if caller is None else caller.frame


def worker_caller(name: str, source: str, allowed: tuple[str, ...], frame: CallFrame | None = None) -> PythonCaller:
    """The caller for the tools of worker `name`, defined in `source`, running in `frame`."""
    return PythonCaller(f"worker '{name}'", frozenset(allowed), f"`calls:` in the front matter of {source}",
                        source.endswith(".agent"), frame)

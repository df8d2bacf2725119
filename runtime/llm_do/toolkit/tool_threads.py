"""Where a run's synchronous tools run: on daemon threads, so a run that is stopped (timeout,
Ctrl-C) ends at once instead of waiting for a tool that blocks.

pydantic-ai runs a sync function through `anyio.to_thread.run_sync`, which shields the await: a
cancellation lands only when the thread returns, and the interpreter joins that thread before it
exits, so a 40 s tool kept a timed-out run alive for 40 s. Inside `abandonable_tools()` pydantic-ai
hands sync calls to `DaemonThreadExecutor` instead (through `pydantic_ai._utils.using_thread_executor`,
a hook outside its public API: tests/runtime/test_stopping.py fails if it changes): awaiting the
call's future is cancelled at once, the thread is abandoned, and being a daemon it does not hold
the process open. Nothing can stop a Python thread from outside; the point is that nobody waits.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # names for annotations only: `exec` imports this module
    from typing import ParamSpec, TypeVar

    P = ParamSpec("P")
    T = TypeVar("T")


class DaemonThreadExecutor(Executor):
    """A thread pool whose threads are daemons: an idle one takes the next call, a new one is
    started when none is idle (an abandoned call keeps its thread busy), and one idle for
    `idle_seconds` ends. Reusing threads matters: pydantic-ai runs sync model functions this way too."""

    def __init__(self, idle_seconds: float = 30.0) -> None:
        self.idle_seconds = idle_seconds
        self._work: queue.SimpleQueue[tuple[Future[Any], Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = (
            queue.SimpleQueue())
        self._idle = 0
        self._lock = threading.Lock()

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        future: Future[T] = Future()
        self._work.put((future, fn, args, kwargs))
        with self._lock:
            start = self._idle == 0
            if not start:
                self._idle -= 1  # an idle thread will take it
        if start:
            threading.Thread(target=self._serve, name="llm-do sync tool", daemon=True).start()
        return future

    def _serve(self) -> None:
        while True:
            try:
                future, fn, args, kwargs = self._work.get(timeout=self.idle_seconds)
            except queue.Empty:
                with self._lock:
                    if self._idle > 0:  # still counted idle: nobody is waiting for this thread
                        self._idle -= 1
                        return
                continue  # a call was handed to this thread as it timed out
            if future.set_running_or_notify_cancel():
                try:
                    result = fn(*args, **kwargs)
                except BaseException as exc:
                    future.set_exception(exc)
                else:
                    future.set_result(result)
            del future, fn, args, kwargs
            with self._lock:
                self._idle += 1


_EXECUTOR = DaemonThreadExecutor()


@contextmanager
def abandonable_tools() -> Iterator[None]:
    """Within this context (set before the run's tasks start, so they inherit it), pydantic-ai runs
    sync tools on daemon threads whose await a cancellation interrupts."""
    from pydantic_ai._utils import using_thread_executor

    with using_thread_executor(_EXECUTOR):
        yield


async def run_blocking(fn: Callable[..., T], /, **kwargs: object) -> T:
    """`fn(**kwargs)` on the daemon pool, in a copy of the caller's context (as `asyncio.to_thread`,
    whose default executor `asyncio.run` joins at exit, so a stopped run would wait for it)."""
    loop = asyncio.get_running_loop()
    context = contextvars.copy_context()
    return await loop.run_in_executor(_EXECUTOR, functools.partial(context.run, fn, **kwargs))

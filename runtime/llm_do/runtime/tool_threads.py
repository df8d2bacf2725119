"""Where a run's synchronous tools run: each call on a daemon thread of its own, so a run that is
stopped (timeout, Ctrl-C) ends at once instead of waiting for a tool that blocks.

pydantic-ai runs a sync function through `anyio.to_thread.run_sync`, which shields the await: a
cancellation lands only when the thread returns, and the interpreter joins that thread before it
exits, so a 40 s tool kept a timed-out run alive for 40 s. Inside `abandonable_tools()` pydantic-ai
hands sync calls to `DaemonThreadExecutor` instead (its `using_thread_executor` hook): awaiting the
call's future is cancelled at once, the thread is abandoned, and being a daemon it does not hold
the process open. Nothing can stop a Python thread from outside; the point is that nobody waits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from contextlib import contextmanager
from typing import Any


class DaemonThreadExecutor(Executor):
    """Each submitted call runs on a new daemon thread (tools are few; a pool would need joining)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()

        def run() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:
                future.set_exception(exc)
            else:
                future.set_result(result)

        threading.Thread(target=run, name="llm-do sync tool", daemon=True).start()
        return future


_EXECUTOR = DaemonThreadExecutor()


@contextmanager
def abandonable_tools() -> Iterator[None]:
    """Within this context (set before the run's tasks start, so they inherit it), pydantic-ai runs
    sync tools on daemon threads whose await a cancellation interrupts."""
    from pydantic_ai._utils import using_thread_executor

    with using_thread_executor(_EXECUTOR):
        yield

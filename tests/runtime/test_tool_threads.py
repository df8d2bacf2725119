"""The daemon thread pool sync tools run on: reused, never blocking others, never holding the
process open."""

from __future__ import annotations

import threading
import time

from llm_do.toolkit.tool_threads import DaemonThreadExecutor


def test_calls_run_on_daemon_threads_that_are_reused() -> None:
    pool = DaemonThreadExecutor()
    first = pool.submit(threading.current_thread).result(timeout=10)
    deadline = time.monotonic() + 10
    while pool._idle == 0:  # the thread counts itself idle after handing back its result
        assert time.monotonic() < deadline, "the thread never went idle"
        time.sleep(0.001)
    second = pool.submit(threading.current_thread).result(timeout=10)
    assert first.daemon
    assert first is second


def test_a_blocked_call_does_not_hold_up_the_next() -> None:
    pool = DaemonThreadExecutor()
    release = threading.Event()
    blocked = pool.submit(release.wait)
    assert pool.submit(lambda: "free").result(timeout=10) == "free"
    assert not blocked.done()
    release.set()
    assert blocked.result(timeout=10) is True


def test_errors_reach_the_caller() -> None:
    def fail() -> None:
        raise ValueError("no")

    pool = DaemonThreadExecutor()
    error = pool.submit(fail).exception(timeout=10)
    assert isinstance(error, ValueError)


def test_an_idle_thread_ends_and_the_pool_goes_on() -> None:
    pool = DaemonThreadExecutor(idle_seconds=0.05)
    first = pool.submit(threading.current_thread).result(timeout=10)
    deadline = time.monotonic() + 10
    while first.is_alive():
        assert time.monotonic() < deadline, "the idle thread did not end"
        time.sleep(0.01)
    assert pool.submit(lambda: 42).result(timeout=10) == 42

"""The host's callbacks (`message_callback` / `on_message`, `approval_callback`, `on_event`), called
so that a bug in one is reported as that callback's, with the signature it must have, never as
the crash of the tool under which it happened to run (a worker call's `on_message` runs inside
the calling worker's tool)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import TypeVar

from .errors import RunFailed

T = TypeVar("T")

SIGNATURES = {
    "message_callback": ("message_callback(worker: str, depth: int, messages: list[ModelMessage]) -> None "
                         "(RuntimeConfig.on_message), called when each worker call finishes"),
    "approval_callback": ("approval_callback(request: ApprovalRequest) -> ApprovalDecision (or the seed's "
                          "(tool_name: str, payload: dict, reason: str) -> ApprovalDecision), plain or async"),
    "on_event": "on_event(event: RuntimeEvent) -> None (RuntimeConfig.on_event), called with every event of the run",
}
"""How each callback is called, as its error says it."""


class CallbackFailed(RunFailed):
    """A host callback raised or answered what it may not: the run ends (a `RunFailed`, so it passes
    the approval gate as the callback's, not as a tool's crash)."""


def callback_failed(name: str, problem: str) -> CallbackFailed:
    return CallbackFailed(f"the {name} {problem}; it is called as {SIGNATURES[name]}")


def call_host(name: str, callback: Callable[..., object], *args: object) -> object:
    """`callback(*args)` for the host's callback `name` (a key of SIGNATURES); what it raises ends the
    run as its own failure. A coroutine where a plain function was due is one too (never awaited,
    it would have done nothing)."""
    try:
        answer = callback(*args)
    except BrokenPipeError:
        raise  # a reader that went away (`--events - | head`), no bug of the callback's
    except Exception as exc:
        raise callback_failed(name, f"raised {_shown(exc)}") from exc
    if name != "approval_callback" and inspect.isawaitable(answer):
        close = getattr(answer, "close", None)
        if close is not None:
            close()
        raise callback_failed(name, "returned an awaitable: it must be a plain function (def, not async def)")
    return answer


async def awaited(name: str, answer: Awaitable[T]) -> T:
    """The answer of an async callback, its exception reported as the callback's."""
    try:
        return await answer
    except Exception as exc:
        raise callback_failed(name, f"raised {_shown(exc)}") from exc


def _shown(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())

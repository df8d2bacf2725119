"""The runtime's own errors. Each message is one line a user can act on."""

from __future__ import annotations

from pydantic_ai.exceptions import ToolFailed

from llm_do.bundle.errors import LlmDoError


class RunFailed(LlmDoError):
    """The run could not finish (exit 1)."""

    def __init__(self, message: str, *, details: str | None = None) -> None:
        super().__init__(message)
        self.details = details
        """More than the one line, shown on request (`-v`): a crashed tool's traceback, say."""


class InputProblem(LlmDoError):
    """The run's input does not fit the entry worker (a usage error: exit 2)."""


class ToolsetProblem(LlmDoError):
    """A toolset the bundle names cannot be built (its Python no longer exports it, say)."""


class CallRefused(ToolFailed):
    """A worker call refused (too deep, bad input or attachments): the calling model sees the
    message as a failed tool result and the run goes on. Uncaught in a Python tool, it does the same."""


def innermost(exc: BaseException) -> BaseException:
    """The error an exception group (pydantic-ai's task groups make them) was raised for."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def failure_line(exc: BaseException) -> str:
    """Why a run failed, on one line, never a traceback: the runtime's own message, or the error's
    type and text."""
    import asyncio

    exc = innermost(exc)
    if isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt)):
        return "the run was interrupted"
    text = str(exc) if isinstance(exc, (LlmDoError, CallRefused)) else f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())[:1000]

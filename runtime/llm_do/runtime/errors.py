"""The runtime's own errors, on the hierarchy of `llm_do.bundle.errors` (which says how they are
named). Each message is one line a user can act on."""

from __future__ import annotations

from pydantic_ai.exceptions import ToolFailed

from llm_do.bundle.errors import BundleRefused, InputProblem, LlmDoError, Refused, innermost

__all__ = ["RUN_ENDING", "CallRefused", "InputProblem", "RunFailed", "ToolCallFailed", "ToolsetProblem",
           "failure_line", "innermost"]


class RunFailed(LlmDoError):
    """The run could not finish (exit 1)."""

    def __init__(self, message: str, *, details: str | None = None) -> None:
        super().__init__(message)
        self.details = details
        """More than the one line, shown on request (`-v`): a crashed tool's traceback, say."""


class ToolsetProblem(LlmDoError):
    """A toolset the bundle names cannot be built (its Python no longer exports it, say)."""


class ToolCallFailed(LlmDoError, ToolFailed):
    """A tool call that failed in a way the calling model is told: it reads the message as a failed
    tool result and the run goes on."""


class CallRefused(Refused, ToolCallFailed):
    """A worker call refused (too deep, bad input or attachments): the calling model sees the
    message as a failed tool result and the run goes on. Uncaught in a Python tool, it does the same."""


RUN_ENDING: tuple[type[BaseException], ...] = (RunFailed, InputProblem, ToolsetProblem, BundleRefused)
"""The errors that end a run as they are: raised under a tool (a nested worker call, say), they pass
the approval gate unchanged instead of being reported as the tool crashing."""


def failure_line(exc: BaseException) -> str:
    """Why a run failed, on one line, never a traceback: the runtime's own message, or the error's
    type and text."""
    import asyncio

    exc = innermost(exc)
    if isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt)):
        return "the run was interrupted"
    speaks_for_itself = isinstance(exc, (RunFailed, InputProblem, ToolsetProblem, CallRefused))
    text = str(exc) if speaks_for_itself else f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())[:1000]

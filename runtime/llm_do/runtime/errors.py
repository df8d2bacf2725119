"""The runtime's own errors. Each message is one line a user can act on."""

from __future__ import annotations

from pydantic_ai.exceptions import ToolFailed


class LlmDoError(Exception):
    """Base of the runtime's errors."""


class RunFailed(LlmDoError):
    """The run could not finish (exit 1)."""


class InputProblem(LlmDoError):
    """The run's input does not fit the entry worker (a usage error: exit 2)."""


class ToolsetProblem(LlmDoError):
    """A toolset the bundle names cannot be built (its Python no longer exports it, say)."""


class CallRefused(ToolFailed):
    """A worker call refused (too deep, bad input or attachments): the calling model sees the
    message as a failed tool result and the run goes on. Uncaught in a Python tool, it does the same."""

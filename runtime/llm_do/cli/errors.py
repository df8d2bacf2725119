"""How a command ends: one exit-code enum and one error type, "a one-line message plus a code".

Every command of the CLI ends through these (or through click's own usage errors, exit 2), so an
exit code is written one way and means one thing across `exec`, `build`, `serve` and the rest."""

from __future__ import annotations

from enum import IntEnum
from typing import IO

import click

from llm_do.bundle.errors import LlmDoError


class ExitCode(IntEnum):
    """The exit codes of `llm-do`, as the commands' help and the README list them."""

    OK = 0
    FAILED = 1
    """The run failed or timed out; the project has errors; the lock is not current (`build --check`)."""
    USAGE = 2
    """A usage error: a bad option, no such bundle or project, an input that cannot be read."""
    REFUSED = 3
    """The bundle is refused: tampered with, of another format, or its Python changed since the build."""
    SUSPENDED = 4
    """A durable run waits for an approval (`--detach-approvals`)."""
    FLOW_DENIED = 5
    """The run finished, but `--approve-all` met calls the information-flow guard denied."""
    INTERNAL = 70
    """A bug in llm-do itself (EX_SOFTWARE)."""
    INTERRUPTED = 130
    """Ctrl-C."""


class CliError(LlmDoError, click.ClickException):
    """One line on stderr, `llm-do: MESSAGE`, and an exit code."""

    def __init__(self, message: str, code: ExitCode = ExitCode.FAILED) -> None:
        super().__init__(message)
        self.exit_code = int(code)  # type: ignore[misc]  # click declares it on the class; ours is per error

    def show(self, file: IO[str] | None = None) -> None:
        click.echo(f"llm-do: {self.message}", err=True)


def usage_problem(message: str) -> CliError:
    """A bad path or an unwritable file in a compiler command: `llm-do: error: ...`, exit 2."""
    return CliError(f"error: {message}", ExitCode.USAGE)

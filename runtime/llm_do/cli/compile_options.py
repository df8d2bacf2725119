"""The options of the commands that compile: `--no-import`, `--no-cache`, `-q/--quiet`.

Apart from `options` (the run options, with their dataclasses and input handling), so that
`build` and `lint` load only click for their options."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import click

R = TypeVar("R")
Command = Callable[..., R]


def no_import_option(command: Command[R]) -> Command[R]:
    """`--no-import` (`lint`, `capabilities`, `diff`): the project's Python is read, never run."""
    return click.option("--no-import", is_flag=True,
                        help="Read Python with ast instead of importing it, so none of it runs (for untrusted code); "
                             "schemas are not checked.")(command)


def no_cache_option(command: Command[R]) -> Command[R]:
    """`--no-cache` (every command that compiles): import the project's Python afresh, and take
    nothing from earlier builds (build records, incremental packs)."""
    return click.option("--no-cache", is_flag=True,
                        help="Import the project's Python even when it did not change since a build cached "
                             "what it defines, and compile every worker afresh (LLM_DO_NO_CACHE=1 does the same).")(command)


QUIET_HELP = "Print only errors (no warnings, notes or success lines): the exit status says the rest."


def quiet_option(command: Command[R]) -> Command[R]:
    """`-q/--quiet` (`build`, `lint`, `run`): only errors, on every command that takes it (`test -q`
    adds the cases that did not pass and the summary)."""
    return click.option("-q", "--quiet", is_flag=True, help=QUIET_HELP)(command)

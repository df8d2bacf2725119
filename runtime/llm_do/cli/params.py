"""Click parameter types: "a bundle" is a path (or its directory) on the command line, the file's
path in the command (which loads it: `lock_options.load_lock`); a bundle that cannot be run ends
the command with exit 3."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from .errors import CliError, ExitCode

if TYPE_CHECKING:
    from llm_do.runtime.bundle import LoadedBundle

DEFAULT_BUNDLE = "bundle.lock"


def bundle_path(given: Path) -> Path:
    """The bundle file to run; a missing one is a usage error (exit 2): refusal (exit 3) is for a
    bundle that exists and cannot be run."""
    if given.is_dir():
        lock = given / DEFAULT_BUNDLE
        if lock.is_file():
            return lock
        raise CliError(f"{given} has no {DEFAULT_BUNDLE}: run `llm-do build {given}` to create it, "
                       f"or `llm-do run {given}` to build and run it at once", ExitCode.USAGE)
    if not given.exists():
        raise CliError(f"{given}: no such bundle; run `llm-do build` to create it, or `llm-do run` "
                       "to build and run a project at once", ExitCode.USAGE)
    return given


def verified_bytes(data: bytes, path: Path) -> LoadedBundle:
    """A bundle built in memory (`llm-do run`), verified as one read from `path` would be."""
    from llm_do.runtime.bundle import BundleRefused, bundle_from_bytes

    try:
        return bundle_from_bytes(data, path)
    except BundleRefused as exc:
        raise CliError(str(exc), ExitCode.REFUSED) from None


class BundleParam(click.ParamType):  # type: ignore[type-arg]  # generic only from click 8.3; the bound is 8.2
    """A bundle file or a directory holding bundle.lock: missing is a usage error (exit 2). The
    command loads it with its lock options (`lock_options.load_lock`)."""

    name = "bundle"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        if not isinstance(value, (str, Path)):
            return value  # type: ignore[return-value]  # converted already (click converts defaults again)
        return bundle_path(Path(value))


BUNDLE = BundleParam()


def no_such_worker(option: str, name: str, workers: list[str]) -> CliError:
    """`--worker NAME` (or `--workers`) naming no worker of the bundle: a usage error with the
    closest name, else the names there are."""
    import difflib

    close = difflib.get_close_matches(name, workers, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else f" (it has: {', '.join(sorted(workers))})"
    return CliError(f"{option} {name}: the bundle has no such worker{hint}", ExitCode.USAGE)

"""`llm-do run [PROJECT] [PROMPT] ...`: build in memory and run, for the edit-run loop."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from llm_do.cli.exec_command import EXIT_REFUSED, ExecError, input_options, run_bundle, run_options

from ._common import as_report, compile_or_exit, print_diagnostics


def split_positionals(args: tuple[str, ...]) -> tuple[Path, str | None]:
    """A lone positional naming a directory or a .json file is the project; else it is the prompt."""
    if len(args) > 2:
        raise click.UsageError("expected at most PROJECT and PROMPT")
    if len(args) == 2:
        return Path(args[0]), args[1]
    if len(args) == 1 and (Path(args[0]).is_dir() or (args[0].endswith(".json") and Path(args[0]).is_file())):
        return Path(args[0]), None
    return Path("."), args[0] if args else None


@click.command()
@click.argument("positionals", nargs=-1, metavar="[PROJECT] [PROMPT]")
@input_options
@run_options
def run(positionals: tuple[str, ...], **options: Any) -> int:
    """Compile PROJECT (default .) in memory and run it; nothing is written."""
    from llm_do.runtime.bundle import BundleRefused, bundle_from_bytes

    project, prompt = split_positionals(positionals)
    result = compile_or_exit(project)
    print_diagnostics([as_report(project.as_posix(), result)])
    if result.bundle is None:
        raise ExecError("the project has errors; nothing was run", 1)
    try:
        bundle = bundle_from_bytes(result.bundle, result.loaded.root / "bundle.lock")
    except BundleRefused as exc:
        raise ExecError(str(exc), EXIT_REFUSED) from None
    return run_bundle(bundle, prompt, **options)

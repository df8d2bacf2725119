"""`llm-do run [PROJECT] [PROMPT] ...`: build in memory and run, for the edit-run loop."""

from __future__ import annotations

from pathlib import Path

import click

from ..compile_options import no_cache_option, quiet_option
from ..errors import CliError, ExitCode
from ..inputs import InputOptions
from ..options import RunOptions, input_options, record_option, run_options
from ..params import verified_bytes
from ._compile import as_report, compile_or_exit, print_diagnostics
from .exec import run_once


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
@click.option("--worker", "worker", metavar="NAME", help="Run this worker of the project instead of the entry, with its own input schema.")
@input_options
@run_options
@no_cache_option
@quiet_option
@record_option
def run(positionals: tuple[str, ...], worker: str | None, inputs: InputOptions, opts: RunOptions, no_cache: bool,
        quiet: bool, record: Path | None) -> int:
    """Compile PROJECT (default .) in memory and run it (from its entry, or from --worker NAME);
    nothing is written. Takes exec's options but --durable (a durable run resumes from its
    bundle file: build, then `exec --durable`).

    Exit codes: 0 done, 1 the project has errors or the run failed or timed out, 2 usage error,
    3 bundle refused, 5 done, but the information-flow guard denied calls --approve-all does not approve,
    130 interrupted.
    """
    project, prompt = split_positionals(positionals)
    result = compile_or_exit(project, cache=not no_cache)
    print_diagnostics([as_report(project.as_posix(), result)], quiet=quiet)
    if result.bundle is None:
        raise CliError("the project has errors; nothing was run", ExitCode.FAILED)
    bundle = verified_bytes(result.bundle, result.loaded.root / "bundle.lock")
    return run_once(bundle, prompt, inputs, opts, worker=worker, record=record)

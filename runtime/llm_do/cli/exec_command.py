"""`llm-do exec [BUNDLE] [PROMPT] ...`: run a bundle. Imports nothing of the compiler, no rich,
no YAML (unless the script is YAML): start-up stays close to pydantic-ai's own."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from .durable_options import DurableAwareCommand, detach_option, durable_option
from .run_setup import (
    EXIT_FAILED,
    EXIT_REFUSED,
    EXIT_USAGE,
    ExecError,
    input_options,
    prepare_run,
    print_output,
    run_failure,
    run_options,
)

DEFAULT_BUNDLE = "bundle.lock"
__all__ = ["DEFAULT_BUNDLE", "EXIT_FAILED", "EXIT_REFUSED", "EXIT_USAGE", "ExecError", "run_bundle", "run_options", "input_options"]


def split_positionals(args: tuple[str, ...]) -> tuple[Path, str | None]:
    """A lone positional naming an existing file or directory is the bundle; otherwise it is the
    prompt. A directory stands for its bundle.lock."""
    if len(args) > 2:
        raise click.UsageError("expected at most BUNDLE and PROMPT")
    if len(args) == 2:
        return bundle_path(Path(args[0])), args[1]
    if len(args) == 1 and (Path(args[0]).is_file() or Path(args[0]).is_dir()):
        return bundle_path(Path(args[0])), None
    return bundle_path(Path(DEFAULT_BUNDLE)), args[0] if args else None


def bundle_path(given: Path) -> Path:
    """The bundle file to run; a missing one is a usage error (exit 2): refusal (exit 3) is for a
    bundle that exists and cannot be run."""
    if given.is_dir():
        lock = given / DEFAULT_BUNDLE
        if lock.is_file():
            return lock
        raise ExecError(f"{given} has no {DEFAULT_BUNDLE}: run `llm-do build {given}` to create it, "
                        f"or `llm-do run {given}` to build and run it at once", EXIT_USAGE)
    if not given.exists():
        raise ExecError(f"{given}: no such bundle; run `llm-do build` to create it, or `llm-do run` "
                        "to build and run a project at once", EXIT_USAGE)
    return given


def run_input(runtime: Any, prompt: str | None, input_json: str | None, attach: tuple[str, ...],
              worker: str | None = None) -> dict[str, Any]:
    """entry.args, replaced by --input-json; PROMPT sets `input`, --attach adds attachments.
    With `worker` (exec --worker) the input is that worker's: entry.args are the entry's, not used."""
    data = dict(runtime.bundle.entry.get("args") or {}) if worker is None else {}
    if input_json is not None:
        try:
            data = json.loads(input_json)
        except json.JSONDecodeError as exc:
            raise ExecError(f"--input-json is not valid JSON: {exc.msg} (column {exc.colno})", EXIT_USAGE) from None
        if not isinstance(data, dict):
            raise ExecError("--input-json must be a JSON object", EXIT_USAGE)
    if worker is not None:
        fields = runtime.input_class(runtime.bundle.worker(worker)).model_fields
        what, where = f"the worker '{worker}'", "give a PROMPT or --input-json"
    else:
        function = runtime.bundle.entry_function
        what = f"the entry function '{function['name']}'" if function else f"the entry worker '{runtime.bundle.entry['worker']}'"
        fields = runtime.entry_input_class().model_fields
        where = "give a PROMPT, --input-json, or entry.args in project.json"
    if not data and prompt is None and any(f.is_required() for f in fields.values()):
        raise ExecError(f"{what} needs an input: {where}", EXIT_USAGE)
    if prompt is not None:
        if "input" not in fields:
            raise ExecError(f"{what} takes {', '.join(fields)}, not a prompt; pass --input-json", EXIT_USAGE)
        data["input"] = prompt
    if attach:
        if "attachments" not in fields:
            raise ExecError(f"{what} takes no attachments", EXIT_USAGE)
        for path in attach:
            if Path(path).is_dir():
                raise ExecError(f"--attach {path}: is a directory; attach files", EXIT_USAGE)
        data["attachments"] = list(data.get("attachments") or []) + [str(Path(p).resolve()) for p in attach]
    return data


@click.command(name="exec", cls=DurableAwareCommand)
@click.argument("positionals", nargs=-1, metavar="[BUNDLE] [PROMPT]")
@click.option("--worker", "worker", metavar="NAME", help="Run this worker of the bundle instead of the entry, with its own input schema.")
@input_options
@run_options
@durable_option
@detach_option
def exec_(positionals: tuple[str, ...], durable: str | None, detach_approvals: bool, **options: Any) -> int:
    """Run BUNDLE (default ./bundle.lock; a directory stands for its bundle.lock) from its entry (worker or function),
    or from --worker NAME.

    Exit codes: 0 done, 1 the run failed or timed out, 2 usage error (no such bundle, too),
    3 bundle refused (stale Python or tampered), 4 a durable run waits for an approval, 130 interrupted.
    """
    from llm_do.runtime.bundle import BundleRefused, load_bundle

    path, prompt = split_positionals(positionals)
    try:
        bundle = load_bundle(path)
    except BundleRefused as exc:
        raise ExecError(str(exc), EXIT_REFUSED) from None
    from llm_do.runtime.stale_sources import stale_check

    stale_note = stale_check(bundle)
    if detach_approvals and durable is None:
        raise click.UsageError("--detach-approvals needs --durable")
    try:
        if durable is not None:
            from .durable_run import exec_durable

            code = exec_durable(bundle, prompt, durable=durable, detach_approvals=detach_approvals, run_input=run_input,
                                    **options)
        else:
            code = run_bundle(bundle, prompt, **options)
    except KeyboardInterrupt:
        raise  # quietly
    except BaseException:
        _note(stale_note())
        raise
    _note(stale_note())
    return code


def _note(text: str | None) -> None:
    if text:
        click.echo(f"llm-do: {text}", err=True)


def run_bundle(bundle: Any, prompt: str | None, *, input_json: str | None, attach: tuple[str, ...],
               verbose: int, worker: str | None = None, **options: Any) -> int:
    """Run a loaded bundle as the CLI does: options in, output on stdout, exit code out."""
    if worker is not None and bundle.worker(worker) is None:
        names = ", ".join(sorted(bundle.worker_names()))
        raise ExecError(f"--worker {worker}: the bundle has no such worker (it has: {names})", EXIT_USAGE)
    progress = terminal_progress(verbose, options.get("events_to"))
    live: dict[str, Any] = {"extra_sinks": [progress], "stream": True} if progress is not None else {}
    setup = prepare_run(bundle, verbose=verbose, **options, **live)
    from llm_do.runtime.runtime import Runtime

    runtime = Runtime(bundle, setup.config)
    if progress is not None:
        progress.watch(runtime)
        progress.start()
    from llm_do.runtime.child_processes import children, kill_new_descendants

    before = children(os.getpid())
    try:
        data = run_input(runtime, prompt, input_json, attach, worker)
        try:
            result = runtime.run(data, worker=worker)
        except BaseException:  # stopped or failed: what its abandoned tools started goes too
            kill_new_descendants(before)
            raise
    except Exception as exc:
        raise run_failure(exc, verbose) from None
    finally:
        if progress is not None:
            progress.stop()
        setup.close()
    setup.check_script_used()
    if not setup.events_to_stdout:
        print_output(result.output)
    return 0


def terminal_progress(verbose: int, events_to: str | None) -> Any:
    """The live progress display (cli/progress.py) when stderr is a terminal that nothing else
    writes to (no -v trace, no event stream on stdout); None otherwise, and rich stays unloaded."""
    if verbose or events_to == "-" or not sys.stderr.isatty() or os.environ.get("TERM") == "dumb":
        return None
    from .progress import Progress

    return Progress()

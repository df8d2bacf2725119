"""`llm-do exec [BUNDLE] [PROMPT] ...`: run a bundle. Imports nothing of the compiler, no rich,
no YAML (unless the script is YAML): start-up stays close to pydantic-ai's own."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..inputs import InputOptions, run_input
from ..lock_options import LockOptions, load_lock, lock_options
from ..options import (
    RunOptions,
    checked,
    detach_option,
    durable_option,
    excludes,
    input_options,
    needs,
    record_option,
    run_options,
)
from ..params import DEFAULT_BUNDLE, bundle_path, no_such_worker
from ..session import run_session, terminal_progress

if TYPE_CHECKING:
    from llm_do.runtime.bundle import LoadedBundle


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


@click.command(name="exec")
@click.argument("positionals", nargs=-1, metavar="[BUNDLE] [PROMPT]")
@click.option("--worker", "worker", metavar="NAME", help="Run this worker of the bundle instead of the entry, with its own input schema.")
@input_options
@checked(needs("detach_approvals", "durable", "--detach-approvals needs --durable"))
@run_options
@durable_option
@detach_option
@checked(excludes("record", "durable", "--record and --durable do not go together: a durable run replays its own record"))
@record_option
@lock_options
def exec_(positionals: tuple[str, ...], worker: str | None, durable: str | None, detach_approvals: bool,
          record: Path | None, inputs: InputOptions, opts: RunOptions, lock: LockOptions) -> int:
    """Run BUNDLE (default ./bundle.lock; a directory stands for its bundle.lock) from its entry (worker or function),
    or from --worker NAME.

    Exit codes: 0 done, 1 the run failed or timed out, 2 usage error (no such bundle, too),
    3 bundle refused (tampered, not the build of the project beside it, stale Python, not signed
    by --verify's key), 4 a durable run waits for an approval, 5 done, but the information-flow
    guard denied calls --approve-all does not approve, 130 interrupted.
    """
    path, prompt = split_positionals(positionals)
    bundle = load_lock(path, lock, alongside=_import_runtime)
    if durable is not None:
        from ..durable_run import exec_durable

        return exec_durable(bundle, prompt, inputs, opts, durable=durable, detach_approvals=detach_approvals,
                            worker=worker)
    return run_once(bundle, prompt, inputs, opts, worker=worker, record=record)


def _import_runtime() -> None:
    """What every run imports (pydantic-ai with it), while the bundle is read and verified."""
    import llm_do.runtime.runtime  # noqa: F401


def run_once(bundle: LoadedBundle, prompt: str | None, inputs: InputOptions, opts: RunOptions, *,
             worker: str | None = None, record: Path | None = None) -> int:
    """Run a loaded bundle as the CLI does: options in, output on stdout, exit code out (`exec`, `run`);
    `record`: write a cassette there."""
    with run_session(bundle, opts, progress=terminal_progress(opts)) as session:
        if worker is not None and bundle.worker(worker) is None:
            raise no_such_worker("--worker", worker, bundle.worker_names())
        recording = None
        if record is not None:
            from ..recording import Recording

            recording = Recording(bundle, record, worker, script=opts.script)
            session.setup.config = recording.config(session.config)
        runtime = session.runtime()
        if session.progress is not None:
            session.progress.start()
        data = run_input(runtime, prompt, inputs, worker)
        if recording is None:
            session.output = runtime.run(data, worker=worker).output
            return session.flow_denied_status(runtime)
        recording.turn(data)
        try:
            session.output = runtime.run(data, worker=worker).output
        except Exception as exc:
            recording.failed(exc)
            recording.save()
            raise
        recording.answered(session.output)
        recording.save()
        return session.flow_denied_status(runtime)

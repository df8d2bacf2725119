"""How a run command (`exec`, `chat`, `serve`, `batch`, `resume`) loads its lock, and the options
that say how: `--as-built` and `--verify PUBKEY`.

The lock is read and verified as a file (`llm_do.runtime.bundle.read_bundle`: digest, form,
format, Python sources); with `--verify`, its signature must be by that key
(`llm_do.provenance.signing`); and where its project is beside it, it must be the build of those
sources (`llm_do.provenance.lock_sources`). The build records answer that without the compiler
(for a lock `build` wrote on this machine); otherwise the project is compiled in memory (the
compiler is imported only then) and compared. A lock that is not the build of its sources is
refused (exit 3, naming what differs) or, with `--as-built`, run with a note on stderr.
`llm-do run` and `llm-do test` build in memory, so what they run is the build by construction.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import click

from .errors import CliError, ExitCode

if TYPE_CHECKING:
    from llm_do.provenance.lock_sources import Comparison, RecordedAnswer
    from llm_do.runtime.bundle import LoadedBundle

R = TypeVar("R")
AS_BUILT = "--as-built"


@dataclass(frozen=True)
class LockOptions:
    """`--as-built` and `--verify PUBKEY`."""

    as_built: bool = False
    """Run a lock that is not the build of the sources beside it, with a note."""
    verify: Path | None = None
    """The public key whose signature the lock must carry."""


def lock_options(command: Callable[..., R]) -> Callable[..., R]:
    """`--as-built` and `--verify PUBKEY`, handed to the command as one `lock: LockOptions`."""

    @functools.wraps(command)
    def with_lock(*args: object, as_built: bool, verify: Path | None, **params: object) -> R:
        return command(*args, lock=LockOptions(as_built=as_built, verify=verify), **params)

    with_lock = click.option("--verify", type=click.Path(path_type=Path, dir_okay=False), metavar="PUBKEY",
                             help="Run the lock only if BUNDLE.sig (written by `build --sign`) is a signature "
                                  "of it by this ed25519 public key.")(with_lock)
    return click.option(AS_BUILT, "as_built", is_flag=True,
                        help="Run the lock even when it is not the build of the project beside it (with a note).")(with_lock)


def load_lock(path: Path, opts: LockOptions, *, label: str = "", alongside: Callable[[], object] | None = None) -> LoadedBundle:
    """The lock at `path`, loaded and checked as the module says; refused: exit 3, the reason
    after `label`. `alongside`: work (an import the command makes anyway) done on this thread
    while another reads, verifies and asks the records, which release the GIL while they read
    and hash."""
    bundle, answer = _in_thread(path, alongside) if alongside is not None else _read(path)
    from llm_do.bundle.errors import BundleRefused
    from llm_do.provenance.lock_sources import obey, recorded_comparison

    try:
        if opts.verify is not None:
            _verify_signature(bundle, opts.verify)
        comparison = recorded_comparison(answer) or _compare_with_build(bundle, answer.project)
        note = obey(bundle.path, comparison, as_built=opts.as_built, override=AS_BUILT)
    except BundleRefused as exc:
        raise CliError(f"{label}{exc}", ExitCode.REFUSED) from None
    if note is not None:
        click.echo(f"llm-do: {note}", err=True)
    return bundle


def _read(path: Path) -> tuple[LoadedBundle, RecordedAnswer]:
    from llm_do.provenance.lock_sources import recorded_answer
    from llm_do.runtime.bundle import BundleRefused, read_bundle

    try:
        bundle = read_bundle(path)
    except BundleRefused as exc:
        raise CliError(str(exc), ExitCode.REFUSED) from None
    return bundle, recorded_answer(bundle.path, bundle.text.data, bundle.root, bundle.text.get("sources") or {})


def _in_thread(path: Path, work: Callable[[], object]) -> tuple[LoadedBundle, RecordedAnswer]:
    """`_read(path)` on another thread while `work` runs on this one; nothing of the bundle is used
    before it is verified, and whatever `_read` raises (a refusal: exit 3) is raised here."""
    outcome: list[tuple[LoadedBundle, RecordedAnswer] | BaseException] = []

    def load() -> None:
        try:
            outcome.append(_read(path))
        except BaseException as exc:  # handed to this thread, raised there
            outcome.append(exc)

    thread = threading.Thread(target=load, name="llm-do load bundle", daemon=True)
    thread.start()
    work()
    thread.join()
    [result] = outcome
    if isinstance(result, BaseException):
        raise result
    return result


def _verify_signature(bundle: LoadedBundle, key: Path) -> None:
    from llm_do.provenance.signing import KeyProblem, verify

    try:
        verify(bundle.path, bundle.text.data, key)
    except KeyProblem as exc:
        raise CliError(f"--verify: {exc}", ExitCode.USAGE) from None


def _compare_with_build(bundle: LoadedBundle, project: Path | None) -> Comparison:
    """No record answers: compile the project beside the lock (`RecordedAnswer.project`) and compare
    (the compiler is imported here only)."""
    from llm_do.compiler.build.lock_check import compare_with_build

    return compare_with_build(project or bundle.root, bundle.path, bundle.text.data)

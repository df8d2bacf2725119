"""`llm-do build [PROJECT] [-o PATH] [--check]`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from llm_do.provenance.build_record import manifest_root

from ..compile_options import no_cache_option, quiet_option
from ..errors import ExitCode, usage_problem
from ._compile import as_report, print_diagnostics, usage_errors

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from llm_do.compiler.build import BuildOutcome

LOCK_NAME = "bundle.lock"


def lock_path(project: Path, output: Path | None) -> Path:
    if output is None:
        root = manifest_root(project)
        if root is None:
            from llm_do.compiler.stages.load import ProjectNotFound, find_project

            try:
                root, _ = find_project(project)
            except ProjectNotFound as exc:
                raise usage_problem(str(exc)) from None
        return root / LOCK_NAME
    if output.is_dir() or str(output).endswith(("/", "\\")):
        output = output / LOCK_NAME
    if not output.parent.is_dir():
        raise usage_problem(f"{output.parent}: no such directory")
    return output


@click.command()
@click.argument("project", default=".", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Where to write the lock (default: next to project.json).")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 and say what differs when the lock is not what build would write.")
@click.option("--sign", "sign_with", type=click.Path(path_type=Path, dir_okay=False), metavar="KEYFILE",
              help="Sign the lock with this ed25519 private key (BUNDLE.sig beside it; `exec --verify` checks it).")
@no_cache_option
@quiet_option
def build(project: Path, output: Path | None, check: bool, sign_with: Path | None, no_cache: bool, quiet: bool) -> int:
    """Compile PROJECT (a directory or its project.json) into bundle.lock.

    With errors nothing is written and the old lock stays.
    """
    if check and sign_with is not None:
        raise usage_problem("--sign writes a signature, --check writes nothing; give one")
    lock = lock_path(project, output)
    key = _signing_key(sign_with)
    if check:
        return _check(project, lock, output, cache=not no_cache, quiet=quiet)
    outcome = _built(project, lock, cache=not no_cache)
    _say_diagnostics(project, outcome, quiet)
    counted = f"({outcome.workers} worker{'s' if outcome.workers != 1 else ''})"
    from llm_do.compiler.build import LockIsSource, write_lock

    try:
        written = write_lock(outcome, lock)
    except LockIsSource as exc:
        raise usage_problem(str(exc)) from None
    except OSError as exc:
        raise usage_problem(f"cannot write {lock}: {exc.strerror}") from None
    if outcome.failed:
        click.echo(f"build failed; {_shown(lock)} left unchanged", err=True)
        return ExitCode.FAILED
    _done(f"{_shown(lock)} {'written' if written else 'is up to date'} {counted}", quiet)
    _signed(lock, key, quiet)
    return ExitCode.OK


def _done(line: str, quiet: bool) -> None:
    """A line saying the build went well: not with `-q`, which prints only errors."""
    if not quiet:
        click.echo(line, err=True)


def _signing_key(key_file: Path | None) -> Ed25519PrivateKey | None:
    """The key of `--sign`, read before anything is built: a key that cannot be used writes nothing."""
    if key_file is None:
        return None
    from llm_do.provenance.signing import private_key

    return private_key(key_file)


def _signed(lock: Path, key: Ed25519PrivateKey | None, quiet: bool) -> None:
    """Sign the lock as it now is (`--sign`); without a key, say so when an old signature beside it
    no longer signs it."""
    from llm_do.provenance.signing import signature_path

    if key is None:
        if signature_path(lock).is_file():
            from llm_do.provenance.signing import signs

            if not signs(signature_path(lock), lock.read_bytes()):
                click.echo(f"llm-do: note: {_shown(signature_path(lock))} signs an older {lock.name}: sign it again "
                           "with `llm-do build --sign KEYFILE`", err=True)
        return
    from llm_do.provenance.signing import sign

    try:
        path = sign(lock, lock.read_bytes(), key)
    except OSError as exc:
        raise usage_problem(f"cannot write the signature of {lock}: {exc.strerror}") from None
    _done(f"{_shown(path)} written", quiet)


def _built(project: Path, lock: Path, *, cache: bool) -> BuildOutcome:
    """The lock recalled, rebuilt or compiled (`build_lock`); a path that names no project is a usage error."""
    from llm_do.compiler.build import build_lock

    with usage_errors(project):
        return build_lock(project, lock, cache=cache)


def _say_diagnostics(project: Path, outcome: BuildOutcome, quiet: bool) -> None:
    """What the build said, recalled or compiled alike; none said loads no report module."""
    if outcome.diagnostics:
        from llm_do.compiler.report.diagnostics import ProjectDiagnostics

        print_diagnostics([ProjectDiagnostics(str(project), outcome.root, outcome.diagnostics, None)], quiet=quiet)


def _check(project: Path, lock: Path, output: Path | None, *, cache: bool, quiet: bool) -> int:
    """Build in memory and compare with the lock: 0 when it is what `build` would write, else 1; a
    build record that says it is (`recall_lock`) answers without building."""
    if cache:
        from llm_do.compiler.build import recall_lock

        with usage_errors(project):
            recalled = recall_lock(project, lock, rebuild=False)
        if recalled is not None:
            _say_diagnostics(project, recalled, quiet)
            _done(f"{_shown(lock)} is up to date", quiet)
            return ExitCode.OK
    from llm_do.compiler.build.lock_check import check_lock

    with usage_errors(project):
        status = check_lock(project, lock, cache=cache)
    print_diagnostics([as_report(str(project), status.result)], quiet=quiet)
    if status.current:
        _done(f"{_shown(lock)} is up to date", quiet)
        return ExitCode.OK
    click.echo(f"{_shown(lock)} is not what `llm-do build` would write:", err=True)
    for line in status.differences:
        click.echo(f"  {line}", err=True)
    command = build_command(project, output)
    click.echo(f"run `{command}` to update it" if status.result.ok else f"fix the errors, then run `{command}`", err=True)
    return ExitCode.FAILED


def build_command(project: Path, output: Path | None) -> str:
    """The `llm-do build` that writes this lock: the project and `-o` as given, quoted for a shell."""
    import shlex

    words = ["llm-do", "build"]
    if project != Path("."):
        words.append(str(project))
    if output is not None:
        words += ["-o", str(output)]
    return shlex.join(words)


def _shown(path: Path) -> str:
    import os

    rel = os.path.relpath(path)
    return rel if not rel.startswith("..") else str(path)

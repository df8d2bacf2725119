"""Permission behaviour tested as a user without privileges.

The suite often runs as root (CI does, and so does this machine), and root opens any file and
enters any folder whatever its mode: a thread written 0644, or a folder made 0o1000, passes every
test that reads it back as root. These helpers call a function in a forked child that runs as an
unprivileged user instead:

- `run_unprivileged(fn, *args)`: as `nobody` when the tests run as root (the child drops its groups
  and user before it calls `fn`), else as the current user, who is unprivileged already. For what
  a file's owner must be able to do (enter the folders llm-do made for it).
- `run_as_another_user(fn, *args)`: as a user who does not own the test's files (`nobody`), which
  only root can become; without root the test is skipped, saying so. For what a file's mode must
  keep from everyone else (read a thread).

The child is forked, not a new interpreter: the interpreter and its libraries may lie in a folder
only root may enter (`/root/.pyenv`), so `fn` may use only modules the test has imported already.
Its return value, or the exception it raised, comes back pickled and is returned, or raised, here.
`world_folder()` gives a folder every user may enter and write (pytest's `tmp_path` is inside a
0700 folder of the user running the tests), so the child reaches the files it is meant to test.
"""

from __future__ import annotations

import os
import pickle
import pwd
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest

UNPRIVILEGED_USER = "nobody"
T = TypeVar("T")


def _nobody() -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam(UNPRIVILEGED_USER)
    except KeyError:
        return None


def dropping_privileges() -> bool:
    """Whether the children drop to `nobody` (the tests run as root and that user exists)."""
    return os.geteuid() == 0 and _nobody() is not None


def run_unprivileged(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` in a forked child as an unprivileged user: `nobody` when the tests run as root,
    else the current user. Returns what it returned; raises what it raised."""
    user = _nobody() if os.geteuid() == 0 else None
    if os.geteuid() == 0 and user is None:
        pytest.fail(f"the tests run as root and there is no user {UNPRIVILEGED_USER!r} to drop to")
    read_end, write_end = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork() of a process with threads: the child only calls fn
        pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        status = 0
        try:
            os.close(read_end)
            if user is not None:
                os.setgroups([])
                os.setgid(user.pw_gid)
                os.setuid(user.pw_uid)
            try:
                outcome: tuple[str, Any] = ("returned", fn(*args))
            except BaseException as exc:  # noqa: BLE001 - sent back to the test
                outcome = ("raised", exc)
            try:
                data = pickle.dumps(outcome)
            except Exception as exc:  # noqa: BLE001
                data = pickle.dumps(("raised", RuntimeError(f"the child's outcome cannot be pickled: {exc}")))
            with os.fdopen(write_end, "wb") as pipe:
                pipe.write(data)
        except BaseException:  # noqa: BLE001
            status = 1
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    if not data:
        raise AssertionError(f"the unprivileged child ended without an answer (wait status {status})")
    kind, value = pickle.loads(data)
    if kind == "raised":
        raise value
    return value


def run_as_another_user(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` as a user who does not own the test's files; skipped, saying so, when the tests
    do not run as root (only root can become another user)."""
    if not dropping_privileges():
        pytest.skip("acting as another user needs root to become one (CI runs as root); the modes are asserted directly too")
    return run_unprivileged(fn, *args)


@contextmanager
def world_folder() -> Iterator[Path]:
    """A fresh folder every user may enter and write (0o777, below the system's temporary folder),
    removed afterwards with what the child made in it."""
    folder = Path(tempfile.mkdtemp(prefix="llm-do-permissions-"))
    try:
        os.chmod(folder, 0o777)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)

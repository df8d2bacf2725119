"""A Postgres cluster of the tests' own: started from the Debian packages in a temporary folder as
an unprivileged user (the server refuses root), on loopback only, stopped after. The fixture
`postgres_server` (tests/runtime/conftest.py) starts one per session; the tests that use it are in
one xdist group (`POSTGRES_GROUP`), so one worker runs them all on one cluster, each test with a
database of its own. Without Postgres a test skips saying why; with CI=1 it fails instead."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.processes import free_port


def _unavailable(why: str) -> None:
    if os.environ.get("CI") == "1":
        pytest.fail(f"Postgres is required in CI (CI=1): {why}")
    pytest.skip(why)


def _bin_dir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    if found:
        return Path(found[0]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).resolve().parent if initdb else None


def _as_server_user(argv: list[str]) -> list[str]:
    """The server refuses to run as root: as root, run it as `nobody`."""
    if os.geteuid() != 0:
        return argv
    runuser = shutil.which("runuser")
    if runuser is None:
        _unavailable("running as root without `runuser` to start Postgres as an unprivileged user")
    return [runuser, "-u", "nobody", "--", *argv]


POSTGRES_GROUP = pytest.mark.xdist_group("postgres")
"""The mark of every test that uses `postgres_server`: one xdist worker, one cluster."""


@contextmanager
def postgres_cluster() -> Iterator[str]:
    """A running server's URL without a database: a test appends its own (`/llmdo_runs`)."""
    bin_dir = _bin_dir()
    if bin_dir is None:
        _unavailable("initdb not found (apt-get install postgresql)")
    base = Path(tempfile.mkdtemp(prefix="llmdo-pg-"))
    data = base / "data"
    if os.geteuid() == 0:
        shutil.chown(base, "nobody")
    port = free_port()
    init = subprocess.run(_as_server_user([str(bin_dir / "initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
                                           "--no-sync"]), capture_output=True, text=True)
    if init.returncode != 0:
        shutil.rmtree(base, ignore_errors=True)
        _unavailable(f"initdb failed: {(init.stderr or init.stdout).strip()[-300:]}")
    pg_ctl = [str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(base / "log"), "-w", "-t", "60"]
    options = f"-k {base} -p {port} -c listen_addresses=127.0.0.1 -c fsync=off"
    start = subprocess.run(_as_server_user([*pg_ctl, "-o", options, "start"]), capture_output=True, text=True)
    if start.returncode != 0:
        log = (base / "log").read_text(errors="replace") if (base / "log").exists() else ""
        shutil.rmtree(base, ignore_errors=True)
        _unavailable(f"the Postgres server did not start: {(start.stderr + log).strip()[-300:]}")
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}"
    finally:
        subprocess.run(_as_server_user([*pg_ctl, "-m", "immediate", "stop"]), capture_output=True)
        shutil.rmtree(base, ignore_errors=True)

"""A durable run recorded in Postgres: a cluster of its own, started from the Debian packages in a
temporary folder as an unprivileged user (the server refuses root), on loopback only, stopped
after. Without Postgres the test skips saying why; with CI=1 it fails instead."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import run_cli
from tests.runtime.test_durable import (  # noqa: F401  (_template and project are fixtures)
    APPROVAL_SCRIPT,
    _template,
    llm_do,
    marks,
    project,
    run_id,
    write,
)

pytest.importorskip("dbos")


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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    bin_dir = _bin_dir()
    if bin_dir is None:
        _unavailable("initdb not found (apt-get install postgresql)")
    base = Path(tempfile.mkdtemp(prefix="llmdo-pg-"))
    data = base / "data"
    if os.geteuid() == 0:
        shutil.chown(base, "nobody")
    port = _free_port()
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
        yield f"postgresql://postgres@127.0.0.1:{port}/llmdo_runs"
    finally:
        subprocess.run(_as_server_user([*pg_ctl, "-m", "immediate", "stop"]), capture_output=True)
        shutil.rmtree(base, ignore_errors=True)


def test_a_durable_run_recorded_in_postgres(project: Path, tmp_path: Path, postgres_url: str) -> None:  # noqa: F811
    root = project.parent
    log = tmp_path / "marks.log"
    script = write(tmp_path / "s.json", APPROVAL_SCRIPT)
    first = llm_do("exec", project, "--durable", postgres_url, "--detach-approvals", "--script", script, cwd=root, log=log)
    assert first.returncode == 4, first.stderr
    rid = run_id(first.stderr)
    assert not (root / ".llm-do").exists()
    pending = run_cli("approvals", "--db", postgres_url, cwd_to=root)
    assert pending.exit_code == 0 and "publish" in pending.stdout, pending.stderr
    assert run_cli("approve", rid, "1", "--db", postgres_url, cwd_to=root).exit_code == 0
    resumed = llm_do("resume", rid, "--db", postgres_url, "--script", script, "--strict-script", cwd=root, log=log)
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.strip() == "finished"
    assert marks(log) == ["mark 1", "publish news"]
    listed = run_cli("runs", "--db", postgres_url, cwd_to=root)
    assert f"{rid}  " in listed.stdout and " done " in listed.stdout

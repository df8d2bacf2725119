"""The warm parent's forks (tests/support/warm_cli.py) are `llm-do` as the tests see it: the same
exit code, stdout and stderr as the installed command in a fresh interpreter, in the directory and
with the environment the client was started with; a signal sent to the client ends the command as
it would end the command itself."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.warm_cli import command

pytestmark = pytest.mark.process

REAL = [sys.executable, "-m", "llm_do.cli.main"]


def test_a_fork_says_and_exits_what_the_real_command_does(tmp_path: Path, warm_llm_do: Path) -> None:
    (tmp_path / "empty").mkdir()
    args = ["serve", "--events", "-"]  # a usage error about the directory's bundle.lock: exit 2
    env = {"PATH": "/usr/bin:/bin", "NO_COLOR": "1"}
    real = subprocess.run([*REAL, *args], cwd=tmp_path / "empty", env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120)
    warm = subprocess.run(command(warm_llm_do, *args), cwd=tmp_path / "empty", env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120)
    assert real.returncode == 2, real.stderr
    assert (warm.returncode, warm.stdout, warm.stderr) == (real.returncode, real.stdout, real.stderr)


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 0)], ids=["sigint", "sigterm"])
def test_a_signal_to_the_client_reaches_the_command(tmp_path: Path, warm_llm_do: Path, sig: int, code: int) -> None:
    """`serve --http` stops on SIGINT (exit 130) and SIGTERM (exit 0): sent to the client, the
    command gets it and the client exits with the command's code."""
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "project.json").write_text('{"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}}')
    (tmp_path / "p" / "main.worker").write_text("---\n---\nWork.\n")
    assert run_cli("build", tmp_path / "p").exit_code == 0
    err = tmp_path / "err"
    with err.open("wb") as stderr:
        proc = subprocess.Popen(command(warm_llm_do, "serve", tmp_path / "p" / "bundle.lock", "--http", "127.0.0.1:0"),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr)
    deadline = time.monotonic() + 60
    while " at http://" not in err.read_text():
        assert proc.poll() is None and time.monotonic() < deadline, err.read_text()
        time.sleep(0.05)
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=60)
    assert (proc.returncode, out) == (code, b""), err.read_text()

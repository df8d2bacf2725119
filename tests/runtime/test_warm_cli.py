"""The warm parent's forks (tests/support/warm_cli.py) are `llm-do` as the tests see it: the same
exit code, stdout and stderr as the installed command in a fresh interpreter, in the directory and
with the environment the client was started with."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.warm_cli import command, warm_cli

pytestmark = pytest.mark.process

REAL = [sys.executable, "-m", "llm_do.cli.main"]


def test_a_fork_says_and_exits_what_the_real_command_does(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    args = ["serve", "--events", "-"]  # a usage error about the directory's bundle.lock: exit 2
    env = {"PATH": "/usr/bin:/bin", "NO_COLOR": "1"}
    real = subprocess.run([*REAL, *args], cwd=tmp_path / "empty", env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120)
    with warm_cli() as sock:
        warm = subprocess.run(command(sock, *args), cwd=tmp_path / "empty", env=env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=120)
    assert real.returncode == 2, real.stderr
    assert (warm.returncode, warm.stdout, warm.stderr) == (real.returncode, real.stdout, real.stderr)

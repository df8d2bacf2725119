"""`llm-do` on a pseudo-terminal whose screen a terminal emulator (pyte) keeps, with the lines
scrolled off the top: what a person could read and scroll back through, not the bytes sent."""

from __future__ import annotations

import fcntl
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path

import pyte

from tests.support.processes import alive

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Terminal:
    """A subprocess of `llm-do` whose stdin and stderr are a pseudo-terminal of `rows` x `columns`,
    and stdout too unless `stdout_on_pty` is False (then a pipe, read by `finish`); use it as a
    context manager, which always reaps the child."""

    def __init__(self, cwd: Path, *args: str, rows: int = 40, columns: int = 120, stdout_on_pty: bool = True) -> None:
        import pty

        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        env = dict(os.environ, TERM="xterm", COLUMNS=str(columns), LINES=str(rows))
        env.pop("NO_COLOR", None)
        self.screen = pyte.HistoryScreen(columns, rows, history=10_000)
        self._stream = pyte.ByteStream(self.screen)
        self.raw = b""
        self.proc = subprocess.Popen([sys.executable, "-m", "llm_do.cli.main", *args], cwd=cwd, env=env,
                                     stdin=slave, stdout=slave if stdout_on_pty else subprocess.PIPE, stderr=slave,
                                     start_new_session=True)
        self.out = ""
        """What the child wrote on stdout, when that is a pipe (read by `finish`)."""
        os.close(slave)

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Kill the child if it still runs, reap it, and check it is gone."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        if self.proc.stdout is not None and not self.proc.stdout.closed:
            self.proc.stdout.close()
        if self.master >= 0:
            os.close(self.master)
            self.master = -1
        assert not alive(self.proc.pid)

    def lines(self) -> list[str]:
        """Every line a person can see or scroll back to, trailing blanks removed."""
        width = self.screen.columns
        history = ["".join(line[x].data for x in range(width)).rstrip() for line in self.screen.history.top]
        return history + [line.rstrip() for line in self.screen.display]

    @property
    def sent(self) -> str:
        """Everything the terminal was sent, escape sequences removed (drawn, erased or not)."""
        return ANSI.sub("", self.raw.decode("utf-8", "replace"))

    def wait(self, ready: Callable[[], bool], what: str, timeout: float = 60) -> None:
        end = time.monotonic() + timeout
        while not ready():
            read = self._read(min(0.5, end - time.monotonic()))
            if not read and (time.monotonic() >= end or self.proc.poll() is not None):
                raise AssertionError(f"{what} never came; the terminal shows:\n" + "\n".join(self.lines()))

    def wait_sent(self, needle: str, count: int = 1, timeout: float = 60) -> None:
        """Until the terminal was sent `needle` `count` times."""
        self.wait(lambda: self.sent.count(needle) >= count, f"{needle!r} x{count}", timeout)

    def send(self, text: str) -> None:
        os.write(self.master, text.encode())

    def interrupt(self) -> None:
        """What Ctrl-C on the terminal sends."""
        self.proc.send_signal(signal.SIGINT)

    def finish(self, timeout: float = 60) -> int:
        """Read until the child exits; its exit code (its stdout, if a pipe, is in `out`)."""
        end = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < end:
            self._read(0.1)
        while self._read(0.05):
            pass
        code = self.proc.wait(timeout=max(end - time.monotonic(), 1))
        if self.proc.stdout is not None:
            self.out = self.proc.stdout.read().decode()
            self.proc.stdout.close()
        return code

    def pause(self, seconds: float) -> None:
        """Read what comes for `seconds` (to show that nothing is drawn meanwhile)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self._read(end - time.monotonic())

    def _read(self, timeout: float) -> bool:
        if timeout <= 0 or self.master < 0:
            return False
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return False
        try:
            data = os.read(self.master, 65536)
        except OSError:  # the child closed the terminal
            return False
        self.raw += data
        self._stream.feed(data)
        return bool(data)


def in_order(lines: list[str], *wanted: str) -> list[str]:
    """The `wanted` texts not found on lines in this order (each on a later line than the one before)."""
    missing, at = [], 0
    for text in wanted:
        found = next((i for i in range(at, len(lines)) if text in lines[i]), None)
        if found is None:
            missing.append(text)
        else:
            at = found + 1
    return missing

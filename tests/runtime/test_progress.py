"""The live progress display, checked in a pseudo-terminal: `llm-do exec` and `llm-do chat` run as
subprocesses whose stderr (and stdin) is a pty, so the display is on; off a terminal, stdout holds
the output only and stderr nothing."""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import worker

pytestmark = [pytest.mark.process, pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX")]

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker("toolsets: [filesystem_project, helper]", "Work."),
    "helper.worker": worker("toolsets: [filesystem_project_ro]", "Help."),
}
FINAL = "The notes are read and the helper agrees, all done."
SCRIPT = {"workers": {
    "main": [{"tool_calls": [{"tool": "helper", "args": {"input": "read the notes"}}]}, {"text": FINAL}],
    "helper": [{"tool_calls": [{"tool": "read_file", "args": {"path": "notes.txt"}}]}, {"text": "agreed"}],
}}
FRAME = re.compile(r"llm-do: \d+\.\ds")
"""The status line that starts every frame of the display."""
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class Pty:
    """A subprocess of `llm-do` with stdin and stderr on a pseudo-terminal, stdout on a pipe (or the
    pty too)."""

    def __init__(self, cwd: Path, *args: str, stdout_on_pty: bool = False) -> None:
        import pty

        self.master, slave = pty.openpty()
        env = dict(os.environ, TERM="xterm", COLUMNS="120")
        env.pop("NO_COLOR", None)
        self.proc = subprocess.Popen([sys.executable, "-m", "llm_do.cli.main", *args], cwd=cwd, env=env,
                                     stdin=slave, stderr=slave, stdout=slave if stdout_on_pty else subprocess.PIPE)
        os.close(slave)
        self.raw = b""

    @property
    def screen(self) -> str:
        """What the terminal was sent, escape sequences removed."""
        return ANSI.sub("", self.raw.decode("utf-8", "replace"))

    def read_until(self, needle: str, timeout: float = 30) -> None:
        end = time.monotonic() + timeout
        while needle not in self.screen:
            if not self._read(end - time.monotonic()):
                raise AssertionError(f"{needle!r} never appeared; the terminal showed:\n{self.screen}")

    def pause(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self._read(end - time.monotonic())

    def _read(self, timeout: float) -> bool:
        if timeout <= 0:
            return False
        ready, _, _ = select.select([self.master], [], [], timeout)
        if not ready:
            return False
        try:
            data = os.read(self.master, 65536)
        except OSError:  # the child closed the terminal
            return False
        self.raw += data
        return bool(data)

    def send(self, text: str) -> None:
        os.write(self.master, text.encode())

    def finish(self, timeout: float = 30) -> tuple[int, str]:
        end = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < end:
            self._read(0.1)
        self._read(0.2)
        code = self.proc.wait(timeout=5)
        out = self.proc.stdout.read().decode() if self.proc.stdout else ""
        os.close(self.master)
        return code, out


@pytest.fixture
def project(build, script) -> tuple[Path, Path]:
    bundle = build(PROJECT)
    (bundle.parent / "notes.txt").write_text("the notes\n")
    return bundle, script(SCRIPT)


def test_exec_on_a_terminal_shows_the_call_tree_and_the_streamed_text(project: tuple[Path, Path]) -> None:
    bundle, script = project
    term = Pty(bundle.parent, "exec", str(bundle), "go", "--script", str(script))
    code, out = term.finish()
    assert code == 0, term.screen
    assert out == FINAL + "\n"
    screen = term.screen
    assert FRAME.search(screen)
    assert "main (depth 1, script:main)" in screen
    assert "helper (depth 2, script:helper)" in screen
    assert "→ read_file" in screen
    assert "→ helper" in screen
    assert "✓ helper" in screen
    assert re.search(r"\d+ requests? · \d+ tokens", screen)
    assert FINAL in screen  # streamed into the display, not only printed on stdout


def test_off_a_terminal_stdout_holds_only_the_output(project: tuple[Path, Path]) -> None:
    bundle, script = project
    proc = subprocess.run([sys.executable, "-m", "llm_do.cli.main", "exec", str(bundle), "go", "--script", str(script)],
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == FINAL + "\n"
    assert proc.stderr == ""


def test_the_display_steps_aside_while_the_terminal_asks_for_approval(build, script) -> None:
    bundle = build(PROJECT)
    s = script({"workers": {"main": [{"tool_calls": [{"tool": "write_file", "args": {"path": "out.txt", "content": "hi"}}]},
                                     {"text": "written"}]}})
    term = Pty(bundle.parent, "exec", str(bundle), "go", "--script", str(s))
    term.read_until("[n] deny")
    asked_at = len(term.screen)
    term.pause(0.6)  # a display still running would redraw several times by now
    assert not FRAME.search(term.screen[asked_at:]), term.screen[asked_at:]
    term.send("y\r")
    code, out = term.finish()
    assert code == 0, term.screen
    assert out == "written\n"
    assert (bundle.parent / "out.txt").read_text() == "hi"
    after = term.screen[term.screen.index("approved once"):]
    assert "✓ main" in after  # and it came back once answered


def test_chat_on_a_terminal_streams_replies_and_keeps_the_conversation(build, script) -> None:
    bundle = build(PROJECT)
    s = script({"workers": {"main": [{"text": "first answer here"}, {"text": "second answer here"}]}})
    term = Pty(bundle.parent, "chat", str(bundle), "--thread", "tty", "--script", str(s), stdout_on_pty=True)
    term.read_until("> ")
    term.send("hello\r")
    term.read_until("first answer here\r\n> ")
    term.send("again\r")
    term.read_until("second answer here\r\n> ")
    term.send("/usage\r")
    term.read_until("2 turns")
    term.send("/exit\r")
    code, _ = term.finish()
    assert code == 0, term.screen
    assert "main (depth 1, script:main)" in term.screen
    import json

    thread: Any = json.loads((bundle.parent / ".llm-do" / "threads" / "tty.json").read_text())
    assert len(thread["messages"]) == 4


def test_ctrl_c_in_a_chat_cancels_the_reply_and_the_conversation_goes_on(py_bundle: Path, script) -> None:
    import json
    import signal

    s = script({"workers": {"main": [{"tool_calls": [{"tool": "nap", "args": {"seconds": 60}}]},
                                     {"text": "after the cancel"}]}})
    term = Pty(py_bundle.parent, "chat", "--thread", "c", "--script", str(s), stdout_on_pty=True)
    term.read_until("> ")
    term.send("take your time\r")
    term.read_until("→ nap")
    term.proc.send_signal(signal.SIGINT)  # what Ctrl-C on the terminal sends
    term.read_until("reply cancelled")
    term.send("never mind\r")
    term.read_until("after the cancel\r\n> ")
    # readline writes the prompt before it waits for input: a signal caught in between is handled
    # only when a key arrives, so the interrupt comes once the prompt waits.
    term.pause(0.5)
    term.proc.send_signal(signal.SIGINT)  # at the prompt: the chat ends
    code, _ = term.finish()
    assert code == 0, term.screen
    thread: Any = json.loads((py_bundle.parent / ".llm-do" / "threads" / "c.json").read_text())
    prompts = [p["content"] for m in thread["messages"] for p in m["parts"] if p["part_kind"] == "user-prompt"]
    assert prompts == ["never mind"]

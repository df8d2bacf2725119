"""The live progress display, checked in a pseudo-terminal: `llm-do exec` and `llm-do chat` run as
subprocesses whose stderr (and stdin) is a pty, so the display is on; off a terminal, stdout holds
the output only and stderr nothing. What a person was shown and answered (chat messages and
replies, approval questions, answers, typed feedback, confirmations) stays on the screen or in its
scrollback, read with a terminal emulator: the display erases only its own frames."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import worker
from tests.support.terminal import Terminal, in_order

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
QUESTION = "[r] revise with feedback"


@pytest.fixture
def project(build, script) -> tuple[Path, Path]:
    bundle = build(PROJECT)
    (bundle.parent / "notes.txt").write_text("the notes\n")
    return bundle, script(SCRIPT)


def test_exec_on_a_terminal_shows_the_call_tree_and_the_streamed_text(project: tuple[Path, Path]) -> None:
    bundle, script = project
    with Terminal(bundle.parent, "exec", str(bundle), "go", "--script", str(script), stdout_on_pty=False) as term:
        code = term.finish()
    assert code == 0, term.sent
    assert term.out == FINAL + "\n"
    screen = term.sent
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


def write(path: str) -> dict[str, Any]:
    return {"tool_calls": [{"tool": "write_file", "args": {"path": path, "content": "hi"}}]}


def test_the_display_steps_aside_for_approvals_and_leaves_every_answer_on_screen(build, script) -> None:
    bundle = build(PROJECT)
    s = script({"workers": {"main": [write("a.txt"), write("b.txt"), write("c.txt"), write("d.txt"), write("e.txt"),
                                     {"text": "never"}]}})
    with Terminal(bundle.parent, "exec", str(bundle), "go", "--script", str(s)) as term:
        term.wait_sent(QUESTION)
        asked_at = len(term.sent)
        term.pause(0.6)  # a display still running would redraw several times by now
        assert not FRAME.search(term.sent[asked_at:]), term.sent[asked_at:]
        term.send("y\r")
        term.wait_sent(QUESTION, 2)
        assert FRAME.search(term.sent[term.sent.index("approved once"):])  # it came back once answered
        term.send("n\r")
        term.wait_sent(QUESTION, 3)
        term.send("r\r")
        term.wait_sent("what should it do instead?")
        term.send("write d.txt instead\r")
        term.wait_sent(QUESTION, 4)
        term.send("s\r")
        term.wait_sent(QUESTION, 5)
        term.interrupt()  # Ctrl-C at a question ends the run
        assert term.finish() == 130, term.lines()
        lines = term.lines()
    assert not in_order(
        lines,
        "path: a.txt", f"{QUESTION}: y", "-> approved once",
        "path: b.txt", f"{QUESTION}: n", "-> denied",
        "path: c.txt", f"{QUESTION}: r", "(what should it do instead?): write d.txt instead",
        "-> not run; the feedback goes to the model",
        "path: d.txt", f"{QUESTION}: s", "-> approved: write_file",
        "path: e.txt", QUESTION,
    ), "\n".join(lines)
    assert [p.name for p in sorted(bundle.parent.glob("?.txt"))] == ["a.txt", "d.txt"]


def test_chat_on_a_terminal_streams_replies_and_keeps_the_conversation_on_screen(build, script) -> None:
    bundle = build(PROJECT)
    replies = ["first answer here", "second answer here", "third answer here"]
    s = script({"workers": {"main": [{"text": reply} for reply in replies]}})
    with Terminal(bundle.parent, "chat", str(bundle), "--thread", "tty", "--script", str(s)) as term:
        for n, reply in enumerate(replies, start=1):
            term.wait_sent("> ", n)
            term.send(f"message {n}\r")
            term.wait_sent(f"{reply}\r\n> ")
        term.send("/usage\r")
        term.wait_sent("3 turns")
        term.send("/exit\r")
        assert term.finish() == 0, term.sent
        lines = term.lines()
    assert "main (depth 1, script:main)" in term.sent
    assert not in_order(lines, "> message 1", replies[0], "> message 2", replies[1], "> message 3", replies[2],
                        "> /usage", "3 turns", "> /exit"), "\n".join(lines)
    import json

    thread: Any = json.loads((bundle.parent / ".llm-do" / "threads" / "tty.json").read_text())
    assert len(thread["messages"]) == 6


def test_ctrl_c_in_a_chat_cancels_the_reply_and_the_conversation_stays_on_screen(py_bundle: Path, script) -> None:
    import json

    s = script({"workers": {"main": [{"text": "the first reply"}, {"tool_calls": [{"tool": "nap", "args": {"seconds": 60}}]},
                                     {"text": "after the cancel"}]}})
    with Terminal(py_bundle.parent, "chat", "--thread", "c", "--script", str(s)) as term:
        term.wait_sent("> ")
        term.send("hello\r")
        term.wait_sent("the first reply\r\n> ")
        term.send("take your time\r")
        term.wait_sent("→ nap")
        term.interrupt()
        term.wait_sent("reply cancelled")
        term.send("never mind\r")
        term.wait_sent("after the cancel\r\n> ")
        # readline writes the prompt before it waits for input: a signal caught in between is handled
        # only when a key arrives, so the interrupt comes once the prompt waits.
        term.pause(0.5)
        term.interrupt()  # at the prompt: the chat ends
        assert term.finish() == 0, term.sent
        lines = term.lines()
    assert not in_order(lines, "> hello", "the first reply", "> take your time", "reply cancelled",
                        "> never mind", "after the cancel"), "\n".join(lines)
    thread: Any = json.loads((py_bundle.parent / ".llm-do" / "threads" / "c.json").read_text())
    prompts = [p["content"] for m in thread["messages"] for p in m["parts"] if p["part_kind"] == "user-prompt"]
    assert prompts == ["hello", "never mind"]


def test_with_a_budget_the_status_line_shows_what_is_spent_and_left(project: tuple[Path, Path]) -> None:
    bundle, script = project
    with Terminal(bundle.parent, "exec", str(bundle), "go", "--script", str(script), "--max-cost", "2",
                  stdout_on_pty=False) as term:
        code = term.finish()
    assert code == 0, term.sent
    assert re.search(r"\d+ requests? · \d+ tokens \(\d+ in, \d+ out\) · \$0\.00 \(\$2\.00 of the budget left\)", term.sent), term.sent
    assert "spent $0.00 of $2.00 ($2.00 left)" in term.sent  # the run summary

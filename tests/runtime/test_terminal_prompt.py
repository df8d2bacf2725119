"""The approval prompt on a real terminal: `llm-do exec` runs on a pseudo-terminal (its controlling
terminal), and the test types the answers. What the question shows, every answer, session
approval end to end, Ctrl-C, and which runs are interactive at all."""

from __future__ import annotations

import fcntl
import json
import os
import select
import signal
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import IO, Any

import pytest

from llm_do.runtime.approvals.decisions import ApprovalRequest
from llm_do.runtime.approvals.terminal import render_question
from llm_do.toolkit.hooks import Decisive
from tests.support.cli import worker
from tests.support.events import of_kind, read_events
from tests.support.projects import build_project, copy_project

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="pseudo-terminals as controlling terminals")

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker("toolsets: [helper]", "Delegate."),
    "helper.worker": worker("toolsets:\n  - filesystem_project:\n      path: docs", "Write."),
    "docs/.keep": "",
}

CONTENT = "".join(f"line {i}\n" for i in range(1, 11))
WRITE = {"tool_calls": [{"tool": "write_file", "args": {"path": "notes/a.txt", "content": CONTENT}}]}


def two_writes() -> dict[str, Any]:
    """main asks helper once; helper makes the same write twice."""
    return {"workers": {"main": [{"tool_calls": [{"tool": "helper", "args": {"input": "write"}}]}, {"text": "done"}],
                        "helper": [WRITE, WRITE, {"text": "written"}]}}


@pytest.fixture(scope="module")
def _template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_project(tmp_path_factory.mktemp("terminal") / "proj", PROJECT)


@pytest.fixture
def bundle(_template: Path, tmp_path: Path) -> Path:
    return copy_project(_template, tmp_path / "proj")


class Terminal:
    """`llm-do exec` with a pseudo-terminal as its controlling terminal, on stdin and stdout, and on
    stderr unless `stderr` is given."""

    def __init__(self, bundle: Path, script: dict[str, Any], stderr: IO[bytes] | None = None,
                 stdin_tty: bool = True, flags: tuple[str, ...] = (), command: list[str] | None = None) -> None:
        path = bundle.parent / "script.json"
        path.write_text(json.dumps(script), encoding="utf-8")
        self.events = bundle.parent / "events.jsonl"
        self.master, slave = os.openpty()
        command = command or [sys.executable, "-m", "llm_do.cli.main", "exec", str(bundle), "go", "--script", str(path),
                              "--events", str(self.events), *flags]
        self.proc = subprocess.Popen(
            command, cwd=bundle.parent, stdin=slave if stdin_tty else subprocess.DEVNULL, stdout=slave,
            stderr=stderr if stderr is not None else slave, start_new_session=True,
            preexec_fn=lambda: fcntl.ioctl(slave, termios.TIOCSCTTY, 0),
        )
        os.close(slave)
        self.screen = ""
        self.cursor = 0

    def read_until(self, text: str, seconds: float = 60) -> str:
        """Everything shown up to and including the next `text` after the last one found (all of it
        is kept in `screen`)."""
        deadline = time.monotonic() + seconds
        while text not in self.screen[self.cursor:]:
            left = deadline - time.monotonic()
            assert left > 0, f"{text!r} never appeared; the terminal shows:\n{self.screen}"
            ready, _, _ = select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:  # the child closed the terminal
                    chunk = b""
                if not chunk:
                    assert text in self.screen, f"{text!r} never appeared; the terminal shows:\n{self.screen}"
                self.screen += chunk.decode("utf-8", "replace").replace("\r\n", "\n")
        self.cursor = self.screen.index(text, self.cursor) + len(text)
        return self.screen

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def finish(self, seconds: float = 60) -> int:
        try:
            code = self.proc.wait(timeout=seconds)
        finally:
            self.proc.kill()
        while True:  # what was shown after the last read
            ready, _, _ = select.select([self.master], [], [], 0.2)
            if not ready:
                break
            try:
                chunk = os.read(self.master, 4096)
            except OSError:
                break
            if not chunk:
                break
            self.screen += chunk.decode("utf-8", "replace").replace("\r\n", "\n")
        os.close(self.master)
        return code


QUESTION = "worker 'helper' (depth 2) wants to call write_file"


@pytest.mark.process
def test_the_question_shows_what_is_approved(bundle: Path) -> None:
    term = Terminal(bundle, two_writes())
    screen = term.read_until("view all: ")
    assert QUESTION in screen
    assert "  path: notes/a.txt (in docs/)" in screen  # as the rule sees it, the toolset's root beside it
    assert f"  content: {len(CONTENT)} bytes, 10 lines" in screen
    assert "    | line 6" in screen and "line 7" not in screen and "… 4 more lines" in screen
    term.type("v\n")  # the whole content, then the question again
    screen = term.read_until("line 10")
    term.type("n\n")
    term.read_until(QUESTION, 30)  # the second write
    term.type("n\n")
    assert term.finish() == 0


@pytest.mark.parametrize(
    ("answers", "confirmations", "asked", "written"),
    [
        (["y", "y"], ["-> approved once", "-> approved once"], 2, True),
        (["s"], ["runs without asking for the rest of this run"], 1, True),
        (["n", "n"], ["-> denied", "-> denied"], 2, False),
        (["", "n", "yes"], ["please answer y, s, n or r (or v): ", "-> denied", "-> approved once"], 2, True),
    ],
    ids=["once", "session", "deny", "enter-alone-asks-again"],
)
@pytest.mark.process
def test_each_answer_is_confirmed_and_kept(bundle: Path, answers: list[str], confirmations: list[str], asked: int,
                                          written: bool) -> None:
    term = Terminal(bundle, two_writes())
    prompt = "view all: "
    for answer, confirmation in zip(answers, confirmations, strict=True):
        term.read_until(prompt)
        term.type(answer + "\n")
        term.read_until(confirmation)
        prompt = "" if confirmation.startswith("please") else "view all: "
    assert term.finish() == 0, term.screen
    assert term.screen.count(QUESTION) == asked
    assert (bundle.parent / "docs" / "notes" / "a.txt").exists() == written
    decided = of_kind(read_events(term.events), "approval_decided")
    answered = [c for c in confirmations if not c.startswith("please")]
    approved = [not c.startswith("-> denied") for c in answered]
    if len(answered) == 1:  # approved for the session: the second call is approved without asking
        assert [(d["by"], d["approved"]) for d in decided] == [("terminal", True), ("session", True)]
    else:
        assert [(d["by"], d["approved"]) for d in decided] == [("terminal", a) for a in approved]


@pytest.mark.process
def test_end_of_input_denies_and_says_so(bundle: Path) -> None:
    term = Terminal(bundle, two_writes())
    term.read_until("view all: ")
    term.type("\x04")  # Ctrl-D on an empty line
    term.read_until("-> denied (end of input)")
    term.read_until("view all: ")  # a terminal's end of input lasts one read: the next call is asked
    term.type("\x04")
    term.read_until("-> denied (end of input)")
    assert term.finish() == 0
    assert not (bundle.parent / "docs" / "notes" / "a.txt").exists()


@pytest.mark.process
def test_ctrl_c_at_the_prompt_ends_the_run_at_once(bundle: Path) -> None:
    term = Terminal(bundle, two_writes())
    term.read_until("view all: ")
    started = time.monotonic()
    term.type("\x03")  # the terminal sends SIGINT to the run
    code = term.finish(seconds=20)
    assert time.monotonic() - started < 8
    assert code == 130
    assert not (bundle.parent / "docs" / "notes" / "a.txt").exists()
    shown = term.screen.split("view all: ", 1)[1]
    assert "run failed" not in shown and "Traceback" not in shown and "denied" not in shown, shown
    assert of_kind(read_events(term.events), "tool_returned") == []  # the asked tool never ran


@pytest.mark.process
def test_ctrl_c_signal_at_the_prompt_exits_130(bundle: Path) -> None:
    term = Terminal(bundle, two_writes())
    term.read_until("view all: ")
    term.proc.send_signal(signal.SIGINT)
    assert term.finish(seconds=20) == 130


@pytest.mark.process
def test_the_timeout_ends_a_run_waiting_at_the_question(bundle: Path) -> None:
    term = Terminal(bundle, two_writes(), flags=("--timeout", "2"))
    term.read_until("view all: ")
    assert term.finish(seconds=30) == 1
    after = term.screen.split("view all: ", 1)[1]
    assert "\nllm-do: run failed: the run took longer than 2 s and was stopped" in after, after
    assert not (bundle.parent / "docs" / "notes" / "a.txt").exists()


@pytest.mark.process
def test_revise_sends_the_typed_feedback_instead_of_running(bundle: Path) -> None:
    term = Terminal(bundle, two_writes())
    term.read_until("view all: ")
    term.type("r\n")
    term.read_until("feedback for the model (what should it do instead?): ")
    term.type("\n")  # no feedback: the question's choices again
    term.read_until("view all: ")
    term.type("r\n")
    term.read_until("instead?): ")
    term.type("put it in notes/b.txt\n")
    term.read_until("-> not run; the feedback goes to the model")
    term.read_until("view all: ")  # the script's second write is asked as usual
    term.type("n\n")
    assert term.finish() == 0, term.screen
    assert not (bundle.parent / "docs" / "notes" / "a.txt").exists()
    events = read_events(term.events)
    assert [(d["approved"], d["feedback"]) for d in of_kind(events, "approval_decided")] == [
        (False, "put it in notes/b.txt"), (False, None)]
    assert [(r["outcome"], r["result"][:21]) for r in of_kind(events, "tool_returned", tool="write_file")] == [
        ("revised", "put it in notes/b.txt"), ("denied", "the call to 'write_fi")]


REVISE_DRIVER = """
import sys
from pydantic_ai import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel
from llm_do.runtime import RuntimeConfig, run_worker


def helper(messages, info):
    returned = [p for m in messages for p in m.parts if p.part_kind == "tool-return"]
    if not returned:
        return ModelResponse(parts=[ToolCallPart("write_file", {"path": "a.txt", "content": "x"})])
    return ModelResponse(parts=[TextPart("MODEL SAW: " + returned[-1].model_response_str())])


config = RuntimeConfig(model=FunctionModel(helper), approval_mode="prompt", interactive=sys.stdin.isatty())
print(run_worker(sys.argv[1], "write", worker="helper", config=config).output)
"""


@pytest.mark.process
def test_revise_feedback_typed_at_the_terminal_reaches_the_model(bundle: Path) -> None:
    driver = bundle.parent / "driver.py"
    driver.write_text(REVISE_DRIVER, encoding="utf-8")
    term = Terminal(bundle, {}, command=[sys.executable, str(driver), str(bundle)])
    term.read_until("[r] revise with feedback")
    term.type("r\n")
    term.read_until("instead?): ")
    term.type("name it b.txt\n")
    term.read_until("MODEL SAW: ")
    screen = term.read_until("name it b.txt")
    assert term.finish() == 0, screen
    assert "revision requested: the user did not let 'write_file' run" in screen.split("MODEL SAW: ", 1)[1]
    assert not (bundle.parent / "docs" / "a.txt").exists()


@pytest.mark.process
def test_with_stderr_redirected_the_question_goes_to_the_terminal(bundle: Path, tmp_path: Path) -> None:
    with open(tmp_path / "stderr.txt", "wb") as err:
        term = Terminal(bundle, two_writes(), stderr=err)
        term.read_until("view all: ")
        term.type("s\n")
        term.read_until("-> approved")
        assert term.finish() == 0, term.screen
    assert (bundle.parent / "docs" / "notes" / "a.txt").exists()
    assert QUESTION not in (tmp_path / "stderr.txt").read_text()


@pytest.mark.process
def test_without_a_terminal_on_stdin_the_call_is_denied_and_said_on_stderr(bundle: Path) -> None:
    """stdin redirected, stderr still a terminal: nobody can answer, so nobody is asked."""
    term = Terminal(bundle, two_writes(), stdin_tty=False)
    assert term.finish() == 0
    assert QUESTION not in term.screen
    assert term.screen.count("llm-do: denied write_file (helper@2)") == 2, term.screen
    assert not (bundle.parent / "docs" / "notes" / "a.txt").exists()


def test_the_rendered_question(snapshot) -> None:
    shown = {"path": Decisive("notes/a.txt", "in docs/"), "content": CONTENT, "flags": {"x": list(range(100))}}
    request = ApprovalRequest("helper", 2, "write_file", {"path": "notes/a.txt", "content": CONTENT}, "filesystem_project",
                              shown=shown)
    assert request.leaves_out()
    assert render_question(request) == snapshot
    assert render_question(request, full=True) == snapshot


def test_control_characters_from_the_model_are_shown_escaped() -> None:
    """An escape sequence in the content must not reach the terminal: it could hide what is asked."""
    request = ApprovalRequest("main", 1, "write_file", {"path": "a\x1b[2Kb.txt", "content": "ok\n\x1b[1A\x1b[2Kerased\r\n"})
    question = render_question(request)
    assert "\x1b" not in question and "\r" not in question
    assert "a\\x1b[2Kb.txt" in question and "\\x1b[1A\\x1b[2Kerased" in question

"""Asking the person at the terminal whether a tool call may run.

The question is the description every approver gets (`question`): the worker and its
depth, the tool, each argument as the rules judge it (a path relative to the toolset's root, with
the root beside it) and, for long text such as a file's content, its size and first lines, with
`v` to see all of it. Enter alone answers nothing (the question is asked again); the answer is
confirmed on screen.

The answer is read from stdin's file descriptor when the event loop has it readable, never in a
thread: Ctrl-C cancels the waiting run at once, and no thread blocked in a read keeps the process
alive. The question goes to stderr when it is a terminal, else to the controlling terminal, so
`2>log` does not hide it.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from typing import IO, Any, Literal, NamedTuple, Protocol

from .question import printable


class AskedCall(Protocol):
    """What the question needs of a call (`approvals.ApprovalRequest`, whose `Approver` asks here)."""

    @property
    def tool(self) -> str: ...

    def describe(self, full: bool = False) -> str: ...

    def leaves_out(self) -> bool: ...


class Revision(NamedTuple):
    """The answer `r`: do not run the call; the model gets this feedback and tries again."""

    feedback: str


Answer = Literal["once", "session", "deny", "end of input"]

CHOICES = "[y] approve once  [s] approve for this run  [n] deny  [r] revise with feedback"


def render_question(request: AskedCall, full: bool = False) -> str:
    """The whole question but the choices: the description every approver gets
    (`question`), all of it with `full` (`v`)."""
    return f"llm-do: approval needed: {request.describe(full)}"


def choices(more: bool, editable: bool = False) -> str:
    return f"{CHOICES}{'  [e] edit, then approve' if editable else ''}{'  [v] view all' if more else ''}: "


def terminal_output() -> tuple[IO[str], Callable[[], None]]:
    """Where the question goes (stderr if it is a terminal, else the controlling terminal) and how
    to let go of it."""
    if sys.stderr.isatty():
        return sys.stderr, lambda: None
    try:
        tty = open("/dev/tty", "w", encoding="utf-8")  # noqa: SIM115 - closed by the returned callable
    except OSError:
        return sys.stderr, lambda: None
    return tty, tty.close


async def read_line() -> str | None:
    """One line from stdin, None at end of input. A real descriptor is read when the event loop
    finds it readable (cancellable); anything else (a test's StringIO) is read directly."""
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):
        line = sys.stdin.readline()
        return line if line else None
    loop = asyncio.get_running_loop()
    buffered = bytearray()
    while True:
        ready: asyncio.Future[None] = loop.create_future()
        try:
            loop.add_reader(fd, _settle, ready)
        except RuntimeError:  # an event loop without readers (Windows' says it does not implement them): block
            return sys.stdin.readline() or None
        try:
            await ready
        finally:
            loop.remove_reader(fd)
        chunk = os.read(fd, 4096)
        if not chunk:
            return buffered.decode("utf-8", "replace") if buffered else None
        buffered += chunk
        if b"\n" in chunk:
            return buffered.decode("utf-8", "replace")


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def ask_on_terminal(request: AskedCall) -> Answer | Revision | dict[str, Any]:
    """Ask until answered: approve once, approve for the rest of the run, deny, or revise (the
    feedback typed on the next line; an empty one asks the question again); for a call the request
    offers to edit (`edit`), also edit and approve: the edited arguments are returned."""
    out, release = terminal_output()
    edit = getattr(request, "edit", None)

    def say(text: str) -> None:
        out.write(text)
        out.flush()

    try:
        question, more = render_question(request), request.leaves_out()
        say(f"\n{question}\n{choices(more, edit is not None)}")
        while True:
            try:
                line = await read_line()
            except asyncio.CancelledError:  # the run was stopped: end the question's line
                say("\n")
                raise
            if line is None:
                say("\n  -> denied (end of input)\n")
                return "end of input"
            answer = line.strip().lower()
            if answer in ("y", "yes"):
                say("  -> approved once\n")
                return "once"
            if answer in ("s", "session"):
                say(f"  -> approved: {request.tool} with these arguments runs without asking for the rest of this run\n")
                return "session"
            if answer in ("n", "no"):
                say("  -> denied\n")
                return "deny"
            if answer in ("r", "revise"):
                say("  feedback for the model (what should it do instead?): ")
                try:
                    feedback = await read_line()
                except asyncio.CancelledError:
                    say("\n")
                    raise
                if feedback is None:
                    say("\n  -> denied (end of input)\n")
                    return "end of input"
                if feedback.strip():
                    say("  -> not run; the feedback goes to the model\n")
                    return Revision(feedback.strip())
                say(choices(more, edit is not None))
                continue
            if answer in ("v", "view") and more:
                say(render_question(request, full=True) + "\n" + choices(False, edit is not None))
                continue
            if answer in ("e", "edit") and edit is not None:
                try:
                    edited: dict[str, Any] | None = edit()
                except ValueError as exc:
                    say(f"  the edit cannot be used: {printable(str(exc))}\n{choices(more, True)}")
                    continue
                if edited is None:
                    say(f"  unchanged\n{choices(more, True)}")
                    continue
                say("  -> approved as edited\n")
                return edited
            say(f"  please answer y, s, n or r{' (or v)' if more else ''}{' (or e)' if edit is not None else ''}: ")
    finally:
        release()

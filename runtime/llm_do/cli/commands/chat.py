"""`llm-do chat [BUNDLE] [--thread ID] [run options]`: a conversation with the entry worker.

On a terminal: a prompt with line editing and history (readline), the reply streamed as it
arrives (in the live display when stderr is a terminal too), Ctrl-C cancels the reply being made
(at the prompt it exits), `/exit`, `/usage`, `/reset`. Off a terminal: one message per line from
stdin, each reply on stdout, exit 0 at the end of input, so a conversation can be scripted; a turn
that fails ends the chat as a failed run (exit 1).

One Runtime and one run setup serve the whole conversation (runtime/conversation.py): approvals for
the session last, and a script's turns are consumed in order across the chat's turns.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from ..errors import CliError, ExitCode
from ..lock_options import LockOptions, load_lock, lock_options
from ..options import RunOptions, record_option, run_options_per
from ..params import BUNDLE, DEFAULT_BUNDLE
from ..session import print_output, run_failure, run_session, terminal_progress

if TYPE_CHECKING:
    from llm_do.runtime.bundle import LoadedBundle
    from llm_do.runtime.conversation import Conversation

    from ..display.progress import Progress
    from ..display.reply import ReplyPrinter
    from ..recording import Recording

COMMANDS_HELP = "/exit ends the chat, /usage shows what it used, /reset forgets the conversation"
PROMPT = "> "


@click.command(name="chat")
@click.argument("bundle", default=DEFAULT_BUNDLE, type=BUNDLE)
@click.option("--thread", help="Keep the conversation in .llm-do/threads/ID.json beside the bundle and continue it "
                               "there (ID: letters, digits, '-', '_').")
@click.option("--worker", "worker", metavar="NAME", help="Talk with this worker of the bundle instead of the entry worker.")
@run_options_per("turn")
@record_option
@lock_options
def chat(bundle: Path, thread: str | None, worker: str | None, opts: RunOptions, record: Path | None, lock: LockOptions) -> int:
    """Talk with BUNDLE's entry worker, or --worker NAME (default ./bundle.lock; a directory stands for
    its bundle.lock).

    Exit codes: 0 the conversation ended (/exit, end of input, Ctrl-C at the prompt), 1 a turn
    failed (off a terminal), 2 usage error, 3 bundle refused, 130 interrupted (off a terminal).
    """
    return _chat(load_lock(bundle, lock), thread, worker, opts, record)


def _chat(bundle: LoadedBundle, thread: str | None, worker: str | None, opts: RunOptions, record: Path | None) -> int:
    on_terminal = sys.stdin.isatty()
    progress = terminal_progress(opts) if on_terminal else None
    printer = None
    if on_terminal and progress is None and not opts.events_to_stdout:
        from ..display.reply import ReplyPrinter

        printer = ReplyPrinter()
    sinks = [printer] if printer is not None else []
    with run_session(bundle, opts, progress=progress, sinks=sinks, stream=bool(sinks), children="leave") as session:
        recording = None
        if record is not None:
            from ..recording import Recording

            recording = Recording(bundle, record, worker, script=opts.script)
            session.setup.config = recording.config(session.config)
        runtime = session.runtime()
        conversation = runtime.chat(thread=thread, worker=worker)
        spec = bundle.worker(conversation.worker)
        assert spec is not None  # the runtime chose a worker of the bundle
        fields = runtime.input_class(spec).model_fields
        if "input" not in fields:
            raise CliError(f"the worker '{conversation.worker}' takes {', '.join(fields)}, not a message; "
                           "chat needs a worker whose input is a prompt", ExitCode.USAGE)
        if conversation.note:
            click.echo(f"llm-do: {conversation.note}", err=True)
        if printer is not None:
            printer.worker = conversation.worker
        show = not opts.events_to_stdout
        talk = conversation if recording is None else cast("Conversation", RecordedConversation(conversation, recording))
        try:
            with asyncio.Runner() as runner:
                if on_terminal:
                    terminal_loop(runner, talk, progress, printer, show, opts.verbose)
                else:
                    piped_loop(runner, talk, show)
        finally:
            if recording is not None:
                recording.save()
    return ExitCode.OK


class RecordedConversation:
    """A conversation whose turns (messages, replies, a failure) go into a cassette."""

    def __init__(self, conversation: Conversation, recording: Recording) -> None:
        self._conversation = conversation
        self._recording = recording

    async def send_async(self, message: str) -> object:
        self._recording.turn({"input": message})
        try:
            output = await self._conversation.send_async(message)
        except Exception as exc:
            self._recording.failed(exc)
            raise
        self._recording.answered(output)
        return output

    def __getattr__(self, name: str) -> object:
        return getattr(self._conversation, name)


def piped_loop(runner: asyncio.Runner, conversation: Conversation, show: bool) -> None:
    """One message a line from stdin, one reply on stdout; the first failure ends the chat (a failed run)."""
    for line in sys.stdin:
        message = line.rstrip("\r\n")
        aside = not_a_turn(message, conversation)
        if aside == "exit":
            return
        if aside:
            continue
        output = runner.run(conversation.send_async(message))
        if show:
            print_output(output)
            sys.stdout.flush()


def terminal_loop(runner: asyncio.Runner, conversation: Conversation, progress: Progress | None,
                  printer: ReplyPrinter | None, show: bool, verbose: int) -> None:
    """The prompt: a failed turn is reported and the conversation goes on."""
    try:
        import readline  # noqa: F401 - input() gets line editing and history
    except ImportError:  # not on every platform; the prompt still works
        pass
    click.echo(f"llm-do: chatting with '{conversation.worker}'; {COMMANDS_HELP}", err=True)
    while True:
        try:
            message = input(PROMPT)
        except EOFError:
            click.echo("", err=True)
            return
        except KeyboardInterrupt:
            click.echo("", err=True)
            return
        aside = not_a_turn(message, conversation)
        if aside == "exit":
            return
        if aside:
            continue
        if progress is not None:
            progress.start()
        try:
            output = runner.run(conversation.send_async(message))
        except KeyboardInterrupt:
            stop(progress, printer)
            click.echo("llm-do: reply cancelled (Ctrl-C again at the prompt exits)", err=True)
            continue
        except Exception as exc:
            stop(progress, printer)
            run_failure(exc, verbose).show()
            continue
        streamed = stop(progress, printer)
        if show and not streamed:
            print_output(output)


def stop(progress: Progress | None, printer: ReplyPrinter | None) -> bool:
    """End a turn's display; whether the reply is on the screen already (streamed by the printer)."""
    if progress is not None:
        progress.stop()
    return printer.finish() if printer is not None else False


def not_a_turn(message: str, conversation: Conversation) -> str | None:
    """Blank lines and `/` commands are not turns: "skip" (done with) or "exit"; None for a message
    to send."""
    if not message.strip():
        return "skip"
    if message.startswith("/"):
        return "exit" if command(message, conversation) == "exit" else "skip"
    return None


def usage_line(turns: int, usage: dict[str, int]) -> str:
    """`/usage`: `2 turns · 3 requests · 1 tool call · 120 input tokens · 40 output tokens`."""
    counts = [(turns, "turn"), (usage["requests"], "request"), (usage["tool_calls"], "tool call"),
              (usage["input_tokens"], "input token"), (usage["output_tokens"], "output token")]
    return " · ".join(f"{n} {word}{'s' if n != 1 else ''}" for n, word in counts)


def command(text: str, conversation: Conversation) -> str | None:
    """A `/` command; returns "exit" to end the chat."""
    name = text.strip().split()[0].lower()
    if name in ("/exit", "/quit"):
        return "exit"
    if name == "/usage":  # on stderr: stdout holds the replies only
        click.echo(usage_line(conversation.turns, conversation.usage), err=True)
    elif name == "/reset":
        conversation.reset()
        click.echo("llm-do: conversation forgotten; the next message starts anew", err=True)
    else:
        click.echo(f"llm-do: unknown command {name}; {COMMANDS_HELP}", err=True)
    return None

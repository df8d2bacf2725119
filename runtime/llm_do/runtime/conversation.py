"""A conversation with one worker: many turns on one `Runtime`, the worker's history carried from
each turn into the next.

One Runtime serves the whole conversation, so what the person approved "for this run" stays
approved for every later turn, and a scripted model's turns are consumed in order across turns.
The conversing worker's messages are passed to its next call (`message_history`); the workers it
calls still start fresh on every call.

Usage limits and the timeout apply per turn: each turn is a run of its own against the runtime's
limits (a long conversation is not cut off by `request_limit`), while `usage` adds up the whole
conversation (since it was made or reset) for `/usage`.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Protocol

from .conversation_store import Thread, ThreadProblem, changed_bundle_note, read_thread, thread_path, write_thread

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.usage import RunUsage

    from .bundle import LoadedBundle
    from .run_result import RunResult
    from .taint import FrameTaint


class TurnRunner(Protocol):
    """What a conversation needs of the run (implemented by `Runtime`)."""

    bundle: LoadedBundle
    usage: RunUsage
    thread_taint: FrameTaint | None

    async def run_async(self, *args: object, worker: str | None = None, message_history: list[ModelMessage] | None = None,
                        confine_attachments: bool = False, **kwargs: object) -> RunResult: ...


class Conversation:
    """Turns with one worker (default: the entry); made by `Runtime.chat(thread=...)`.

    With a `thread` id the messages are read from, and after every turn written to, the bundle
    directory's `.llm-do/threads/ID.json`; `note` then says whether the thread was made with
    another bundle."""

    def __init__(self, runtime: TurnRunner, thread: str | None = None, worker: str | None = None) -> None:
        from pydantic_ai.usage import RunUsage

        from .errors import InputProblem

        self.runtime = runtime
        named = worker or runtime.bundle.entry.get("worker")
        if named is None:
            raise InputProblem("the entry is a Python function, which takes no conversation: chat with one of its "
                               "workers (`llm-do chat --worker NAME`, `runtime.chat(worker=NAME)`)")
        self.worker: str = named
        if runtime.bundle.worker(self.worker) is None:
            raise InputProblem(f"the bundle has no worker '{self.worker}'")
        self.messages: list[ModelMessage] = []
        """The conversation so far, as pydantic-ai messages."""
        self._usage = RunUsage()
        self.turns = 0
        """Turns sent through this object since it was made or reset (not those read from the thread)."""
        self.thread = thread
        self.note: str | None = None
        """Set when the thread was made with another bundle: the person should know."""
        self._path = thread_path(runtime.bundle.path, thread) if thread is not None else None
        self.taint: FrameTaint = frozenset()
        """What the thread's turns took in (`taint`): its history holds it, so every turn starts with it."""
        if self._path is not None:
            stored = read_thread(self._path, thread)  # type: ignore[arg-type]
            if stored is not None:
                if stored.worker != self.worker:
                    raise ThreadProblem(f"thread '{thread}' is a conversation with worker '{stored.worker}', "
                                        f"not '{self.worker}'")
                self.messages = stored.messages
                self.note = changed_bundle_note(stored, self.digest)
                if stored.taint:
                    from .taint import from_json

                    try:
                        self.taint = from_json(stored.taint)
                    except ValueError as exc:
                        raise ThreadProblem(f"{self._path}: not a usable thread ({exc}); delete it or use another "
                                            "--thread") from None

    @property
    def usage(self) -> dict[str, int]:
        """Usage of every turn since the conversation was made or reset (each turn's limits are
        checked on its own), as `RunResult.usage` gives it: requests, tool_calls, input_tokens,
        output_tokens."""
        from .calls import usage_dict

        return usage_dict(self._usage)

    @property
    def digest(self) -> str | None:
        digest: str | None = self.runtime.bundle.text.get("digest")
        return digest

    async def send_async(self, *args: object, confine_attachments: bool = False, **kwargs: object) -> object:
        """One turn: the message (a string, or the worker's input fields) with the history so far;
        returns the worker's output. A turn that fails or is cancelled leaves the history as it was,
        but not the taint: what it took in stays (taint only grows), and is saved to the thread.
        `confine_attachments`: as `Runtime.run_async`'s."""
        from pydantic_ai.usage import RunUsage

        turn_usage = RunUsage()
        self.runtime.usage = turn_usage  # the turn's limits count this turn only
        self.runtime.thread_taint = before = self.taint
        done = False
        try:
            result = await self.runtime.run_async(*args, worker=self.worker, message_history=self.messages or None,
                                                  confine_attachments=confine_attachments, **kwargs)
            done = True
        finally:
            self._usage.incr(turn_usage)
            self.taint, self.runtime.thread_taint = self.runtime.thread_taint or self.taint, None
            if not done and self.taint != before:
                with contextlib.suppress(ThreadProblem):  # the turn's own failure is the one to report
                    self._save()
        self.messages = list(result.messages)
        self.turns += 1
        self._save()
        return result.output

    def send(self, *args: object, confine_attachments: bool = False, **kwargs: object) -> object:
        """`send_async` for code that is not async."""
        return asyncio.run(self.send_async(*args, confine_attachments=confine_attachments, **kwargs))

    def reset(self) -> None:
        """Forget the history (and empty the thread), the turns and their usage: the next turn
        starts the conversation anew."""
        from pydantic_ai.usage import RunUsage

        self.messages = []
        self.turns = 0
        self._usage = RunUsage()
        self.taint = frozenset()  # the history that held it is gone
        self._save()

    def _save(self) -> None:
        if self._path is not None:
            taint = None
            if self.taint:
                from .taint import as_json

                taint = as_json(self.taint)
            write_thread(self._path, Thread(self.thread, self.digest, self.worker, self.messages, taint))  # type: ignore[arg-type]

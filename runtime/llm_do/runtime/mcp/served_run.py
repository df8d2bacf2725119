"""One served call's run, which may outlive the request that started it.

A client of the MCP protocol's handshake era can be asked a question (elicitation) while its
request is open. A client of the 2026-07-28 era cannot: the server answers the request with an
`InputRequiredResult` holding the question and an opaque `request_state`, and the client calls
the tool again with the answer and that state (SEP-2322, multi-round trips). So the run lives in a
task of its own: each request (each "leg") follows it until it finishes or asks a question.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

import anyio
import mcp_types as types

STOP_WAIT = 5.0
"""Seconds a cancelled leg waits for its run to stop (kill what it started) before returning."""


class ServedRun:
    """The task running one call, the request (leg) now following it, and its open questions."""

    def __init__(self, worker: str, start: Callable[[ServedRun], Coroutine[Any, Any, types.CallToolResult]]) -> None:
        self.worker = worker
        self.ctx: Any = None
        """The request context of the leg following the run: progress and direct questions go there."""
        self._questions: asyncio.Queue[tuple[str, types.ElicitRequest]] = asyncio.Queue()
        self._answers: dict[str, asyncio.Future[types.ElicitResult]] = {}
        self._asked = 0
        self.task: asyncio.Task[types.CallToolResult] = asyncio.ensure_future(start(self))

    async def ask(self, request: types.ElicitRequest) -> types.ElicitResult:
        """A question for a client that answers in its next request: the leg following the run
        returns it, and the run waits here for the answer."""
        self._asked += 1
        key = f"approval-{self._asked}"
        answer: asyncio.Future[types.ElicitResult] = asyncio.get_running_loop().create_future()
        self._answers[key] = answer
        self._questions.put_nowait((key, request))
        return await answer

    def answer(self, responses: Mapping[str, types.InputResponse]) -> None:
        """The answers a client's new leg brought; a question left unanswered is cancelled."""
        for key, waiting in list(self._answers.items()):
            response = responses.get(key)
            del self._answers[key]
            if waiting.done():
                continue
            if isinstance(response, types.ElicitResult):
                waiting.set_result(response)
            else:
                waiting.set_result(types.ElicitResult(action="cancel"))

    async def next(self) -> tuple[str, types.ElicitRequest] | types.CallToolResult:
        """Follow the run until it finishes (its result) or asks a question (the question)."""
        question = asyncio.ensure_future(self._questions.get())
        try:
            await asyncio.wait({self.task, question}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not question.done():
                question.cancel()
        if question.done() and not question.cancelled():
            return question.result()
        return self.task.result()

    async def stop(self) -> None:
        """Cancel the run and give it a moment to stop what it started; called from a cancelled
        request, so the wait is shielded (and bounded)."""
        self.task.cancel()
        with anyio.move_on_after(STOP_WAIT, shield=True):
            await asyncio.wait({self.task})

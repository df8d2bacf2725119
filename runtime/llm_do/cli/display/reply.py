"""`llm-do chat` on a terminal without the live display: the reply printed as it streams."""

from __future__ import annotations

import sys

from llm_do.runtime.events import OutputDelta, RuntimeEvent, ToolCalled  # a listener: loaded by the runtime already


class ReplyPrinter:
    """Streams the conversing worker's text to stdout as it arrives (a terminal without the live
    display); the other workers' text is theirs."""

    def __init__(self) -> None:
        self.worker: str | None = None
        self._open = False

    def __call__(self, event: RuntimeEvent) -> None:
        if isinstance(event, OutputDelta) and event.depth == 1 and event.worker == self.worker:
            sys.stdout.write(event.text)
            sys.stdout.flush()
            self._open = True
        elif isinstance(event, ToolCalled) and event.depth == 1 and self._open:
            sys.stdout.write("\n")  # text before a tool call is the model thinking aloud, not the reply
            self._open = False

    def finish(self) -> bool:
        """End the reply's line; whether any text was streamed this turn."""
        streamed = self._open
        if self._open:
            sys.stdout.write("\n")
            sys.stdout.flush()
            self._open = False
        return streamed

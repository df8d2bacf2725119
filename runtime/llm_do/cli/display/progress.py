"""Live progress on a terminal (rich, on stderr): the call tree as it unfolds (worker, depth, the
tool it is calling), usage so far, elapsed time, and the entry worker's text as it streams.

Used by `exec`, `run` and `chat` only when stderr is a terminal, and imported only then: off a
terminal a run prints its output and one-line errors, nothing else. The display is an event sink;
it steps aside (stops drawing) while the terminal asks for an approval, and is erased when the
run ends, so what stays on screen is the question, the answers and the output.

Each stretch of drawing (a run, a chat turn, the rest of a run after an answered question) gets a
new `rich.live.Live`: one stopped and started again would begin by moving the cursor up over the
height of its last frame, erasing the lines printed since (the answers, the reply, the next
message), which were never its own.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.text import Text
from rich.tree import Tree

from llm_do.runtime.events import (  # a listener: the runtime has loaded them already
    ApprovalDecided,
    ApprovalRequested,
    OutputDelta,
    RequestPriced,
    RuntimeEvent,
    ToolCalled,
    ToolReturned,
    WorkerFinished,
    WorkerStarted,
)

if TYPE_CHECKING:
    from llm_do.runtime.runtime import Runtime

TEXT_LINES = 12
"""Lines of the streamed text shown under the tree (the tail, as it grows)."""
REFRESH_GAP = 0.05
"""Seconds between redraws asked for by streamed text (events that change the tree redraw at once)."""


class Call:
    """One worker call on screen."""

    __slots__ = ("worker", "depth", "model", "tool", "tools", "done", "children")

    def __init__(self, worker: str, depth: int, model: str) -> None:
        self.worker, self.depth, self.model = worker, depth, model
        self.tool: str | None = None
        self.tools = 0
        self.done = False
        self.children: list[Call] = []


class Progress:
    """The live display: give it every event of the run (it is an `on_event` sink)."""

    def __init__(self, console: Console | None = None) -> None:
        self.roots: list[Call] = []
        self._open: dict[int, Call] = {}
        self.text = ""
        self.usage: Runtime | None = None
        """Where usage so far is read (its `usage`, a pydantic-ai RunUsage); set by `watch`."""
        self.started = time.monotonic()
        self.spent: str | None = None
        """What the runs cost so far (`RequestPriced`), and what is left of the budget."""
        self.budget_left: str | None = None
        self._drawn = 0.0
        self._asking = False
        self.console = console or Console(stderr=True)
        self.live = self._new_live()

    def _new_live(self) -> Live:
        return Live(console=self.console, transient=True, auto_refresh=True, refresh_per_second=8,
                    redirect_stdout=False, redirect_stderr=False, get_renderable=self.render)

    def watch(self, runtime: Runtime) -> None:
        self.usage = runtime

    def start(self) -> None:
        import pydantic_ai

        pydantic_ai.BANNER_ENABLED = False  # the display owns stderr: no first-run banner drawn into it
        self.started = time.monotonic()
        self.roots, self._open, self.text = [], {}, ""
        self.live.stop()
        self.live = self._new_live()
        self.live.start(refresh=True)

    def stop(self) -> None:
        self.live.stop()

    def __call__(self, event: RuntimeEvent) -> None:
        if isinstance(event, WorkerStarted):
            started = Call(event.worker, event.depth, event.model)
            parent = self._open.get(event.depth - 1)
            (parent.children if parent is not None else self.roots).append(started)
            self._open[event.depth] = started
            if event.depth == 1:
                self.text = ""
        elif isinstance(event, ToolCalled):
            call = self._open.get(event.depth)
            if call is not None:
                call.tool = event.tool
            if event.depth == 1:
                self.text = ""
        elif isinstance(event, ToolReturned):
            call = self._open.get(event.depth)
            if call is not None:
                call.tool, call.tools = None, call.tools + 1
        elif isinstance(event, WorkerFinished):
            call = self._open.pop(event.depth, None)
            if call is not None:
                call.done, call.tool = True, None
        elif isinstance(event, OutputDelta):
            if event.depth == 1:
                self.text += event.text
            self._redraw(throttled=True)
            return
        elif isinstance(event, RequestPriced):
            self.spent, self.budget_left = event.run_cost, event.budget_left
        elif isinstance(event, ApprovalRequested):
            self._asking = True
            self.live.stop()  # the terminal question must not be drawn over
            return
        elif isinstance(event, ApprovalDecided):
            if self._asking:
                self._asking = False
                self.live = self._new_live()
                self.live.start()
        self._redraw()

    def _redraw(self, throttled: bool = False) -> None:
        now = time.monotonic()
        if self._asking or (throttled and now - self._drawn < REFRESH_GAP):
            return
        self._drawn = now
        self.live.refresh()

    def render(self) -> RenderableType:
        parts: list[RenderableType] = [Text(self.status(), style="bold")]
        for root in self.roots:
            tree = Tree(self.label(root))
            self._grow(tree, root)
            parts.append(tree)
        if self.text:
            tail = "\n".join(self.text.splitlines()[-TEXT_LINES:])
            parts.append(Text(tail))
        return Group(*parts)

    def status(self) -> str:
        elapsed = time.monotonic() - self.started
        line = f"llm-do: {elapsed:.1f}s"
        usage = getattr(self.usage, "usage", None)
        if usage is not None:
            line += (f" · {usage.requests} request{'s' if usage.requests != 1 else ''}"
                     f" · {usage.input_tokens + usage.output_tokens} tokens"
                     f" ({usage.input_tokens} in, {usage.output_tokens} out)")
        if self.spent is not None or self.budget_left is not None:
            from decimal import Decimal

            from llm_do.pricing.money import usd, usd_left

            line += f" · {usd(Decimal(self.spent)) if self.spent is not None else 'cost unknown'}"
            if self.budget_left is not None:
                line += f" ({usd_left(Decimal(self.budget_left))} of the budget left)"
        return line

    def label(self, call: Call) -> Text:
        mark = "✓" if call.done else "…"
        label = Text(f"{mark} {call.worker}", style="green" if call.done else "cyan")
        label.append(f" (depth {call.depth}, {call.model})", style="dim")
        if call.tool:
            label.append(f" → {call.tool}", style="yellow")
        elif call.tools:
            label.append(f" · {call.tools} tool call{'s' if call.tools != 1 else ''}", style="dim")
        return label

    def _grow(self, tree: Tree, call: Call) -> None:
        for child in call.children:
            self._grow(tree.add(self.label(child)), child)

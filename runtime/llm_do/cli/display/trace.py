"""`-v` and `-vv`: a run as a readable trace on stderr.

`-v` shows the call tree as it happens: each worker and tool call indented by depth, arguments
and results as JSON elided with an ellipsis to fit a line. `-vv` adds each worker call's model
messages when the call finishes (pydantic-ai hands them over only then).

Each event's line is `llm_do.runtime.event_text.describe`'s (which also says how values are
elided); this module adds the `-vv` message lines and the sink that writes them, its only I/O.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from llm_do.runtime.event_text import call_text, describe, elide, indent
from llm_do.runtime.run_label import RUN_LABEL

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

    from llm_do.runtime.events import RuntimeEvent

MESSAGE_WIDTH = 400
"""Characters for one message part at `-vv`."""


def message_lines(worker: str, depth: int, messages: list[ModelMessage], width: int = MESSAGE_WIDTH) -> list[str]:
    """`-vv`: a finished worker call's messages, one line per part, under the worker's line."""
    at = indent(depth) + "  │ "
    lines = [f"{indent(depth)}  ┌ {worker}: {len(messages)} messages"]
    shown_instructions = None
    for message in messages:
        instructions = getattr(message, "instructions", None) if getattr(message, "kind", None) == "request" else None
        if instructions and instructions != shown_instructions:  # sent with every request: shown when they change
            lines.append(f"{at}instructions: {elide(instructions, width)}")
            shown_instructions = instructions
        for part in getattr(message, "parts", ()):
            lines.append(at + part_text(part, width))
    return lines


def part_text(part: Any, width: int = MESSAGE_WIDTH) -> str:
    """One message part as `who: what` (any of pydantic-ai's parts, known by their `part_kind`)."""
    kind = getattr(part, "part_kind", type(part).__name__)
    if kind == "tool-call":
        return f"model calls {call_text(part.tool_name, part.args_as_dict(), width)}"
    if kind == "tool-return":
        outcome = getattr(part, "outcome", "success")
        return f"{part.tool_name} returned ({outcome}): {elide(_plain(part.content), width)}"
    if kind == "text":
        return f"model: {elide(part.content, width)}"
    if kind == "user-prompt":
        return f"user: {elide(_plain(part.content), width)}"
    if kind == "system-prompt":
        return f"system: {elide(part.content, width)}"
    if kind == "thinking":
        return f"model thinks: {elide(part.content, width)}"
    content = getattr(part, "content", None)
    return f"{kind}: {elide(_plain(content), width)}"


def _plain(content: object) -> object:
    """Message content as JSON-able data: pydantic models dumped, attachments named."""
    if isinstance(content, (list, tuple)):
        return [_plain(c) for c in content]
    dump = getattr(content, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(content, (str, int, float, bool, dict)) or content is None:
        return content
    return f"<{type(content).__name__}>"


class Trace:
    """The `-v` sink: writes each event's lines; with `-vv` also each call's messages."""

    def __init__(self, write: Callable[[str], None], verbosity: int) -> None:
        self.write = write
        self.verbosity = verbosity

    def event(self, event: RuntimeEvent) -> None:
        label = RUN_LABEL.get()  # `#LINE ` in a batch: the traces of concurrent inputs interleave
        line = describe(event.to_dict()).trace
        if line is not None:
            self.write(label + line)

    def messages(self, worker: str, depth: int, messages: list[ModelMessage]) -> None:
        label = RUN_LABEL.get()
        for line in message_lines(worker, depth, messages):
            self.write(label + line)

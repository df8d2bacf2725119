"""`-v` and `-vv`: a run as a readable trace on stderr.

`-v` shows the call tree as it happens: each worker and tool call indented by depth, arguments
and results as JSON elided with an ellipsis to fit a line. `-vv` adds each worker call's model
messages when the call finishes (pydantic-ai hands them over only then).

Elision never breaks a value: a string is shortened inside its quotes (`"the long te…"`), a
list or an object keeps its brackets and ends in `…`, so what is shown still reads as JSON.
Everything here is formatting of plain data (event dicts, message parts); the sink that writes the
lines is the only I/O.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

    from llm_do.runtime.events import RuntimeEvent

ELLIPSIS = "…"
WIDTH = 72
"""Characters for one value at `-v`."""
MESSAGE_WIDTH = 400
"""Characters for one message part at `-vv`."""
LABEL: ContextVar[str] = ContextVar("llm_do_trace_label", default="")
"""Put before each line of the run under way: `llm-do batch` sets `#LINE ` per input, since the
traces of concurrent inputs interleave."""


def elide(value: object, width: int = WIDTH) -> str:
    """`value` as compact JSON in at most about `width` characters, shortened with an ellipsis
    where it does not fit: strings inside their quotes, containers before their closing bracket."""
    text = _json(value)
    if len(text) <= width:
        return text
    if isinstance(value, str):
        return _cut_string(value, width)
    if isinstance(value, dict):
        return _cut_items([(f"{_json(str(k))}: ", v) for k, v in value.items()], width, "{", "}")
    if isinstance(value, (list, tuple)):
        return _cut_items([("", v) for v in value], width, "[", "]")
    return text  # a number, a bool: short enough, and never cut


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _cut_string(value: str, width: int) -> str:
    """A quoted prefix of `value` with the ellipsis inside the quotes; at a space near the end
    when there is one, so words stay whole."""
    room = width - 3  # the quotes and the ellipsis
    keep = used = 0
    for char in value:  # whole characters, each as wide as its JSON escape (\n, \", \u001b)
        used += len(_json(char)) - 2
        if used > room:
            break
        keep += 1
    space = value.rfind(" ", max(keep - 12, 1), keep)
    if space > 0:
        keep = space
    return _json(value[:keep].rstrip())[:-1] + ELLIPSIS + '"'


def _cut_items(items: list[tuple[str, Any]], width: int, open_: str, close: str) -> str:
    parts: list[str] = []
    used = len(open_) + len(close)
    for n, (prefix, item) in enumerate(items):
        more = n + 1 < len(items)
        room = width - used - len(prefix) - (2 if parts else 0) - (3 if more else 0)
        if room < 6:
            parts.append(ELLIPSIS)
            break
        shown = elide(item, room)
        parts.append(prefix + shown)
        used += len(prefix) + len(shown) + (2 if len(parts) > 1 else 0)
        if shown != _json(item) and more:  # this item already took the room: say the rest is left out
            parts.append(ELLIPSIS)
            break
    return open_ + ", ".join(parts) + close


def call_text(tool: str, args: object, width: int = WIDTH) -> str:
    """`tool(key=value, ...)`, the values elided."""
    if not isinstance(args, dict):
        return f"{tool}({elide(args, width)})"
    return f"{tool}(" + ", ".join(f"{k}={elide(v, width)}" for k, v in args.items()) + ")"


def _indent(depth: object) -> str:
    return "  " * (depth - 1) if isinstance(depth, int) and depth > 0 else ""


def usage_text(usage: dict[str, Any]) -> str:
    return (f"{usage.get('requests', 0)} requests, {usage.get('tool_calls', 0)} tool calls, "
            f"{usage.get('input_tokens', 0)} input + {usage.get('output_tokens', 0)} output tokens")


def event_lines(d: dict[str, Any]) -> list[str]:
    """One event (as `RuntimeEvent.to_dict()` gives it) as trace lines; an event kind this module
    does not know is shown generically, so new events never break `-v`."""
    kind = d.get("event")
    at = _indent(d.get("depth"))
    if kind == "worker_started":
        return [f"{at}▸ {d['worker']} ({d['model']})"]
    if kind == "tool_called":
        gate = "" if d.get("approval") == "allow" else f"  [{d.get('approval')}]"
        return [f"{at}  → {call_text(d['tool'], d.get('args'))}{gate}"]
    if kind == "approval_requested":
        return [f"{at}  ? {d['tool']} waits for approval"]
    if kind == "approval_decided":
        if d.get("feedback"):
            return [f"{at}  revision asked by {d.get('by')}: {elide(d['feedback'])}"]
        verdict = "approved" if d.get("approved") else "denied"
        note = f": {d['note']}" if d.get("note") else ""
        return [f"{at}  {verdict} by {d.get('by')}{note}"]
    if kind == "output_delta":
        return []  # the streamed text: the output and worker_finished show it whole
    if kind == "tool_returned":
        return [f"{at}  ← {d['tool']} {d.get('outcome')}: {elide(d.get('result'))}"]
    if kind == "worker_finished":
        return [f"{at}◂ {d['worker']}: {elide(d.get('output'))}"]
    if kind == "run_finished":
        return [f"done: {usage_text(d.get('usage') or {})}"]
    if kind == "run_failed":
        return [f"failed: {d.get('error')} ({usage_text(d.get('usage') or {})})"]
    rest = {k: v for k, v in d.items() if k not in ("event", "worker", "depth")}
    who = f"{d['worker']} " if "worker" in d else ""
    return [f"{at}  {who}{kind}" + "".join(f" {k}={elide(v)}" for k, v in rest.items())]


def message_lines(worker: str, depth: int, messages: list[ModelMessage], width: int = MESSAGE_WIDTH) -> list[str]:
    """`-vv`: a finished worker call's messages, one line per part, under the worker's line."""
    at = _indent(depth) + "  │ "
    lines = [f"{_indent(depth)}  ┌ {worker}: {len(messages)} messages"]
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
        label = LABEL.get()
        for line in event_lines(event.to_dict()):
            self.write(label + line)

    def messages(self, worker: str, depth: int, messages: list[ModelMessage]) -> None:
        label = LABEL.get()
        for line in message_lines(worker, depth, messages):
            self.write(label + line)

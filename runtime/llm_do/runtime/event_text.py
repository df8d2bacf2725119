"""Runtime events in words: the one mapping from an event to the text people read, used by the
`-v` trace (llm_do.cli.display.trace) and by the progress notifications of `llm-do serve`
(mcp_server). `describe` knows every event kind; each reader takes the form it shows.

Values in the trace are JSON elided with an ellipsis to fit a line, and elision never breaks a
value: a string is shortened inside its quotes (`"the long te…"`), a list or an object keeps its
brackets and ends in `…`, so what is shown still reads as JSON. Standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

ELLIPSIS = "…"
WIDTH = 72
"""Characters for one value in a trace line."""


@dataclass(frozen=True)
class Described:
    """One event in words, in the forms its readers show."""

    trace: str | None
    """The `-v` line, indented by the event's depth; None for what the trace leaves out (streamed text)."""
    progress: str | None
    """A progress notification, `worker@depth: what happened`; None for events not worth one."""


def describe(d: Mapping[str, Any]) -> Described:
    """One event, as `RuntimeEvent.to_dict()` gives it. A kind this module does not know is traced
    generically (so new events never break `-v`) and sends no progress."""
    kind = d.get("event")
    at = indent(d.get("depth"))
    who = f"{d.get('worker')}@{d.get('depth')}"
    if kind == "worker_started":
        return Described(f"{at}▸ {d['worker']} ({d['model']})", f"{who}: started on {d['model']}")
    if kind == "tool_called":
        gate = "" if d.get("approval") == "allow" else f"  [{d.get('approval')}]"
        return Described(f"{at}  → {call_text(d['tool'], d.get('args'))}{gate}", f"{who}: calling {d['tool']}")
    if kind == "flow_guarded":
        verb = "accepted by project.json" if d.get("action") == "accepted" else "asked"
        return Described(f"{at}  ! {d['tool']} {verb}: {d.get('reason')}",
                         f"{who}: {d['tool']} {verb}: this call holds private data and untrusted content")
    if kind == "approval_requested":
        return Described(f"{at}  ? {d['tool']} waits for approval", f"{who}: {d['tool']} waits for approval")
    if kind == "approval_decided":
        verdict = "approved" if d.get("approved") else "denied"
        progress = f"{who}: {d['tool']} {verdict}"
        if d.get("feedback"):
            return Described(f"{at}  revision asked by {d.get('by')}: {elide(d['feedback'])}", progress)
        note = f": {d['note']}" if d.get("note") else ""
        return Described(f"{at}  {verdict} by {d.get('by')}{note}", progress)
    if kind == "output_delta":
        return Described(None, None)  # the streamed text: the output and worker_finished show it whole
    if kind == "tool_returned":
        return Described(f"{at}  ← {d['tool']} {d.get('outcome')}: {elide(d.get('result'))}",
                         f"{who}: {d['tool']} returned ({d['outcome']})")
    if kind == "worker_finished":
        return Described(f"{at}◂ {d['worker']}: {elide(d.get('output'))}", f"{who}: finished")
    if kind == "request_priced":
        cost = f"${d['cost']}" if d.get("cost") is not None else "not priced"
        left = f", ${d['budget_left']} of the budget left" if d.get("budget_left") is not None else ""
        run = f"${d['run_cost']}" if d.get("run_cost") is not None else "unknown"
        return Described(f"{at}  cost {cost} ({d.get('model')}; the run so far {run}{left})", None)
    if kind == "run_finished":
        return Described(f"done: {usage_text(d.get('usage') or {})}", None)
    if kind == "run_failed":
        return Described(f"failed: {d.get('error')} ({usage_text(d.get('usage') or {})})", None)
    rest = {k: v for k, v in d.items() if k not in ("event", "worker", "depth")}
    named = f"{d['worker']} " if "worker" in d else ""
    return Described(f"{at}  {named}{kind}" + "".join(f" {k}={elide(v)}" for k, v in rest.items()), None)


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


def indent(depth: object) -> str:
    """Two spaces per level below the top (depth 1)."""
    return "  " * (depth - 1) if isinstance(depth, int) and depth > 0 else ""


def usage_text(usage: Mapping[str, Any]) -> str:
    return (f"{usage.get('requests', 0)} requests, {usage.get('tool_calls', 0)} tool calls, "
            f"{usage.get('input_tokens', 0)} input + {usage.get('output_tokens', 0)} output tokens")

"""Python tools of the meeting-notes assistant.

`TOOLS` exports plain functions (and one that takes pydantic-ai's `RunContext`) as tools a worker
lists under `tools:`; `TOOLSETS` exports a whole toolset a worker lists under `toolsets:`. The
compiler imports this module in a subprocess at build time to read the tools' names and parameter
schemas; the runtime imports it when a worker that uses them runs.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from pydantic_ai import FunctionToolset, RunContext

_ACTION = re.compile(
    r"^\s*[-*]?\s*ACTION\s+(?P<owner>[^:]+):\s*(?P<task>.+?)\s*(?:\(due (?P<due>\d{4}-\d{2}-\d{2})\))?\s*$"
)


def extract_action_items(notes: str) -> list[dict[str, str | None]]:
    """Find the action items in meeting notes.

    An action item is a line `ACTION Owner Name: what to do (due YYYY-MM-DD)`; the due date is
    optional. Returns one entry per item with `owner`, `task` and `due` (None when not given).
    """
    items = []
    for line in notes.splitlines():
        m = _ACTION.match(line)
        if m:
            items.append({"owner": m["owner"].strip(), "task": m["task"].strip(), "due": m["due"]})
    return items


async def summarize_discussion(ctx: RunContext, notes: str, audience: str = "the engineering team") -> str:
    """Summarize the discussion part of meeting notes for a given audience.

    Delegates to the `discussion_summarizer` worker: the call runs one level deeper, with its own
    instructions, model and history, and its own tools behind the same approval gate.
    """
    return await ctx.deps.call_worker(
        "discussion_summarizer", input=f"Audience: {audience}\n\nNotes of the discussion:\n\n{notes}"
    )


def add_business_days(start: str, days: int) -> str:
    """The date `days` working days (Monday to Friday) after `start`, both as YYYY-MM-DD."""
    day = date.fromisoformat(start)
    step = 1 if days >= 0 else -1
    remaining = abs(days)
    while remaining:
        day += timedelta(days=step)
        if day.weekday() < 5:
            remaining -= 1
    return day.isoformat()


def weekday(day: str) -> str:
    """The name of the weekday of a YYYY-MM-DD date, e.g. 'Tuesday'."""
    return date.fromisoformat(day).strftime("%A")


TOOLS = {
    "extract_action_items": extract_action_items,
    "summarize_discussion": summarize_discussion,
}

TOOLSETS = {
    "calendar": FunctionToolset([add_business_days, weekday]),
}

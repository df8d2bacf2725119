"""The one description of a call waiting for approval: every approver gets the same text (the
terminal, a host's callback through `ApprovalRequest.describe()`, the event stream's
`approval_requested`, an MCP client's elicitation, a durable run's approval record).

Each argument is shown as the approval rules judge it. What decides where the call takes effect (a
path relative to the toolset's root, with the root beside it; a command line, normalized) is shown
whole: a cut could hide that a write goes elsewhere. So is any one-line text (a Python tool's
path or command cannot be told from other text). Text of several lines (a file's content) is shown
as its size and first lines, and other values as JSON cut at 200 characters; `full` (the
terminal's `v`) shows all of it. Control characters the
model wrote are escaped, since on a terminal an escape sequence could rewrite what is asked.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Protocol

from llm_do.toolkit.hooks import Decisive

PREVIEW_LINES = 6
"""Lines of a long text argument shown before `v` is needed."""
LINE_WIDTH = 120
SHORT = 200
"""Characters of a value shown as JSON before `v` is needed."""


class DescribedCall(Protocol):
    """What the description shows of a call (`approvals.ApprovalRequest`)."""

    @property
    def worker(self) -> str: ...

    @property
    def depth(self) -> int: ...

    @property
    def tool(self) -> str: ...

    @property
    def toolset(self) -> str | None: ...

    @property
    def flow(self) -> str | None: ...


def printable(text: str) -> str:
    """`text` with control characters escaped: the model wrote it, and an escape sequence on the
    terminal could hide or rewrite what is being approved."""
    return "".join(c if c.isprintable() or c == "\t" else ascii(c)[1:-1] for c in text)


def render_argument(name: str, value: object, full: bool = False) -> tuple[list[str], bool]:
    """The lines showing one argument, and whether anything was left out (then `v` shows all)."""
    if isinstance(value, Decisive):
        where = f" ({printable(value.where)})" if value.where else ""
        return [f"  {name}: {printable(value.text)}{where}"], False
    if not isinstance(value, str):
        value = printable(json.dumps(value, ensure_ascii=False, default=str))
        if full or len(value) <= SHORT:
            return [f"  {name}: {value}"], False
        return [f"  {name}: {value[:SHORT]}…"], True
    lines = value.splitlines()
    if "\n" not in value and "\r" not in value:  # one line: a path or a command of a tool we cannot tell
        return [f"  {name}: {printable(value)}"], False
    size = len(value.encode("utf-8"))
    head = [f"  {name}: {size} bytes, {len(lines)} line{'s' if len(lines) != 1 else ''}"]
    shown = lines if full else lines[:PREVIEW_LINES]
    cut = False
    for line in shown:
        if not full and len(line) > LINE_WIDTH:
            line, cut = line[:LINE_WIDTH] + "…", True
        head.append(f"    | {printable(line)}")
    if len(shown) < len(lines):
        head.append(f"    | … {len(lines) - len(shown)} more lines")
        cut = True
    return head, cut


def toolset_label(key: str) -> str:
    """A toolset as a person knows it: `toolset filesystem_project`, and for a module's Python tools
    their file (`Python tools of tools.py`), not the bundle's key (`tools.TOOLS`)."""
    module, dot, export = key.rpartition(".")
    if dot and export in ("TOOLS", "__all__"):
        return f"Python tools of {module.replace('.', '/')}.py"
    return f"toolset {key}"


def describe_call(call: DescribedCall, shown: Mapping[str, object], full: bool = False) -> tuple[str, bool]:
    """The description (a first line naming the worker, its depth, the tool and its toolset, then
    one line or block per argument), and whether `full` would show more."""
    toolset = f" ({toolset_label(call.toolset)})" if call.toolset else ""
    lines = [f"worker '{call.worker}' (depth {call.depth}) wants to call {call.tool}{toolset}"]
    more = False
    for name, value in shown.items():
        rendered, cut = render_argument(name, value, full)
        lines += rendered
        more = more or cut
    if call.flow is not None:
        lines.append(f"  asked because {printable(call.flow)}")
    return "\n".join(lines), more

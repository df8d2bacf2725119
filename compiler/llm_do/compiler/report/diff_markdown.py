"""`llm-do diff --format markdown`: the pull-request comment (spec/diff.md#output).

New authority first, with the one thing a reviewer must do; then one entry per cause (a change at
a tool several workers reach is one entry naming them, with the approval change behind it if
any); then the rest in a collapsed block. It always fits a GitHub comment: what does not fit is
counted and left to the full report (`--format text` or `json`, which the CI recipe keeps as an
artifact).
"""

from __future__ import annotations

from ..diff.bundle import BundleDiff
from ..diff.entries import CauseEntry, counts, entries, first_names
from .diff_graph import mermaid

COMMENT_LIMIT = 65_536
"""GitHub's limit on a comment's body, in characters."""
MARGIN = 6_000
"""Kept free for what the CI recipe puts around the diff (its marker, the lock's verdict and at most
3,000 characters of lint findings); the comment's own closing lines are kept free besides."""
AUTHORITY_LINES = 20
"""Most lines the summary of new authority lists (then a count): it is read first, so it stays short."""
AUTHORITY = ("added", "widened", "changed")
"""Verbs of changes that can give new authority (high and medium ones do)."""
AUTHORITY_AREAS = ("flow", "capability", "approval", "code", "project", "mcp")
"""Areas that say what the project can do (not what a model reads or how workers are wired)."""


def _names(workers: list[str]) -> str:
    return first_names(sorted(workers))


def _escape(text: str) -> str:
    """Markdown's inline specials taken literally (`**` in a glob would start bold text)."""
    for ch in "\\`*_[]<|":
        text = text.replace(ch, "\\" + ch)
    return text


def _cell(text: str | None) -> str:
    return "" if text is None else "`" + text.replace("`", "'").replace("|", "\\|") + "`"


def _edited(entry: CauseEntry) -> str | None:
    """One edit of several workers' instructions, named once with them."""
    if entry.change.area == "instructions" and len(entry.workers) > 1:
        return _escape(f"instructions of {_names(entry.workers)} (one edit, {len(entry.workers)} workers)")
    return None


def _subject(entry: CauseEntry) -> str:
    c = entry.change
    if c.area == "capability" and len(entry.workers) > 1:  # one cause, the workers that reach it named
        return _escape(f"{', '.join(entry.capabilities)} of {_names(entry.workers)} (at {c.cause})")
    if (edited := _edited(entry)) is not None:
        return edited
    text = _escape(c.subject + (f" ({c.note})" if c.note else ""))
    if entry.folded:
        text += "<br>" + _escape(f"{', '.join(entry.capabilities)} reached by {_names(entry.workers)}")
    return text


def _row(entry: CauseEntry) -> str:
    c = entry.change
    return f"| **{entry.severity}** | {c.verb} | {_subject(entry)} | {_cell(c.before)} | {_cell(c.after)} |"


_HEADER = ["| Severity | Change | Subject | Before | After |", "|---|---|---|---|---|"]


def _authority(entry: CauseEntry) -> str:
    """One line of what the project can newly do: the effect when the change says it."""
    c = entry.change
    if c.area == "approval" and c.detail:
        effect = f"{c.worker}: " + "; ".join(c.detail[:3]) + (f"; and {len(c.detail) - 3} more" if len(c.detail) > 3 else "")
    elif c.area == "project" and c.subject == "entry":
        effect = f"the entry is now {c.after}" + (f": {c.detail[0]}" if c.detail else "")
    else:
        effect = f"{c.subject}: {c.after}" if c.after else c.subject
    reached = f" (reached by {_names(entry.workers)})" if len(entry.workers) > 1 else ""
    return f"- **{entry.severity}** {_escape(effect)}{_escape(reached)}"


def _action(high: int, medium: int) -> str:
    if high:
        return (f"**Action:** confirm that the {high} high change{'s' if high != 1 else ''} above "
                f"{'are' if high != 1 else 'is'} intended: each lets the project act with nobody asked.")
    if medium:
        return "**Action:** read the risky changes below; each is behind an approval or changes what a model reads."
    return "**Action:** none; nothing here gives the project new authority."


class _Budget:
    """Lines added only while the comment stays under GitHub's limit."""

    def __init__(self, limit: int) -> None:
        self.lines: list[str] = []
        self.left = limit
        self.dropped = 0

    def add(self, *lines: str) -> bool:
        size = sum(len(line) + 1 for line in lines)
        if size > self.left:
            return False
        self.lines += lines
        self.left -= size
        return True


def to_markdown(diff: BundleDiff, old: str, new: str, command: str, summary: str, limit: int = COMMENT_LIMIT) -> str:
    found = entries(diff.changes)
    new_authority = [e for e in found if e.severity != "low" and e.change.verb in AUTHORITY and e.change.area in AUTHORITY_AREAS]
    by_severity = counts(found)
    high, medium = by_severity["high"], by_severity["medium"]
    closing = len("\n".join(_tail(len(found), len(found), command))) + len("\n</details>\n")
    out = _Budget(limit - MARGIN - closing)  # the closing lines fit whatever is cut
    out.add("## llm-do diff", "", f"**{summary}** (`{old}` -> `{new}`)")
    if new_authority:
        out.add("", "### New authority", "")
        for entry in new_authority[:AUTHORITY_LINES]:
            out.add(_authority(entry))
        if len(new_authority) > AUTHORITY_LINES:
            out.add(f"- ... and {len(new_authority) - AUTHORITY_LINES} more (below)")
    out.add("", _action(high, medium))
    risky = [e for e in found if e.severity != "low"]
    left_out = 0
    if risky:
        out.add("", "### Risky changes", "", *_HEADER)
        left_out += _rows(out, risky)
    rest = [e for e in found if e.severity == "low"]
    detailed = [e for e in found if e.change.detail]
    details_left_out = 0
    if rest or detailed:
        label = f"{len(rest)} low-risk change{'s' if len(rest) != 1 else ''}, and the details" if rest else "Details"
        if out.add("", f"<details><summary>{label}</summary>", ""):
            if rest:
                out.add(*_HEADER)
                left_out += _rows(out, rest)
                out.add("")
            for i, e in enumerate(detailed):
                c = e.change
                block = [f"{_edited(e) or _escape(c.subject)}:", "", "```diff" if c.area == "instructions" else "```", *c.detail, "```", ""]
                if not out.add(*block):
                    details_left_out = len(detailed) - i
                    break
            out.lines += ["</details>"]
        else:
            left_out += len(rest)
            details_left_out = len(detailed)
    graph = mermaid(diff)
    if len(graph) > 1:  # changes to code and MCP servers alone touch no worker
        out.add("", "<details><summary>Call graph</summary>", "", "```mermaid", *graph, "```", "", "</details>")
    return "\n".join(out.lines + _tail(left_out, details_left_out, command))


def _tail(left_out: int, details_left_out: int, command: str) -> list[str]:
    """The closing lines: what was cut (`N more entries did not fit`), and the command to reproduce."""
    tail = [""]
    cut = [f"{left_out} more entr{'ies' if left_out != 1 else 'y'} did not fit in this comment"] * bool(left_out)
    cut += [f"the details of {details_left_out} more entr{'ies' if details_left_out != 1 else 'y'} did not fit"] * bool(details_left_out)
    if cut:
        tail.append(f"**{'; '.join(cut)}**: the full report is the `--format text` or `json` output of the command below "
                    "(the CI recipe keeps it as an artifact).")
    return tail + [f"Reproduce: `{command}`"]


def _rows(out: _Budget, entries_: list[CauseEntry]) -> int:
    """The rows that fit; the count of those that did not."""
    for i, entry in enumerate(entries_):
        if not out.add(_row(entry)):
            return len(entries_) - i
    return 0

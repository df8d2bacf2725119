"""`llm-do diff` output: text for terminals, Markdown for a pull-request comment (`diff_markdown`),
JSON for tools.

Renderers (`report.Renderer`) over one `DiffReport`: the `BundleDiff` and the inputs it compares
(spec/diff.md; the JSON Schema is runtime/llm_do/cli/schemas/diff.schema.json). Every format lists one entry per
cause (`diff.entries`), risky first; the summary counts entries.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..diff.bundle import SEVERITIES, BundleDiff
from ..diff.change import change_line
from ..diff.entries import CauseEntry, counts, entries, first_names
from . import Renderers, diff_markdown

DIFF_FORMAT = 2
"""Version of the JSON document; bumped when a field changes meaning or goes away."""


@dataclass(frozen=True)
class DiffInputs:
    old: str
    new: str
    command: str
    """The command line that reproduces the diff."""


@dataclass(frozen=True)
class DiffReport:
    """What `llm-do diff` reports: the changes, and what was compared (named in every format)."""

    diff: BundleDiff
    inputs: DiffInputs


def summary(diff: BundleDiff) -> str:
    if not diff.changes:
        text = "no changes in meaning"
    else:
        found = entries(diff.changes)
        by_severity = counts(found)
        n = len(found)
        text = f"{n} change{'s' if n != 1 else ''}: " + ", ".join(f"{by_severity[s]} {s}" for s in SEVERITIES)
    if diff.not_compared:
        text += "; not compared without import: " + "; ".join(u.subject for u in diff.not_compared)
    return text


def _subject(entry: CauseEntry) -> str:
    """A capability reached by several workers through one cause is named once, with them; so is
    one edit of several workers' instructions."""
    c = entry.change
    if c.area == "capability" and len(entry.workers) > 1:
        return f"{', '.join(entry.capabilities)} of {', '.join(entry.workers)} (at {c.cause})"
    if c.area == "instructions" and len(entry.workers) > 1:
        return f"instructions of {first_names(sorted(entry.workers))} (one edit, {len(entry.workers)} workers)"
    return c.subject


def _line(entry: CauseEntry) -> str:
    c = entry.change
    return change_line(entry.severity, c.verb, _subject(entry), c.before, c.after, c.note)


def _reached_lines(entry: CauseEntry) -> list[str]:
    """What the cause makes each worker reach, one line per capability and gate, naming the workers."""
    caps = [c for c in [entry.change, *entry.folded] if c.area == "capability"]
    if entry.change.area == "capability" and len(entry.capabilities) < 2:
        return []
    grouped: dict[tuple[str, str], list[str]] = {}
    for c in caps:
        grouped.setdefault((c.subject.rsplit(" of ", 1)[0], f"{c.verb}, gate {c.gate}"), []).append(c.worker or "")
    return [f"{cap} {how} for {', '.join(sorted(workers))}" for (cap, how), workers in grouped.items()]


def to_text(report: DiffReport) -> str:
    diff, inputs = report.diff, report.inputs
    lines = [f"llm-do diff {inputs.old} {inputs.new}: {summary(diff)}"]
    for entry in entries(diff.changes):
        lines.append(_line(entry))
        lines += [f"    {d}" for d in entry.change.detail]
        lines += [f"    {d}" for d in _reached_lines(entry)]
    return "\n".join(lines)


def _entry_json(entry: CauseEntry) -> dict[str, object]:
    return {**entry.change.to_json(), "severity": entry.severity, "workers": entry.workers,
            "folded": [c.to_json() for c in entry.folded]}


def to_json(report: DiffReport) -> str:
    diff, inputs = report.diff, report.inputs
    found = entries(diff.changes)
    doc = {
        "format": DIFF_FORMAT,
        "old": inputs.old,
        "new": inputs.new,
        "equal": not diff.changes,
        "summary": counts(found),
        "changes": [_entry_json(e) for e in found],
        "not_compared": [u.to_json() for u in diff.not_compared],
        "calls": {
            "added": [{"from": u, "to": v} for u, v in diff.edges_added],
            "removed": [{"from": u, "to": v} for u, v in diff.edges_removed],
        },
    }
    return json.dumps(doc, indent=2, ensure_ascii=False)


def to_markdown(report: DiffReport) -> str:
    inputs = report.inputs
    return diff_markdown.to_markdown(report.diff, inputs.old, inputs.new, inputs.command, summary(report.diff))


RENDERERS: Renderers[DiffReport] = {"text": to_text, "json": to_json, "markdown": to_markdown}

"""`llm-do diff` output: text for terminals, Markdown for a pull-request comment (`diff_markdown`),
JSON for tools.

Renderers (`report.Renderer`) over one `DiffReport`: the `BundleDiff` and the inputs it compares
(spec/diff.md; the JSON Schema is spec/schemas/diff.schema.json). Changes come risky first, as
`bundle_diff` sorts them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..bundle_diff import SEVERITIES, BundleDiff, Change
from . import Renderers, diff_markdown

DIFF_FORMAT = 1
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
        counts = diff.counts()
        n = len(diff.changes)
        text = f"{n} change{'s' if n != 1 else ''}: " + ", ".join(f"{counts[s]} {s}" for s in SEVERITIES)
    if diff.not_compared:
        text += "; not compared without import: " + "; ".join(u.subject for u in diff.not_compared)
    return text


def _line(c: Change) -> str:
    text = f"{c.severity:<6} {c.verb:<8} {c.subject}"
    if c.before is not None or c.after is not None:
        text += f": {c.before if c.before is not None else '(none)'} -> {c.after if c.after is not None else '(none)'}"
    if c.note:
        text += f" ({c.note})"
    return text


def to_text(report: DiffReport) -> str:
    diff, inputs = report.diff, report.inputs
    lines = [f"llm-do diff {inputs.old} {inputs.new}: {summary(diff)}"]
    for c in diff.changes:
        lines.append(_line(c))
        lines += [f"    {d}" for d in c.detail]
    return "\n".join(lines)


def to_json(report: DiffReport) -> str:
    diff, inputs = report.diff, report.inputs
    doc = {
        "format": DIFF_FORMAT,
        "old": inputs.old,
        "new": inputs.new,
        "equal": not diff.changes,
        "summary": diff.counts(),
        "changes": [c.to_json() for c in diff.changes],
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

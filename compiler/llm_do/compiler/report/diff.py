"""`llm-do diff` output: text for terminals, Markdown for a pull-request comment, JSON for tools.

Renderers (`report.Renderer`) over one `DiffReport`: the `BundleDiff` and the inputs it compares
(spec/diff.md; the JSON Schema is spec/schemas/diff.schema.json). Changes come risky first, as
`bundle_diff` sorts them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from ..bundle_diff import SEVERITIES, BundleDiff, Change
from . import Renderers

DIFF_FORMAT = 1
"""Version of the JSON document; bumped when a field changes meaning or goes away."""
GRAPH_LIMIT = 60
"""Most workers the Markdown call graph shows (those the changes touch come first)."""


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


def _cell(text: str | None) -> str:
    if text is None:
        return ""
    return "`" + text.replace("`", "'").replace("|", "\\|") + "`"


def _row(c: Change) -> str:
    note = f" ({c.note})" if c.note else ""
    subject = _escape(c.subject + note)
    return f"| **{c.severity}** | {c.verb} | {subject} | {_cell(c.before)} | {_cell(c.after)} |"


def _escape(text: str) -> str:
    """Markdown's inline specials taken literally (`**` in a glob would start bold text)."""
    for ch in "\\`*_[]<|":
        text = text.replace(ch, "\\" + ch)
    return text


_HEADER = ["| Severity | Change | Subject | Before | After |", "|---|---|---|---|---|"]


def mermaid(diff: BundleDiff) -> list[str]:
    """The call graph around the changes (the workers they touch and their callers and callees):
    added edges thick and green, removed ones dashed and red."""
    added, removed = set(diff.edges_added), set(diff.edges_removed)
    touched = {w for e in added | removed for w in e} | {c.worker for c in diff.changes if c.worker}
    edges = sorted(set(diff.old_edges) | set(diff.new_edges))
    neighbours = {v if u in touched else u for u, v in edges if (u in touched) != (v in touched)}
    nodes = (sorted(touched) + sorted(neighbours))[:GRAPH_LIMIT]
    shown = set(nodes)
    lines = ["flowchart LR"]
    ids = {n: f"n{i}" for i, n in enumerate(sorted(nodes))}
    lines += [f'  {ids[n]}["{n}"]' for n in sorted(nodes)]
    styles: list[str] = []
    index = 0
    for u, v in edges:
        if u not in shown or v not in shown:
            continue
        if (u, v) in added:
            lines.append(f"  {ids[u]} ==>|added| {ids[v]}")
            styles.append(f"  linkStyle {index} stroke:green,stroke-width:3px")
        elif (u, v) in removed:
            lines.append(f"  {ids[u]} -.->|removed| {ids[v]}")
            styles.append(f"  linkStyle {index} stroke:red,stroke-dasharray:4")
        else:
            lines.append(f"  {ids[u]} --> {ids[v]}")
        index += 1
    return lines + styles


def to_markdown(report: DiffReport) -> str:
    diff, inputs = report.diff, report.inputs
    lines = ["## llm-do diff", "", f"**{summary(diff)}** (`{inputs.old}` -> `{inputs.new}`)"]
    risky = [c for c in diff.changes if c.severity != "low"]
    if risky:
        lines += ["", "### Risky changes", "", *_HEADER, *(_row(c) for c in risky)]
    if diff.changes:
        lines += ["", f"<details><summary>All {len(diff.changes)} changes, with details</summary>", "", *_HEADER]
        lines += [_row(c) for c in diff.changes]
        detailed = [c for c in diff.changes if c.detail]
        for c in detailed:
            lines += ["", f"{_escape(c.subject)}:", "", "```diff" if c.area == "instructions" else "```", *c.detail, "```"]
        lines += ["", "</details>"]
        graph = mermaid(diff)
        if len(graph) > 1:  # changes to code and MCP servers alone touch no worker
            lines += ["", "<details><summary>Call graph</summary>", "", "```mermaid", *graph, "```", "", "</details>"]
    lines += ["", f"Reproduce: `{inputs.command}`"]
    return "\n".join(lines)


RENDERERS: Renderers[DiffReport] = {"text": to_text, "json": to_json, "markdown": to_markdown}

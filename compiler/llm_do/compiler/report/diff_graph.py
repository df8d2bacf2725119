"""The call graph around a diff's changes, as Mermaid for the pull-request comment."""

from __future__ import annotations

from ..diff.bundle import BundleDiff

GRAPH_LIMIT = 60
"""Most workers the Markdown call graph shows (those the changes touch come first)."""


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

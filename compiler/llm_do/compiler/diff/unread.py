"""`diff --no-import`: the changes two documents read without import cannot judge, as entries.

What the front matter and project.json say is always compared, also about tools nobody listed: a
worker's approval rules for them, the names it lists, an MCP server's `allowed_tools`, `labels` and
`tool_labels`. A Python
file that differs is one `changed FILE (not evaluated without import)` entry naming what it may
affect; never "no changes". The report also says what was not compared at all (spec/diff.md).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from .bundle import BundleDiff, Change, placed
from .change import text_of
from .unread_sides import NOT_EVALUATED, UNREAD_KEY, Unread, unread


def without_import(diff: BundleDiff, old: dict[str, Any], new: dict[str, Any]) -> BundleDiff:
    """`diff` with the entries above, and what it did not compare."""
    before, after = unread(old), unread(new)
    known = {(u.kind, u.name) for u in after}
    not_compared = after + [u for u in before if (u.kind, u.name) not in known]
    added = [placed(c, old, new) for c in
             _python_changes(old, new, before + after) + _front_matter_changes(old, new) + _allowed_tools_changes(old, new)
             + _label_changes(old, new)]
    hidden = {u.name for u in after if u.kind == "names"}
    kept = [_unknown_now(c) if c.area == "capability" and c.verb == "removed" and c.worker in hidden else c for c in diff.changes]
    return replace(diff, changes=sorted(kept + added, key=Change.sort_key), not_compared=not_compared)


def _unknown_now(change: Change) -> Change:
    """A capability that seems lost when the worker lists tools the text does not show: unknown, not gone."""
    return replace(change, severity="medium", verb="changed", after=f"unknown ({NOT_EVALUATED})",
                   note=f"{change.note}; the tool may still be there, built by code")


def _python_changes(old: dict[str, Any], new: dict[str, Any], unknown: list[Unread]) -> list[Change]:
    """A Python file that differs (not only in comments and layout): what its import does is not known."""
    os_, ns = old.get("sources") or {}, new.get("sources") or {}
    ot, nt = ((side.get(UNREAD_KEY) or {}).get("python") or {} for side in (old, new))
    out: list[Change] = []
    for file in sorted(set(os_) | set(ns)):
        a, b = os_.get(file), ns.get(file)
        if (a or b or {}).get("kind") != "python" or (a and b and a.get("sha256") == b.get("sha256")):
            continue
        if a and b and ot.get(file) is not None and ot.get(file) == nt.get(file):
            continue  # comments and layout only: its import does the same
        hits = [u for u in unknown if u.file == file]
        if any(u.kind == "code" for u in hits):  # its tools built by code are the names workers list unseen
            hits += [u for u in unknown if u.kind == "names"]
        affects = list(dict.fromkeys(u.subject for u in hits)) or [f"what {file} does when imported"]
        workers = sorted({w for u in hits for w in u.workers})
        out.append(Change("medium", "added" if a is None else "removed" if b is None else "changed", "unevaluated",
                          f"{file} ({NOT_EVALUATED})", note="may affect: " + "; ".join(affects), at=f"code:{file}",
                          detail=[f"used by: {', '.join(workers)}"] if workers else []))
    return out


def _front_matter_changes(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """Per worker on both sides: the names it lists that nobody listed, and its rules for them."""
    on, nn = old.get(UNREAD_KEY) or {}, new.get(UNREAD_KEY) or {}
    servers = {u.name for u in unread(old) + unread(new) if u.kind == "mcp"}
    out: list[Change] = []
    for worker in sorted(set(old["workers"]) & set(new["workers"])):
        file = new["workers"][worker].get("source")
        names = [sorted(set((side.get("workers") or {}).get(worker) or ()) - servers) for side in (on, nn)]
        if names[0] != names[1]:
            wider = set(names[1]) > set(names[0])
            out.append(Change("medium", "widened" if wider else "changed", "unevaluated",
                              f"tools listed by {worker} ({NOT_EVALUATED})", ", ".join(names[0]) or None,
                              ", ".join(names[1]) or None, worker=worker, file=file,
                              note="names the text of the Python does not show", at=f"worker:{worker}:tools"))
        listed = set(old["workers"][worker].get("tools") or {}) & set(new["workers"][worker].get("tools") or {})
        rules = [[text for target, text in (side.get("rules") or {}).get(worker) or () if target not in listed]
                 for side in (on, nn)]
        if rules[0] != rules[1]:
            allows = any(r.startswith("allow ") and r not in rules[0] for r in rules[1])  # a new or rewritten allow
            out.append(Change("high" if allows else "medium", "changed", "approval",
                              f"approval rules of {worker} for tools not listed ({NOT_EVALUATED})",
                              "; ".join(rules[0]) or None, "; ".join(rules[1]) or None, worker=worker, file=file,
                              gate="allow" if allows else None, at=f"worker:{worker}:approvals"))
    return out


def _allowed_tools_changes(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """`allowed_tools` of an MCP server not started, as project.json writes it."""
    oa = (old.get(UNREAD_KEY) or {}).get("allowed_tools") or {}
    na = (new.get(UNREAD_KEY) or {}).get("allowed_tools") or {}
    out: list[Change] = []
    for server in sorted(set(oa) & set(na)):
        a, b = oa[server], na[server]
        if a == b:
            continue
        wider = b is None or (a is not None and set(b) > set(a))
        out.append(Change("medium" if wider else "low", "widened" if wider else "narrowed" if set(b) < set(a or b) else "changed",
                          "mcp", f"allowed_tools of MCP server {server}", _names(a), _names(b), file="project.json",
                          at=f"project:mcp_servers.{server}.allowed_tools",
                          note=f"its tools are not listed: {NOT_EVALUATED}"))
    return out


def _label_changes(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """`labels` and `tool_labels` of an MCP server not started, as project.json writes them: the
    flow labels of its tools, which `--no-import` cannot list (with import, `labels of mcp:S:T`)."""
    ol = (old.get(UNREAD_KEY) or {}).get("labels") or {}
    nl = (new.get(UNREAD_KEY) or {}).get("labels") or {}
    out: list[Change] = []
    for server in sorted(set(ol) & set(nl)):
        for key in ("labels", "tool_labels"):
            a, b = ol[server].get(key), nl[server].get(key)
            if a != b:
                out.append(Change("medium", "changed", "flow", f"{key} of MCP server {server}", text_of(a), text_of(b),
                                  file="project.json", at=f"project:mcp_servers.{server}.{key}",
                                  note=f"its tools are not listed: {NOT_EVALUATED}"))
    return out


def _names(tools: list[str] | None) -> str:
    return "all" if tools is None else ", ".join(tools) or "none"

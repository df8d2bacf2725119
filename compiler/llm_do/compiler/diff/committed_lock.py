"""`diff`'s look at a side's committed `bundle.lock`: is it the build of that side's sources?

`exec` runs the lock, not the sources, so a pull request that changes only `bundle.lock` (built
from a relaxed rule, the source put back) must not read as "no changes in meaning". Each project
side (a directory, `git:REV[:PATH]`) with a `bundle.lock` at its root is compared with the build of
its sources the diff made anyway; a lock that is not their build is one **high** entry saying what
differs, with the two locks' own diff (what the committed lock holds that the build does not).

With import the comparison is by bytes, as `build --check` compares. Without it (`--no-import`)
the build cannot see everything the lock holds (schemas, tools built by code, MCP servers' tools:
`unread`), so it compares what the text shows: every source the lock names hashes as the file does
(and every source the build read is named), and the lock means nothing the build does not, the
changes the build could not judge aside.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from llm_do.bundle.errors import BundleRefused
from llm_do.bundle.reader import verify_sealed

from .bundle import BundleDiff, Change, Incomparable, diff_bundles
from .change import change_line
from .entries import entries
from .unread_sides import Unread, unread

COMMITTED_LOCK_KEY = "committed_lock"
"""Key of a compiled side's document (in memory only): its `bundle.lock` when that is not the build
of its sources, `{"file": "bundle.lock", "differences": [...], "diff": [...]}`."""
LOCK_NAME = "bundle.lock"
SHOWN = 12
"""Lines of the two locks' own diff shown; more are counted."""


def committed_lock(root: Path, build: bytes, build_doc: dict[str, Any], *, import_python: bool) -> dict[str, Any] | None:
    """What `COMMITTED_LOCK_KEY` holds for the project at `root` whose build is `build`
    (`build_doc` parsed, with its `unread` keys without import); None when the project has no
    `bundle.lock`, or it is the build of its sources."""
    from ..syntax.sources import Unreadable, read_regular_file

    try:
        data = read_regular_file(str(root / LOCK_NAME), limit=None)
    except OSError:
        return None
    except Unreadable as exc:  # a pipe or a device where the lock was: never waited on
        return {"file": LOCK_NAME, "differences": [f"it is not a lock llm-do wrote: {exc}"], "diff": []}
    if import_python and data == build:
        return None
    try:
        verify_sealed(data, root / LOCK_NAME)
        lock_doc = json.loads(data)
    except (BundleRefused, ValueError, UnicodeDecodeError) as exc:
        return {"file": LOCK_NAME, "differences": [f"it is not a lock llm-do wrote: {exc}"], "diff": []}
    from ..build.lock_check import lock_differences, sources_on_disk

    if import_python:
        differences = lock_differences(data, build)
    else:  # the sources the lock names that changed, and those the build read that it does not name
        named = lock_doc.get("sources")
        differences = sources_on_disk(root, data) + [
            f"added: {rel}" for rel in sorted(set(build_doc.get("sources") or {}) - set(named if isinstance(named, dict) else {}))]
    changes = _meaning_changes(build_doc, lock_doc, import_python)
    if not differences and not changes:
        return None
    if not differences:
        differences = ["its sources are as it names them, but it holds what their build does not"]
    lines = [change_line(e.severity, e.change.verb, e.change.subject, e.change.before, e.change.after, e.change.note)
             for e in entries(changes)]  # one line per cause, as `diff` lists them
    shown = lines[:SHOWN] + ([f"... {len(lines) - SHOWN} more"] if len(lines) > SHOWN else [])
    return {"file": LOCK_NAME, "differences": differences, "diff": shown}


def _meaning_changes(build: dict[str, Any], lock: dict[str, Any], import_python: bool) -> list[Change]:
    """What the lock means beyond (or short of) the build, as `diff` says it; without import, the
    changes the build could not judge left out."""
    try:
        changes = diff_bundles(build, lock).changes
    except (Incomparable, KeyError, TypeError, AttributeError):
        return []  # another format, or not a bundle: the differences say so
    if import_python:
        return changes
    unknown = unread(build)
    return [c for c in changes if not _unjudged(c, unknown)]


def _unjudged(change: Change, unknown: list[Unread]) -> bool:
    """A change the build without import cannot judge: a schema it did not read, an MCP server it did
    not start, a tool built by code it did not see."""
    if change.area == "schema":
        return change.worker in {u.name for u in unknown if u.kind == "schema"}
    servers = {u.name for u in unknown if u.kind == "mcp"}
    if change.area == "mcp" or (change.capability or "").startswith("mcp:"):
        return any(f"MCP server {s}" in change.subject or (change.capability or "").startswith(f"mcp:{s}:") for s in servers)
    hidden = {name for u in unknown if u.kind == "names" for name in u.names}
    return bool(hidden) and change.area in ("capability", "code", "approval", "instructions") and any(
        name in change.subject or (change.capability or "").endswith(f":{name}") for name in hidden)


def lock_changes(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """The entries of the sides whose committed lock is not the build of their sources."""
    out = []
    for side, doc in (("old", old), ("new", new)):
        found = doc.get(COMMITTED_LOCK_KEY)
        if not found:
            continue
        detail = list(found["differences"])
        if found["diff"]:
            detail += ["the lock against the build of its sources:", *(f"  {line}" for line in found["diff"])]
        out.append(Change("high", "changed", "project", f"{found['file']} of the {side} side", "the build of its sources",
                          "not the build of its sources", note="exec runs the lock, not the sources", detail=detail,
                          file=found["file"]))
    return out


def with_committed_locks(diff: BundleDiff, old: dict[str, Any], new: dict[str, Any]) -> BundleDiff:
    """`diff` with an entry for each side whose committed `bundle.lock` is not the build of its sources."""
    found = lock_changes(old, new)
    if not found:
        return diff
    return replace(diff, changes=sorted([*diff.changes, *found], key=Change.sort_key))

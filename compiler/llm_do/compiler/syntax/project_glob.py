"""Glob patterns over a project directory that never descend through a symbolic link.

Python's `glob` follows directory symlinks when `**` or `*` expands: a link to `/` makes a
pattern walk the whole machine, and a link `self -> .` matches every file again under a new
name, without end but for the path length limit. Here a wildcard or `**` only enters real
directories; a directory named literally in the pattern is entered as written (the project's
confinement check still applies to every file found). Otherwise the rules are `glob`'s with
`recursive=True`: `*` and `?` stay within one name, `**` matches zero or more directories,
and hidden names (a leading `.`) are matched only by a pattern part that starts with `.`.
"""

from __future__ import annotations

import os
import posixpath
import re
from fnmatch import fnmatchcase
from functools import cache

_MAGIC = re.compile(r"[*?[]")


def has_magic(pattern: str) -> bool:
    return _MAGIC.search(pattern) is not None


def glob_project(root: str, pattern: str) -> list[str]:
    """Paths below `root` (relative, `/`-separated, sorted) that `pattern` matches: files,
    special files and links to them, and directories where the pattern ends at one."""
    parts = [p for p in posixpath.normpath(pattern.replace("\\", "/")).split("/") if p not in ("", ".")]
    if not parts:
        return []
    found: set[str] = set()
    pending: list[tuple[str, int]] = [("", 0)]
    visited: set[tuple[str, int]] = set()
    while pending:
        state = pending.pop()
        if state in visited:
            continue
        visited.add(state)
        rel, i = state
        part, last = parts[i], i == len(parts) - 1
        if part == "**":
            if last:
                found.update(_below(root, rel))
                continue
            pending.append((rel, i + 1))
            pending.extend((child, i) for child, is_dir in _entries(root, rel, hidden=False) if is_dir)
        elif has_magic(part):
            hidden = part.startswith(".")
            for child, is_dir in _entries(root, rel, hidden=hidden):
                if fnmatchcase(posixpath.basename(child), part):
                    if last:
                        found.add(child)
                    elif is_dir:
                        pending.append((child, i + 1))
        else:
            child = posixpath.join(rel, part) if rel else part
            path = os.path.join(root, child)
            if last:
                if os.path.lexists(path):
                    found.add(child)
            elif os.path.isdir(path):
                pending.append((child, i + 1))
    return sorted(found)


def _entries(root: str, rel: str, *, hidden: bool) -> list[tuple[str, bool]]:
    """(relative path, is a real directory) of each entry of `rel`; hidden names only if asked."""
    try:
        with os.scandir(os.path.join(root, rel) if rel else root) as it:
            out = []
            for entry in it:
                if entry.name.startswith(".") and not hidden:
                    continue
                try:
                    is_dir = entry.is_dir(follow_symlinks=False)
                except OSError:
                    is_dir = False
                out.append((posixpath.join(rel, entry.name) if rel else entry.name, is_dir))
            return out
    except OSError:
        return []


def _below(root: str, rel: str) -> list[str]:
    """Everything `**` matches at the end of a pattern: `rel` and all it holds, hidden names and
    directory links not entered."""
    out = [rel] if rel else []
    pending = [rel]
    while pending:
        current = pending.pop()
        for child, is_dir in _entries(root, current, hidden=False):
            out.append(child)
            if is_dir:
                pending.append(child)
    return out


def pattern_matches(pattern: str, rel: str) -> bool:
    """Whether `glob_project` would find the file `rel` (relative, `/`-separated) with `pattern`
    were it there: the same rules, applied to a path that need not exist yet (a worker
    `worker_create` will write)."""
    parts = tuple(p for p in posixpath.normpath(pattern.replace("\\", "/")).split("/") if p not in ("", "."))
    names = tuple(p for p in posixpath.normpath(rel).split("/") if p not in ("", "."))

    @cache
    def match(i: int, j: int) -> bool:
        if i == len(parts):
            return j == len(names)
        part = parts[i]
        if part == "**":
            if i == len(parts) - 1:  # everything below, hidden names not entered
                return all(not name.startswith(".") for name in names[j:])
            return match(i + 1, j) or (j < len(names) - 1 and not names[j].startswith(".") and match(i, j + 1))
        if j == len(names):
            return False
        name = names[j]
        if has_magic(part):
            found = fnmatchcase(name, part) and (part.startswith(".") or not name.startswith("."))
        else:
            found = name == part
        return found and match(i + 1, j + 1)

    return bool(parts) and match(0, 0)

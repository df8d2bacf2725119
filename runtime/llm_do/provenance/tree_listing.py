"""Every name in a project tree, to tell later that no file was added, removed or renamed.

A build looks for files it may not find: the worker files its patterns match, a template in the
first of three places, an entry function's file. The build record keeps the listing of the whole
tree taken before the build, so a file that would have been found now (or no longer) makes the
record stale. Listings compare names, not modification times, so a coarse clock loses nothing.
"""

from __future__ import annotations

import os
from collections.abc import Collection

MAX_ENTRIES = 20_000
"""A tree with more names than this (a virtualenv or node_modules inside the project) is not listed."""

Listing = dict[str, list[str]]
"""Folder (relative to the root, `/`-separated, `""` for the root) -> its sorted entries: a file's
name, a folder's name with `/`, a symbolic link's name with `@` and its target."""


def list_tree(root: str, *, leave_out: Collection[str] = ()) -> Listing | None:
    """The listing of every folder under `root`, leaving out the entries `leave_out` (paths relative
    to the root: the lock, which is no input; llm-do's state folder when no search of the build
    could enter it, `build_record`) and all they hold. None when the tree cannot be listed this
    way: too large, unreadable, or holding a link to a folder (whose contents a listing of links
    does not follow)."""
    listing: Listing = {}
    pending = [""]
    count = 0
    while pending:
        rel = pending.pop()
        names = []
        try:
            with os.scandir(os.path.join(root, rel) if rel else root) as entries:
                for entry in entries:
                    child = f"{rel}/{entry.name}" if rel else entry.name
                    if child in leave_out:
                        continue
                    if entry.is_symlink():
                        if os.path.isdir(entry.path):
                            return None
                        names.append(f"{entry.name}@{os.readlink(entry.path)}")
                    elif entry.is_dir():
                        names.append(entry.name + "/")
                        pending.append(child)
                    else:
                        names.append(entry.name)
        except OSError:
            return None
        count += len(names)
        if count > MAX_ENTRIES:
            return None
        listing[rel] = sorted(names)
    return listing


def without(listing: Listing, leave_out: Collection[str]) -> Listing:
    """`listing` as `list_tree` gives it with `leave_out`, for entries that are folders or files
    (`folder/`, `file`): each gone from its folder's list, and every folder at or below it gone."""
    out: Listing = {}
    for folder, names in listing.items():
        if any(folder == gone or folder.startswith(gone + "/") for gone in leave_out):
            continue
        out[folder] = [name for name in names if _path(folder, name.removesuffix("/")) not in leave_out]
    return out


def link_targets(entry: str) -> list[str]:
    """Every target a listing's entry may name, were it a link: a name may hold `@` too, so each
    text after an `@` (none for an entry without one)."""
    return [entry[i + 1:] for i, c in enumerate(entry) if c == "@"]


def _path(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name

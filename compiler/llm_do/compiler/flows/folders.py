"""Project folders as the filesystem has them: labels follow resolved paths (red team M2, L4).

A toolset whose `path` is a link into a published folder writes into that folder, so its grants
are labelled by the folder the link resolves to; a `flows.paths` key that is a link labels the
folder it resolves to. Links are followed only inside the project (a `path` that leaves it is
F002 already). A `flows.paths` key that names no folder of the project labels nothing, which is
said (F010), with the folder whose name differs only in case: on a case-insensitive filesystem
that folder is the one meant, yet labels match names exactly, so the build is the same everywhere.

This is the compiler's one read of the tree for flows; the build record's listing of the tree
(`tree_listing`) makes a change of it rebuild, and a tree holding a link to a folder is never
recorded.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Iterator
from dataclasses import dataclass

FolderResolver = Callable[[str], str]
"""A normalized project folder (`site/public`, `.`) -> the folder it is once links are followed."""


def folder_resolver(root: str) -> FolderResolver:
    """`resolve(folder)` for the project at `root`, remembered per folder."""
    real_root = os.path.realpath(root)
    memo: dict[str, str] = {}

    def resolve(folder: str) -> str:
        found = memo.get(folder)
        if found is None:
            found = memo[folder] = _resolved(real_root, folder)
        return found

    return resolve


def _resolved(real_root: str, folder: str) -> str:
    if folder == ".":
        return folder
    real = os.path.realpath(os.path.join(real_root, folder))
    if real == real_root:
        return "."
    if not real.startswith(real_root + os.sep):
        return folder  # leaves the project: labelled as written (and refused where it is used)
    return os.path.relpath(real, real_root).replace(os.sep, "/")


@dataclass(frozen=True)
class UnmatchedFolder:
    """A `flows.paths` key that names no folder of the project."""

    key: str
    same_but_case: str | None
    """The folder whose name differs only in case, if there is one (relative, as it is spelt)."""
    closest: str | None
    """Otherwise a folder whose name is close (a typo), if there is one."""


def unmatched_folders(root: str, keys: list[str]) -> Iterator[UnmatchedFolder]:
    """The keys (normalized project folders) that name no folder of the project, spelt exactly as
    the tree spells it (links to folders inside the project count)."""
    for key in keys:
        if key == ".":
            continue
        parent, spelt, closest = ".", [], None
        for segment in key.split("/"):
            names = _folders_in(root, parent)
            if segment in names:
                spelt.append(segment)
                parent = posixpath.join(parent, segment)
                continue
            cased = [n for n in names if n.lower() == segment.lower()]
            if cased:
                yield UnmatchedFolder(key, "/".join([*spelt, cased[0], *key.split("/")[len(spelt) + 1:]]), None)
            else:
                from ..suggest import closest as close

                near = close(segment, names) if names else None
                yield UnmatchedFolder(key, None, "/".join([*spelt, near]) if near else closest)
            break


def _folders_in(root: str, folder: str) -> list[str]:
    """The names of the folders (and links to folders) in a project folder; none when unreadable."""
    try:
        with os.scandir(os.path.join(root, folder)) as entries:
            return sorted(e.name for e in entries if e.is_dir())  # follows links, as `resolve` does
    except OSError:
        return []

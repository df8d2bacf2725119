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
from collections.abc import Collection, Iterator
from dataclasses import dataclass


class FolderResolver:
    """`resolve(folder)` for the project at `root`: a normalized project folder (`site/public`,
    `.`) -> the folder it is once links are followed, remembered per folder. `folders`: every
    folder asked, whose links a build record must see (`build.state_left_out`)."""

    def __init__(self, root: str) -> None:
        self._real_root = os.path.realpath(root)
        self._memo: dict[str, str] = {}

    def __call__(self, folder: str) -> str:
        found = self._memo.get(folder)
        if found is None:
            found = self._memo[folder] = _resolved(self._real_root, folder)
        return found

    @property
    def folders(self) -> Collection[str]:
        return self._memo.keys()


def _resolved(real_root: str, folder: str) -> str:
    if folder == ".":
        return folder
    real = os.path.realpath(os.path.join(real_root, folder))
    if real == real_root:
        return "."
    if not real.startswith(real_root + os.sep):
        return folder  # leaves the project: labelled as written (and refused where it is used)
    return os.path.relpath(real, real_root).replace(os.sep, "/")


WILDCARDS = frozenset("*?[")


@dataclass(frozen=True)
class UnmatchedFolder:
    """A `flows.paths` key that names no folder of the project, where another name was surely meant."""

    key: str
    same_but_case: str | None = None
    """The folder whose name differs only in case (relative, as the tree spells it)."""
    closest: str | None = None
    """A folder whose name is close (a typo)."""
    glob: bool = False
    """The key has wildcards, which labels do not expand."""
    file: bool = False
    """The key names a file, not a folder."""


def unmatched_folders(root: str, keys: list[str]) -> Iterator[UnmatchedFolder]:
    """The keys (normalized project folders) that name no folder of the project, spelt as the
    tree spells it (links to folders inside the project count), when the key is surely a mistake:
    a glob, a file, a folder spelt in another case or a close name. A key that names nothing near
    anything is left alone: it labels the folder once a run makes it (an output folder git does not
    keep while it is empty)."""
    for key in keys:
        if key == ".":
            continue
        if WILDCARDS & set(key):
            yield UnmatchedFolder(key, glob=True)
            continue
        parent, spelt = ".", []
        for segment in key.split("/"):
            names = _folders_in(root, parent)
            if segment in names:
                spelt.append(segment)
                parent = posixpath.join(parent, segment)
                continue
            rest = key.split("/")[len(spelt) + 1:]
            cased = [n for n in names if n.lower() == segment.lower()]
            if cased:
                yield UnmatchedFolder(key, same_but_case="/".join([*spelt, cased[0], *rest]))
            elif os.path.isfile(os.path.join(root, parent, segment)):
                yield UnmatchedFolder(key, file=True)
            elif names:
                from ...suggest import closest

                near = closest(segment, names)
                if near is not None:
                    yield UnmatchedFolder(key, closest="/".join([*spelt, near, *rest]))
            break


def _folders_in(root: str, folder: str) -> list[str]:
    """The names of the folders (and links to folders) in a project folder; none when unreadable."""
    try:
        with os.scandir(os.path.join(root, folder)) as entries:
            return sorted(e.name for e in entries if e.is_dir())  # follows links, as `resolve` does
    except OSError:
        return []

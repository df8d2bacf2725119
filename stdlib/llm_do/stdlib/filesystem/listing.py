"""`list_files`' walk: a glob pattern matched part by part while the tree is read once.

pathlib's glob expands every `**` on its own, so `**/**/**/...` costs exponential time on a deep
tree and, with a few hundred of them, ends in a RecursionError. Here a pattern is a small automaton
whose states are positions in the pattern: each directory is read once, with the set of positions
alive there, and entered only while one is. The work is bounded by `MAX_ENTRIES` entries read and
`MAX_SECONDS`; directory links are never entered, so the walk stays on the directory's own tree.
"""

from __future__ import annotations

import fnmatch
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from llm_do.bundle.errors import LlmDoError

MAX_PARTS = 64
"""Most parts a pattern may have once repeated `**` are collapsed."""
MAX_ENTRIES = 200_000
"""Most directory entries one listing reads before it stops and says so."""
MAX_SECONDS = 10.0
"""Longest a listing walks before it stops and says so."""

RECURSIVE = None
"""The part standing for `**`: any number of directories, none included."""

Part = Callable[[str], object] | None


class PatternProblem(LlmDoError, ValueError):
    """The pattern is not a glob this tool takes; the message is for the model."""


@dataclass(frozen=True)
class Pattern:
    """A glob as its parts: a name matcher for each, `RECURSIVE` for `**`."""

    parts: tuple[Part, ...]

    def start(self) -> frozenset[int]:
        return self._closure({0})

    def step(self, states: frozenset[int], name: str) -> frozenset[int]:
        """The positions alive after a path component called `name`."""
        out: set[int] = set()
        for i in states:
            if i == len(self.parts):
                continue
            part = self.parts[i]
            if part is RECURSIVE:
                out.add(i)
            elif part(name):
                out.add(i + 1)
        return self._closure(out)

    def accepts(self, states: frozenset[int]) -> bool:
        return len(self.parts) in states

    def goes_on(self, states: frozenset[int]) -> bool:
        """Whether something below a directory in these states can still match."""
        return any(i < len(self.parts) for i in states)

    def _closure(self, states: set[int]) -> frozenset[int]:
        """`**` also matches no directory at all: a position before it stands for the one after."""
        todo = list(states)
        while todo:
            i = todo.pop()
            if i < len(self.parts) and self.parts[i] is RECURSIVE and i + 1 not in states:
                states.add(i + 1)
                todo.append(i + 1)
        return frozenset(states)


def compile_pattern(pattern: str) -> Pattern:
    """`src/**/*.py` -> a Pattern. Empty and `.` parts are dropped and runs of `**` collapse to
    one (`**/**/x` means `**/x`), so no spelling makes the walk costlier than the tree."""
    parts: list[Part] = []
    for text in pattern.split("/"):
        if text in ("", "."):
            continue
        if text == "**":
            if not parts or parts[-1] is not RECURSIVE:
                parts.append(RECURSIVE)
            continue
        if "**" in text:
            raise PatternProblem("'**' can only be a whole path component")
        parts.append(re.compile(fnmatch.translate(text)).match)
    if not parts:
        raise PatternProblem("the pattern is empty")
    if len(parts) > MAX_PARTS:
        raise PatternProblem(f"the pattern has more than {MAX_PARTS} parts")
    return Pattern(tuple(parts))


@dataclass
class Walk:
    """What a walk found, in the order read: regular files, and links (to anything; the caller
    judges where they lead), as (path, is_link); and why it stopped early, if it did."""

    found: list[tuple[str, bool]] = field(default_factory=list)
    stopped: str | None = None


SKIPPED = frozenset({".git", ".llm-do"})
"""Folders never entered, by name (case ignored): git's, whose hooks and configuration tools do not
touch, and llm-do's own state (`toolkit.protected`)."""


def walk(directory: str, pattern: Pattern, *, skip: frozenset[str] = SKIPPED,
         skip_paths: frozenset[str] = frozenset()) -> Walk:
    """Every regular file and link below `directory` whose path relative to it matches `pattern`.

    Directories named in `skip` (case ignored), those whose path, case-folded, is in `skip_paths`
    (protected folders below it), and links to directories are not entered; FIFOs, sockets and
    devices are passed over, and so is a subdirectory that cannot be read. Paths are returned as
    `os.scandir` gives them (under `directory`).
    """
    result = Walk()
    deadline = time.monotonic() + MAX_SECONDS
    read = 0
    stack = [(directory, pattern.start())]
    first = True
    while stack:
        path, states = stack.pop()
        try:
            with os.scandir(path) as entries:
                listed = list(entries)
        except OSError:
            if first:
                raise
            continue
        first = False
        for entry in listed:
            read += 1
            if read > MAX_ENTRIES:
                result.stopped = f"after reading {MAX_ENTRIES} directory entries"
                return result
            if time.monotonic() > deadline:
                result.stopped = f"after {MAX_SECONDS:g} seconds"
                return result
            if entry.name.casefold() in skip or (skip_paths and entry.path.casefold() in skip_paths):
                continue
            after = pattern.step(states, entry.name)
            if not after:
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if pattern.goes_on(after):
                        stack.append((entry.path, after))
                elif pattern.accepts(after):
                    if entry.is_symlink():
                        result.found.append((entry.path, True))
                    elif entry.is_file(follow_symlinks=False):
                        result.found.append((entry.path, False))
            except OSError:
                continue
    return result

"""Whether the project changed since its lock was built, for the sources a run does not read.

A lock runs as it was built: the content of worker files, templates and the manifest is in it, so
an edit to them changes nothing until the next `llm-do build`, and the runtime does not refuse the
bundle for it. It says so once, though, so nobody wonders why an edit had no effect. Python sources
are another matter: they are what the runtime imports, and one that changed refuses the bundle
(`bundle._verify_python_sources`). Sources absent from disk (a lock shipped without its project)
are not reported: only files present are hashed, and nothing is parsed.

It must cost the run nothing: a lock of 3000 workers has 3000 such sources, and telling whether
a file was edited in place takes a `stat` of it (no directory-level signal shows such an edit). Each
source is stat'ed relative to an open descriptor of the project root (no path to build, a shorter
lookup for the kernel: a third less than by full path), and only
files written since the lock (by modification time, with a little slack for coarse clocks) are read
and hashed. `stale_check` does this on a daemon thread that overlaps the run's start-up: the stats
release the GIL, so on a second core they cost the start-up next to nothing; the note is printed
after the run.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from llm_do.bundle.canonical import source_hash
from llm_do.bundle.regular_files import IrregularFile, read_regular_file

if TYPE_CHECKING:
    from .bundle import LoadedBundle

SHOWN = 5
"""Changed files named in the note; more are counted."""


SLACK_NS = 2_000_000_000
"""A source modified up to this long before the lock was written is still hashed."""


def changed_sources(bundle: LoadedBundle) -> list[str]:
    """The non-Python sources present under the project root, modified since the lock was written,
    whose hash is not the recorded one."""
    try:
        since = os.stat(bundle.path).st_mtime_ns - SLACK_NS
    except OSError:  # a bundle held in memory: every present source is hashed
        since = 0
    root = str(bundle.root)
    sources = sorted((rel, entry.get("sha256")) for rel, entry in (bundle.text.get("sources") or {}).items()
                     if entry.get("kind") != "python")
    try:
        root_fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)) if os.stat in os.supports_dir_fd else None
    except OSError:
        return []  # no project beside the lock
    try:
        modified = [(rel, sha) for rel, sha in sources if _mtime(root, rel, root_fd) >= since]
    finally:
        if root_fd is not None:
            os.close(root_fd)
    changed = []
    for rel, sha in modified:
        try:
            data = read_regular_file(os.path.join(root, rel))
        except IrregularFile:  # a pipe or a device where the source was: not what was built
            changed.append(rel)
            continue
        except OSError:
            continue
        if source_hash(data) != sha:
            changed.append(rel)
    return changed


def _mtime(root: str, rel: str, root_fd: int | None) -> int:
    """`rel`'s modification time, -1 when it is absent."""
    try:
        return (os.stat(rel, dir_fd=root_fd) if root_fd is not None else os.stat(os.path.join(root, rel))).st_mtime_ns
    except (OSError, ValueError):
        return -1


def stale_note(bundle: LoadedBundle) -> str | None:
    """One line saying the lock is stale and which files changed, or None when none did."""
    changed = changed_sources(bundle)
    if not changed:
        return None
    named = ", ".join(changed[:SHOWN]) + (f" and {len(changed) - SHOWN} more" if len(changed) > SHOWN else "")
    return (f"note: {bundle.path} is stale ({named} changed since the build); it ran as built: "
            "run `llm-do build` to update it")


def stale_check(bundle: LoadedBundle) -> Callable[[], str | None]:
    """Start `stale_note` on a daemon thread; the returned function waits for it and gives the note."""
    result: list[str | None] = [None]

    def check() -> None:
        try:
            result[0] = stale_note(bundle)
        except Exception:  # a note is not worth failing a run for
            result[0] = None

    thread = threading.Thread(target=check, name="llm-do stale check", daemon=True)
    thread.start()

    def note() -> str | None:
        thread.join()
        return result[0]

    return note

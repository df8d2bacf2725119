"""Every path a case names is a file of the project (`cases` says which paths those are): a
path that is absolute, climbs out with `..`, or leads out through a link is refused, so a case file
cannot make `llm-do test` import, read or write outside the project (`--record` writes the cassette
a case names)."""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath, PureWindowsPath


def is_confined(root: Path | str, base: Path | str, written: str) -> bool:
    """Whether `written`, relative to `base` (a folder of the project at `root`), stays in the
    project, links followed: not absolute (nor a drive or UNC path), not out through `..`."""
    if not written or PurePosixPath(written).is_absolute() or PureWindowsPath(written).anchor or "\0" in written:
        return False
    top = os.path.realpath(root)
    target = os.path.realpath(os.path.join(base, written))
    return target == top or target.startswith(top.rstrip(os.sep) + os.sep)

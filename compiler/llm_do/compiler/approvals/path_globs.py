"""Path globs that cannot match what they name (A011): a rule sees a stdlib tool's path relative to
the toolset's root and normalized (`..`, `.` and links resolved, no leading or trailing `/`), so a
glob written as the project's screens used to show paths (`docs/secret*` under `path: docs`) or
with `./`, `..` or `/` describes no path a rule is ever given.

Pure: a glob and the root in, the reason and the glob that would match out.
"""

from __future__ import annotations

import posixpath
from typing import NamedTuple


class Misplaced(NamedTuple):
    reason: str
    """Why the glob does not match what it seems to name (completes "'path ~ GLOB' ...")."""
    fixed: str | None
    """The glob that matches it, relative to the root; None when nothing inside the root could."""


def misplaced(glob: str, root: str) -> Misplaced | None:
    """Why `glob` cannot match what it names when rules see paths relative to `root` (`docs`, `.`
    for the project or working directory itself); None when it can."""
    where = "the toolset's root" if root == "." else f"the toolset's root {root}/"
    if glob.startswith("/"):
        fixed = misplaced(glob.lstrip("/"), root)
        return Misplaced(f"is absolute, and rules see paths relative to {where}",
                         fixed.fixed if fixed else glob.lstrip("/") or None)
    segments = glob.split("/")
    if any(s in (".", "..") for s in segments):
        normal = posixpath.normpath(glob)
        if normal == ".." or normal.startswith("../"):
            return Misplaced(f"points outside {where}, where the tool cannot touch anything", None)
        fixed = misplaced(normal, root)
        return Misplaced("has `.` or `..` segments, which are resolved before a rule sees a path",
                         fixed.fixed if fixed else normal)
    if glob.endswith("/") and glob.strip("/"):
        fixed = misplaced(glob.rstrip("/"), root)
        return Misplaced("ends in `/`, which a path a rule sees never does", fixed.fixed if fixed else glob.rstrip("/"))
    if root != "." and (glob == root or glob.startswith(root + "/")):
        inside = glob[len(root) + 1:] or "."
        return Misplaced(f"is matched against paths relative to {where}: it names {root}/{glob}, not {glob}", inside)
    return None

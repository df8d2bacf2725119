"""Whether what an import of the project's Python depended on still holds (standard library only).

The checks are those the introspection cache keeps beside an answer (`facts.cache`): the hash of
every project file the child read, the importable names of every project folder it listed, the
size and modification time of every module file it loaded from outside the project, and the
modification time of every `sys.path` folder. The build record (`build_record`) keeps the same
checks, so `build --check` can tell that the Python did not change without importing pydantic.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from .project_reads import importable_names


def checks_hold(checks: Any, root: Path) -> bool:
    """Whether every check still holds for the project at `root`; False for anything malformed."""
    if not isinstance(checks, dict):
        return False
    try:
        for rel, digest in checks["project"].items():
            if file_hash(root / rel) != digest:
                return False
        for rel, names in checks["listings"].items():
            if importable_names(root / rel) != names:
                return False
        for name, (mtime, size) in checks["modules"].items():
            st = os.stat(name)
            if st.st_mtime_ns != mtime or st.st_size != size:
                return False
        for name, mtime in checks["folders"].items():
            if _mtime(name) != mtime:
                return False
    except (OSError, KeyError, TypeError, ValueError, AttributeError):
        return False
    return True


def file_hash(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _mtime(name: str) -> int | None:
    try:
        return os.stat(name).st_mtime_ns
    except OSError:
        return None

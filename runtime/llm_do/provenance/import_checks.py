"""Whether what an import of the project's Python depended on still holds (standard library only).

The checks are those the compiler's introspection cache keeps beside an answer (`facts.cache`): the hash of
every project file the child read, the importable names of every project folder it listed, the
size and modification time of every module file it loaded from outside the project, and the
modification time of every `sys.path` folder. The build record (`build_record`) keeps the same
checks, so `build --check` can tell that the Python did not change without importing pydantic.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import os
from pathlib import Path
from typing import Any


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


def importable_names(folder: Path) -> list[str] | None:
    """The entries of `folder` an import could find (packages, modules, extension modules), sorted;
    None when it cannot be listed. Other files (a lock, bytecode, a run's output) change no import."""
    suffixes = tuple(importlib.machinery.all_suffixes())
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return None
    names = []
    for entry in entries:
        stem = entry.name
        if not entry.is_dir():
            stem = next((entry.name[: -len(s)] for s in suffixes if entry.name.endswith(s)), "")
        if stem != "__pycache__" and stem.split(".")[0].isidentifier():
            names.append(entry.name)
    return sorted(names)

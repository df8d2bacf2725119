"""Whether what an import of the project's Python depended on still holds (standard library only).

The checks are those the compiler's introspection cache keeps beside an answer (`facts.cache`): the hash of
every project file the child read, what an import finds in every project folder it listed
(`import_listing`: names, and whether each is a folder, with which `__init__`, a
regular file, something the import system passes by, or a link, and to where), the size and
modification time of every module file it loaded from outside the project, the modification time
of every `sys.path` folder, those of every file and folder outside the project that the project's
code opened or listed, and a hash of each environment variable it read. The build record
(`build_record`) keeps the same checks, so `build --check` can tell that the Python did not change
without importing pydantic.

Checking reads project files without waiting (`llm_do.bundle.regular_files`): a file that became a
named pipe fails its check instead of hanging the build.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from llm_do.bundle.regular_files import read_regular_file

ALL_VARIABLES = "*"
"""The name `project_reads` records when the project's code iterated over the environment."""


def checks_hold(checks: Any, root: Path) -> bool:
    """Whether every check still holds for the project at `root`; False for anything malformed."""
    if not isinstance(checks, dict):
        return False
    try:
        if variable_hashes(checks["environment"], os.environ) != checks["environment"]:
            return False
        for rel, digest in checks["project"].items():
            if file_hash(root / rel) != digest:
                return False
        for rel, listing in checks["listings"].items():
            if import_listing(root / rel) != listing:
                return False
        for name, (mtime, size) in checks["modules"].items():
            st = os.stat(name)
            if st.st_mtime_ns != mtime or st.st_size != size:
                return False
        for name, mtime in checks["folders"].items():
            if _mtime(name) != mtime:
                return False
        for name, stamp in checks["outside"].items():
            if file_stamp(name) != stamp:
                return False
    except (OSError, KeyError, TypeError, ValueError, AttributeError):
        return False
    return True


def file_hash(path: Path) -> str | None:
    """The sha256 of the regular file at `path`; None when it is missing or no regular file."""
    try:
        return hashlib.sha256(read_regular_file(path)).hexdigest()
    except (OSError, ValueError):
        return None


def file_stamp(name: str) -> list[int] | None:
    """[modification time in ns, size] of what is at `name` (a file or a folder); None: nothing."""
    try:
        st = os.stat(name)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size]


def variable_hashes(names: Iterable[str], environ: Mapping[str, str]) -> dict[str, str | None]:
    """Each environment variable of `names` by the sha256 of its value (None: unset), and
    `ALL_VARIABLES` by the sha256 of the names set. Hashes, not values: a variable may hold a secret."""
    out: dict[str, str | None] = {}
    for name in names:
        if name == ALL_VARIABLES:
            text: str | None = "\0".join(sorted(environ))
        else:
            text = environ.get(name)
        out[name] = None if text is None else hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()
    return out


def _mtime(name: str) -> int | None:
    try:
        return os.stat(name).st_mtime_ns
    except OSError:
        return None


def import_listing(folder: Path) -> list[str] | None:
    """What an import can find in `folder`, told apart as the import system tells entries apart,
    sorted; None when it cannot be listed. Each entry an import could take (a package, a module, an
    extension module) is its name, then: `/` and the `__init__` files that are regular files in it
    for a folder (the import system looks for those, without listing the folder: a folder without
    one is a namespace package), nothing for a regular file, `?` for anything else (a named pipe, a
    device, a dangling link: the import system passes it by), and `@` and its target for a link.
    Other files (a lock, bytecode, a run's output) change no import."""
    suffixes = tuple(importlib.machinery.all_suffixes())
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return None
    listing = []
    for entry in entries:
        stem = entry.name
        try:
            is_dir = entry.is_dir()
            is_file = not is_dir and entry.is_file()
            link = f"@{os.readlink(entry.path)}" if entry.is_symlink() else ""
        except OSError:
            continue
        if not is_dir:
            stem = next((entry.name[: -len(s)] for s in suffixes if entry.name.endswith(s)), "")
        if stem == "__pycache__" or not stem.split(".")[0].isidentifier():
            continue
        if is_dir:
            inits = [f"__init__{s}" for s in suffixes if os.path.isfile(os.path.join(entry.path, f"__init__{s}"))]
            listing.append(f"{entry.name}/{','.join(inits)}{link}")
        else:
            listing.append(f"{entry.name}{'' if is_file else '?'}{link}")
    return sorted(listing)

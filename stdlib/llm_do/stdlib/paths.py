"""Path confinement shared by the filesystem and shell toolsets.

A model names files with strings; every such string goes through `confine` before anything touches
the disk. The path is judged twice: lexically (no absolute forms, no `..` climbing out) and as the
kernel would follow it (every existing symlink resolved), so neither `../x` nor `link/x` with
`link -> /etc` reaches outside the root. Messages are one line, written for the model.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path, PurePosixPath, PureWindowsPath


class PathRefused(ValueError):
    """A path the toolset will not touch; the message is shown to the model as is."""


class NotRegularFile(OSError):
    """The path is a FIFO, a device, a socket or a directory: nothing a tool reads."""


def confine(root: Path, user_path: str) -> Path:
    """The absolute, symlink-resolved path `user_path` names below `root`, or `PathRefused`.

    `root` need not exist; it is resolved first, so a root that is itself a symlink is fine.
    """
    _check_form(user_path)
    real_root = Path(os.path.realpath(root))
    resolved = Path(os.path.realpath(real_root / user_path))
    if not _within(resolved, real_root):
        raise PathRefused(f"{user_path!r} leads outside the toolset's directory through a symbolic link")
    return resolved


def _check_form(user_path: str) -> None:
    if "\x00" in user_path:
        raise PathRefused("path contains a NUL byte")
    if not user_path:
        raise PathRefused("path is empty")
    if not encodable(user_path):
        raise PathRefused(f"{user_path!r} is not valid text (it has a lone surrogate)")
    windows = PureWindowsPath(user_path)
    if os.path.isabs(user_path) or windows.drive or windows.root:
        raise PathRefused(f"{user_path!r} is absolute; paths must be relative to the toolset's directory")
    if user_path.startswith("~"):
        raise PathRefused(f"{user_path!r}: '~' is not expanded; paths must be relative to the toolset's directory")
    if os.path.normpath(user_path).split(os.sep)[0] == "..":
        raise PathRefused(f"{user_path!r} points outside the toolset's directory")


def encodable(text: str) -> bool:
    """Whether the OS can take `text` as a file name or argument (a lone surrogate it cannot)."""
    try:
        os.fsencode(text)
    except UnicodeEncodeError:
        return False
    return True


def _within(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)


def relative(root: Path, path: Path) -> str:
    """`path` (already confined) as a POSIX path relative to `root`, `.` for the root itself."""
    return PurePosixPath(*path.relative_to(os.path.realpath(root)).parts).as_posix() or "."


def touches_git_dir(root: Path, path: Path) -> bool:
    """Whether `path` is or is inside a `.git` directory below `root`.

    Writing there could plant hooks or configuration that later git commands execute.
    """
    return any(part.lower() == ".git" for part in path.relative_to(os.path.realpath(root)).parts)


def normalize_suffixes(allowed: Sequence[str] | None) -> tuple[str, ...] | None:
    """`['md', '.TXT']` -> `('.md', '.txt')`; None (any suffix) stays None."""
    if allowed is None:
        return None
    return tuple(s.lower() if s.startswith(".") else f".{s.lower()}" for s in allowed)


def suffix_allowed(name: str, allowed: Sequence[str] | None) -> bool:
    """Whether a file name ends with one of `allowed` (case-insensitive; `.tar.gz` works)."""
    suffixes = normalize_suffixes(allowed)
    return suffixes is None or name.lower().endswith(suffixes)


def check_suffix(name: str, allowed: Sequence[str] | None, shown: str) -> None:
    """`PathRefused` unless `name` has an allowed suffix; `shown` is the path as the model wrote it."""
    if not suffix_allowed(name, allowed):
        listed = ", ".join(normalize_suffixes(allowed) or ()) or "none"
        raise PathRefused(f"{shown!r} does not have an allowed suffix (allowed: {listed})")


def read_regular_file(path: Path, limit: int) -> bytes:
    """At most `limit` bytes of the regular file at `path`, or `NotRegularFile`.

    The file is opened without blocking and without following a final link, then checked on the
    open descriptor: a FIFO put in its place after a check cannot hang the reader, a link swapped
    in cannot redirect it."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(f"{path} is not a regular file")
        return f.read(limit)

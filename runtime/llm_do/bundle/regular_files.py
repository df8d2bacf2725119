"""Reading a project's own files (sources, templates, the lock, a test case, an MCP server's
script) without waiting: a regular file, or a link to one, is read; a named pipe, a device, a
socket or a folder is refused with what it is, never opened. Reading a named pipe waits for a
writer that may never come, and a device such as /dev/zero never ends.

Standard library only: the compiler, the runtime and the introspection child all read project
files through here. (Tools read through `toolkit.files`, which also follows no link.)
"""

from __future__ import annotations

import os
import stat
from typing import Any

from .errors import LlmDoError

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))
_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)


class IrregularFile(LlmDoError, OSError):
    """The path is a FIFO, a device, a socket or a directory: nothing llm-do reads."""


class FileTooLarge(LlmDoError, ValueError):
    """A file larger than the limit its reader sets."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"{size} bytes, more than the {limit} allowed")
        self.size = size
        self.limit = limit


def what_instead(st: os.stat_result) -> str | None:
    """None for a regular file; else what it is instead ("a named pipe (FIFO), not a regular file")."""
    if stat.S_ISREG(st.st_mode):
        return None
    kind = next((name for test, name in _KINDS if test(st.st_mode)), "something else")
    return f"{kind}, not a regular file"


def special_file(path: str | os.PathLike[str]) -> str | None:
    """What stands at `path` when it is neither a regular file nor a folder (a named pipe, a device,
    a socket, or a link to one), said as `what_instead` says it; None otherwise, or when nothing does."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return None if stat.S_ISDIR(st.st_mode) else what_instead(st)


def read_regular_file(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The bytes of the regular file at `path` (links followed), at most `limit` of them (None: no limit).

    Raises IrregularFile (its message what the path is instead), FileTooLarge past the limit, and
    OSError (a missing file, a link loop). The file is checked before it is opened, so a device is
    never opened, and again on the descriptor, which is opened without blocking: a FIFO put in its
    place in between cannot make the reader wait for a writer."""
    _check(os.stat(path), limit)
    fd = os.open(path, _FLAGS)
    with os.fdopen(fd, "rb") as f:
        _check(os.fstat(fd), limit)
        data = f.read() if limit is None else f.read(limit + 1)
    if limit is not None and len(data) > limit:
        raise FileTooLarge(len(data), limit)
    return data


def _check(st: Any, limit: int | None) -> None:
    problem = what_instead(st)
    if problem:
        raise IrregularFile(problem)
    if limit is not None and st.st_size > limit:
        raise FileTooLarge(st.st_size, limit)

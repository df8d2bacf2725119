"""Reading and writing a file through the path `confine` resolved, never re-resolving it.

`confine` answers with a path free of links; between that answer and the write, something that
does not take the filesystem lock (a Python tool, an MCP server, another process) can put a link in
place of one of its directories. Resolving the path again at `open` would follow that link out of
the place the rules judged. So the directory is reached from the root one name at a time through
directory descriptors, none of them following a link, and the file is opened, created and renamed
relative to the last one: a link swapped in is refused (`PathMoved`), not followed.

Where the platform has no `dir_fd` (Windows), the plain path functions are used instead.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path

from .files import PathRefused, atomic_write, read_regular_file

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_LINK_ERRORS = (errno.ELOOP, errno.ENOTDIR, errno.EMLINK)
"""What opening a link with O_NOFOLLOW and O_DIRECTORY fails with (by platform)."""


class PathMoved(PathRefused):
    """A directory on the resolved path was replaced by a link after it was resolved."""


def descriptors_supported() -> bool:
    """Whether this platform opens, creates and renames relative to a directory descriptor."""
    # os.replace takes the same descriptors as os.rename but is not listed in supports_dir_fd
    return {os.open, os.mkdir, os.rename, os.stat, os.unlink} <= os.supports_dir_fd and bool(_NOFOLLOW and _DIRECTORY)


def open_directory(root: Path, directory: Path, *, create: bool = False) -> int:
    """A descriptor of `directory` (resolved, at or below `root`), reached from the root without
    following any link; with `create`, the missing directories are made on the way. The caller
    closes it. `PathMoved` when a name on the way is no longer a directory. A missing root is
    made too (a toolset's `path` need not exist before its first write)."""
    real_root = Path(os.path.realpath(root))
    if create:
        real_root.mkdir(parents=True, exist_ok=True)
    fd = os.open(real_root, os.O_RDONLY | _DIRECTORY)
    try:
        for name in directory.relative_to(real_root).parts:
            if create:
                try:
                    os.mkdir(name, 0o777, dir_fd=fd)
                except FileExistsError:
                    pass
            try:
                step = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                if exc.errno in _LINK_ERRORS and _is_link(name, fd):
                    shown = directory.relative_to(real_root).as_posix()
                    raise PathMoved(f"{shown!r} changed while in use (a directory on the way was replaced by a "
                                    "link); nothing was done") from None
                raise
            os.close(fd)
            fd = step
    except BaseException:
        os.close(fd)
        raise
    return fd


def _is_link(name: str, directory: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=directory, follow_symlinks=False).st_mode)
    except OSError:
        return False


def write_resolved(root: Path, target: Path, data: bytes) -> None:
    """Write `data` to `target` (resolved by `confine`, below `root`) atomically, as
    `files.atomic_write` does, through a descriptor of its directory: a temporary file created
    beside it, flushed, then renamed over it (a link at `target` itself is replaced, not
    followed). An existing file keeps its mode; missing directories are made."""
    if not descriptors_supported():
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(target, data)
        return
    directory = open_directory(root, target.parent, create=True)
    try:
        try:
            existing = os.stat(target.name, dir_fd=directory, follow_symlinks=False)
        except FileNotFoundError:
            existing = None
        tmp = f".{target.name[:200]}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o666, dir_fd=directory)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                if existing is not None and stat.S_ISREG(existing.st_mode):
                    os.fchmod(f.fileno(), stat.S_IMODE(existing.st_mode))
                os.fsync(f.fileno())
            os.replace(tmp, target.name, src_dir_fd=directory, dst_dir_fd=directory)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=directory)
            except OSError:
                pass
            raise
    finally:
        os.close(directory)


def read_resolved(root: Path, target: Path, limit: int) -> bytes:
    """At most `limit` bytes of the regular file `target` (resolved, below `root`), opened through a
    descriptor of its directory without following a link (`files.read_regular_file`'s checks)."""
    if not descriptors_supported():
        return read_regular_file(target, limit)
    directory = open_directory(root, target.parent)
    try:
        return read_regular_file(Path(target.name), limit, dir_fd=directory)
    finally:
        os.close(directory)

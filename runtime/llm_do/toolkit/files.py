"""Files for tools and for llm-do itself: path confinement below a root, and the one atomic writer.

Confinement (the filesystem and shell toolsets, attachments, created workers): a model names files with strings; every such string goes through `confine` before anything touches
the disk. The path is judged twice: lexically (no absolute forms, no `..` climbing out) and as the
kernel would follow it (every existing symlink resolved), so neither `../x` nor `link/x` with
`link -> /etc` reaches outside the root. Messages are one line, written for the model.

Writing (`atomic_write`, `write_new`): bundles, project files, chat threads, batch results and
files a tool writes all go through one writer: a temporary file beside the target, flushed to
disk (fsync), then renamed (or linked) into place, keeping an existing file's mode.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Sequence
from pathlib import Path, PurePosixPath, PureWindowsPath

from llm_do.bundle.errors import Refused
from llm_do.bundle.regular_files import IrregularFile as IrregularFile  # the tools' reads refuse alike


class PathRefused(Refused, ValueError):
    """A path the toolset will not touch; the message is shown to the model as is."""


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


def read_regular_file(path: Path, limit: int | None, *, dir_fd: int | None = None) -> bytes:
    """At most `limit` bytes (None: all) of the regular file at `path` (relative to `dir_fd` when
    given), or `IrregularFile`: what a tool reads.

    The file is opened without blocking and without following a final link, then checked on the
    open descriptor: a FIFO put in its place after a check cannot hang the reader, a link swapped in
    cannot redirect it. (llm-do's own inputs, which may be links inside a project, are read by
    `llm_do.bundle.regular_files`.)"""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags, dir_fd=dir_fd)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise IrregularFile(f"{path} is not a regular file")
        return f.read() if limit is None else f.read(limit)


def atomic_write(path: Path, data: bytes, *, remove_stale: bool = False, mode: int | None = None) -> None:
    """Write `data` to `path` through a temporary file in the same directory, flushed to disk and
    renamed over `path`: readers see the old content or the new, never a torn file, and a failure
    leaves the old one in place. An existing file keeps its mode; a new one gets the usual one
    (0666 less the umask). With `mode` (0o600 for what holds tool results), the file has that
    mode whatever it had, from before it is in place.

    The temporary file's name carries the writer's process id (`.NAME.PID.RANDOM.tmp`): a write
    killed half-way leaves it behind, and with `remove_stale` the next write to the same path
    removes it once that process is gone (`remove_stale_temporaries`)."""
    if remove_stale:
        remove_stale_temporaries(path)
    if mode is None and path.exists():
        mode = stat.S_IMODE(path.stat().st_mode)
    tmp = _write_temporary(path, data, mode)
    try:
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_new(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write `data` to `path` atomically, never replacing a file: `FileExistsError` when one is
    there. The temporary file (written as `atomic_write` writes it, with `mode` when given) is
    linked into place, so a reader sees no file or the whole of it; the parent directories are
    made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = _write_temporary(path, data, mode)
    try:
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise
        except OSError:  # a filesystem without hard links: check, then rename (atomic, but not exclusive)
            if path.exists():
                raise FileExistsError(path) from None
            os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _write_temporary(path: Path, data: bytes, mode: int | None = None) -> Path:
    """`data` in a new file `.NAME.PID.RANDOM.tmp` beside `path` (created exclusively, so with the
    mode 0666 less the umask, or `mode` less the umask), on disk when this returns."""
    tmp = path.with_name(f".{path.name[:200]}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666 if mode is None else mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


def private_folder(path: Path) -> Path:
    """`path` as a folder only this user can enter (0700): made so (its missing parents the usual
    way), or narrowed to it when it is there already (a folder an older llm-do made 0755). For
    llm-do's own folders: `.llm-do/` and what is in it, the config folder."""
    try:
        path.mkdir(mode=0o700, parents=True)
    except FileExistsError:
        pass
    if stat.S_IMODE(path.stat().st_mode) != 0o700:
        os.chmod(path, 0o700)
    return path


def remove_stale_temporaries(path: Path) -> list[str]:
    """Delete the temporary files that killed writes of `path` left (`.NAME.PID.RANDOM.tmp` whose
    process has ended, or `.NAME.RANDOM.tmp` from before the id was in the name); their names."""
    from .processes import pid_alive

    prefix = f".{path.name[:200]}."
    removed: list[str] = []
    try:
        names = os.listdir(path.parent)
    except OSError:
        return removed
    for name in names:
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        writer = name[len(prefix):-len(".tmp")].split(".")
        # this process writes one file at a time: an older temporary of ours is a leftover
        if len(writer) == 2 and writer[0].isdigit() and int(writer[0]) != os.getpid() and pid_alive(int(writer[0])):
            continue
        try:
            os.unlink(path.parent / name)
            removed.append(name)
        except OSError:
            pass
    return removed

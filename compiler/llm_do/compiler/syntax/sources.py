"""The source map: every file a build read, by its path relative to the project root.

Each file is read once, normalized (no BOM, LF line endings) and hashed; the bundle's `sources`
and `build --check` are made from these records.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal

from llm_do.bundle import regular_files
from llm_do.bundle.canonical import normalize_source, sha256_hex, tagged
from llm_do.bundle.errors import LlmDoError

from .. import codes
from .limits import MAX_FILE_BYTES

SourceKind = Literal["manifest", "worker", "python", "template", "file"]


@dataclass(frozen=True)
class SourceFile:
    path: str
    text: str
    sha256: str
    kind: SourceKind


class NotText(LlmDoError, ValueError):
    pass


class OutsideRoot(LlmDoError, ValueError):
    pass


class Unreadable(LlmDoError, ValueError):
    """A file the compiler refuses to read; `code` is the diagnostic that says so."""

    code: ClassVar[codes.Rule]


class NotRegularSource(Unreadable):
    """A project file that is a pipe, device, socket or directory."""

    code = codes.NOT_A_REGULAR_FILE


class TooLarge(Unreadable):
    code = codes.LIMIT_EXCEEDED


def _too_large(size: int, limit: int) -> str:
    return f"larger than the {limit // (1024 * 1024)} MiB a project file may have ({size} bytes)"


def read_regular_file(path: str, limit: int | None = MAX_FILE_BYTES) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them (None: no limit), read
    without waiting (`llm_do.bundle.regular_files`).

    Raises NotRegularSource for a FIFO, device, socket or directory, TooLarge past the limit, and
    OSError (a symlink loop, a missing file)."""
    try:
        return regular_files.read_regular_file(path, limit)
    except regular_files.IrregularFile as exc:
        raise NotRegularSource(str(exc)) from None
    except regular_files.FileTooLarge as exc:
        raise TooLarge(_too_large(exc.size, exc.limit)) from None


def decode(data: bytes) -> str:
    try:
        return normalize_source(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotText(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def decode_lines(data: bytes) -> list[str]:
    """The lines of a file as positions count them: normalized, split at LF only (not at U+2028
    and the other breaks `str.splitlines` knows), undecodable bytes replaced."""
    return normalize_source(data).decode("utf-8", "replace").split("\n")


def normalized(rel: str) -> str:
    """`rel` with `.` and `..` folded and forward slashes: the key a file has in the source map."""
    return posixpath.normpath(rel.replace("\\", "/"))


def lexically_confined(rel: str) -> str:
    """`rel` normalized, if as written it stays inside the root; else OutsideRoot."""
    if not rel or "\x00" in rel:
        raise OutsideRoot("an empty path" if not rel else "a path with a NUL byte")
    if os.path.isabs(rel) or rel.startswith(("~", "\\", "/")) or (len(rel) > 1 and rel[1] == ":"):
        raise OutsideRoot(f"'{rel}' is absolute")
    norm = normalized(rel)
    if norm == ".." or norm.startswith("../"):
        raise OutsideRoot(f"'{rel}' leads outside the project root")
    return norm


def confined(root: Path, rel: str, real_dirs: dict[str, str] | None = None) -> str:
    """`root/rel` if it stays inside the root after normalization and symlinks; else OutsideRoot.

    `root` must already be resolved. `real_dirs` caches resolved directories for one build, so
    thousands of files in a few directories cost a few `realpath` calls, not thousands. Strings,
    not pathlib, on this path: it runs once per file.
    """
    norm = lexically_confined(rel)
    top = str(root)
    path = os.path.join(top, norm)
    parent, name = os.path.split(path)
    real_parent = real_dirs.get(parent) if real_dirs is not None else None
    if real_parent is None:
        real_parent = os.path.realpath(parent)
        if real_dirs is not None:
            real_dirs[parent] = real_parent
    real = os.path.join(real_parent, name)
    if os.path.islink(real):
        real = os.path.realpath(real)
    if real != top and not real.startswith(top + os.sep):
        raise OutsideRoot(f"'{rel}' leads outside the project root (through a symlink)")
    return path


def relative(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


@dataclass
class SourceMap:
    root: Path
    files: dict[str, SourceFile] = field(default_factory=dict)
    real_dirs: dict[str, str] = field(default_factory=dict)
    """Directories already resolved during this build (see `confined`)."""
    also_read: dict[str, str] = field(default_factory=dict)
    """Files the build read that are no sources of the bundle (a project module the code
    fingerprints read), by source hash: a build record checks them too."""
    looked_for: set[str] = field(default_factory=set)
    """Every path inside the root a read asked for, found or not (a template searched in three
    places, an `include ... ignore missing`): where a file added later could change the build,
    which a build record must not leave out of its listing (`build.state_left_out`)."""

    def confined(self, rel: str) -> str:
        return confined(self.root, rel, self.real_dirs)

    def read(self, rel: str, kind: SourceKind) -> SourceFile:
        """Read a file of the project (once). Raises OSError, NotText, OutsideRoot or Unreadable."""
        path = self.confined(rel)
        rel = normalized(rel)
        self.looked_for.add(rel)
        found = self.files.get(rel)
        if found is not None:
            return found
        text = decode(read_regular_file(path))
        source = SourceFile(rel, text, tagged(sha256_hex(text.encode())), kind)
        self.files[rel] = source
        return source

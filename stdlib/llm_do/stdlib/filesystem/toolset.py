"""The filesystem toolsets at run time: read, write and list text files below one root.

Every path goes through `toolkit.files.confine`; every refusal is a `ToolFailed` the model reads and
recovers from, never an exception that ends the run.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath

from pydantic_ai.exceptions import ToolFailed

from llm_do.toolkit.files import (
    IrregularFile,
    PathRefused,
    check_suffix,
    confine,
    relative,
    suffix_allowed,
    touches_git_dir,
)
from llm_do.toolkit.protected import READ, WRITE
from llm_do.toolkit.resolved_io import PathMoved, read_resolved, write_resolved

from ..base import StdlibToolset
from .descriptor import DEFAULT_MAX_CHARS, FilesystemSettings
from .listing import PatternProblem, compile_pattern, walk

LIST_LIMIT = 1000
"""Most paths `list_files` returns; past it the model is told to narrow the listing."""


class FilesystemToolset(StdlibToolset):
    """`read_file`, `write_file` (writable variants only) and `list_files` below `base / settings.path`."""

    settings: FilesystemSettings

    def read_file(self, path: str, offset: int = 0, max_chars: int = DEFAULT_MAX_CHARS) -> str:
        target = self._confine(path)
        self._check_suffix(path, target)
        self.check_protected(path, READ)
        mode = self._stat(path, target).st_mode
        if stat.S_ISDIR(mode):
            raise ToolFailed(f"{path!r} is a directory; use list_files to see its files")
        limit = self.settings.max_read_bytes
        try:
            data = read_resolved(self.root, target, limit + 1)
        except IrregularFile:
            raise ToolFailed(f"{path!r} is not a regular file") from None
        except PathMoved as e:
            raise ToolFailed(str(e)) from None
        except OSError as e:
            raise ToolFailed(f"cannot read {path!r}: {e.strerror or e}") from None
        if len(data) > limit:
            raise ToolFailed(f"{path!r} is larger than {limit} bytes, the most this toolset reads")
        text = data.decode("utf-8", errors="replace")
        total = len(text)
        if offset > total:
            raise ToolFailed(f"offset {offset} is past the end of {path!r}, which has {total} characters")
        end = min(total, offset + max_chars)
        chunk = text[offset:end]
        if end < total:
            chunk += f"\n[truncated: showing characters {offset}-{end} of {total}; call again with offset={end}]"
        return chunk

    def write_file(self, path: str, content: str) -> str:
        if self.descriptor.tool("write_file") is None:
            raise ToolFailed(f"{self.descriptor.name} is read-only")
        target = self._confine(path)
        self._check_suffix(path, target)
        if touches_git_dir(self.root, target):
            raise ToolFailed(f"{path!r} is inside a .git directory, which this toolset does not write")
        self.check_protected(path, WRITE)
        if os.path.isdir(target):
            raise ToolFailed(f"{path!r} is a directory")
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError:
            raise ToolFailed("content is not valid text (it has a lone surrogate)") from None
        limit = self.settings.max_write_bytes
        if len(data) > limit:
            raise ToolFailed(f"content is {len(data)} bytes, more than the {limit} bytes this toolset writes")
        try:
            write_resolved(self.root, target, data)  # through what `confine` resolved: a link swapped in is refused
        except PathMoved as e:
            raise ToolFailed(str(e)) from None
        except NotADirectoryError as e:  # a file where a directory on the way should be
            raise ToolFailed(f"cannot create the directory of {path!r}: {e.strerror or e}") from None
        except OSError as e:
            raise ToolFailed(f"cannot write {path!r}: {e.strerror or e}") from None
        return f"wrote {len(data)} bytes to {relative(self.root, target)}"

    def list_files(self, path: str = ".", pattern: str = "**/*") -> str:
        directory = self._confine(path)
        self.check_protected(path, READ)
        if not stat.S_ISDIR(self._stat(path, directory).st_mode):
            raise ToolFailed(f"{path!r} is not a directory")
        _check_pattern(pattern)
        try:
            compiled = compile_pattern(pattern)
        except PatternProblem as e:
            raise ToolFailed(f"invalid pattern {pattern!r}: {e}") from None
        try:
            walked = walk(str(directory), compiled, skip_paths=frozenset(self.protected.folders_below(str(directory))))
        except OSError as e:
            raise ToolFailed(f"cannot list {path!r}: {e.strerror or e}") from None
        found = sorted(self._listed(walked.found))
        stopped = f"[listing stopped {walked.stopped}; narrow the path or pattern]" if walked.stopped else None
        if not found:
            return stopped or f"no files match {pattern!r} in {path!r}"
        if len(found) > LIST_LIMIT:
            cut = f"[list cut: showing {LIST_LIMIT} of {len(found)} files; narrow the path or pattern]"
            found = [*found[:LIST_LIMIT], cut]
        return "\n".join([*found, stopped] if stopped else found)

    def reads(self, name: str, path: str) -> dict[str, object] | None:
        """`read_file`'s normalized arguments for the file at `path` (absolute, resolved) when it
        lies below the root with an allowed suffix: what an attachment of it is judged as."""
        real_root = os.path.realpath(self.root)
        if name != "read_file" or not (path == real_root or path.startswith(real_root + os.sep)):
            return None
        if not suffix_allowed(os.path.basename(path), self.settings.allowed_suffixes):
            return None
        if self.protected.refusal(self.root, path, READ) is not None:
            return None
        return self.normalize_args(name, {"path": relative(self.root, Path(path))})

    def _listed(self, candidates: list[tuple[str, bool]]) -> Iterator[str]:
        """The candidates that are regular files inside the root with an allowed suffix; a link
        counts when the file it leads to is one (and its name has an allowed suffix too)."""
        allowed = self.settings.allowed_suffixes
        root = str(self.root)
        for candidate, is_link in candidates:
            name = os.path.basename(candidate)
            if is_link:
                real = os.path.realpath(candidate)
                if not real.startswith(root + os.sep) or not os.path.isfile(real):
                    continue
                if not suffix_allowed(os.path.basename(real), allowed):
                    continue
            if suffix_allowed(name, allowed):
                yield PurePosixPath(*Path(candidate).relative_to(self.root).parts).as_posix()

    def _confine(self, path: str) -> Path:
        try:
            return confine(self.root, path)
        except PathRefused as e:
            raise ToolFailed(str(e)) from None

    def _check_suffix(self, path: str, target: Path) -> None:
        """Both the name the model used and the file it resolves to must have an allowed suffix."""
        try:
            check_suffix(PurePath(path).name, self.settings.allowed_suffixes, path)
            check_suffix(target.name, self.settings.allowed_suffixes, path)
        except PathRefused as e:
            raise ToolFailed(str(e)) from None

    @staticmethod
    def _stat(path: str, target: Path) -> os.stat_result:
        try:
            return target.stat()
        except FileNotFoundError:
            raise ToolFailed(f"{path!r} does not exist") from None
        except OSError as e:
            raise ToolFailed(f"cannot access {path!r}: {e.strerror or e}") from None


def _check_pattern(pattern: str) -> None:
    """A glob may not climb out of the listed directory or name an absolute place."""
    if "\x00" in pattern:
        raise ToolFailed("pattern contains a NUL byte")
    if pattern.startswith(("/", "\\", "~")) or PureWindowsPath(pattern).drive:
        raise ToolFailed(f"pattern {pattern!r} must be relative to the listed directory")
    if ".." in pattern.replace("\\", "/").split("/"):
        raise ToolFailed(f"pattern {pattern!r} may not contain '..'")

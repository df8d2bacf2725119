"""What the introspection child read of the project, seen through an audit hook: every file it
opened for reading (the import system's sources and bytecode, and data that module-level code
reads) and every folder it listed (the import system lists a folder to find modules in it). The
introspection cache uses an answer again only while these are as they were.

An audit hook cannot be removed; the child is a short-lived process that installs it once.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


class ProjectReads:
    """Paths under `root` (relative, '/'-separated) that the process read or listed, once `install`ed."""

    def __init__(self, root: Path) -> None:
        self.root = str(root)
        self._inside = self.root + os.sep
        self.files: set[str] = set()
        self.folders: set[str] = set()

    def install(self) -> None:
        sys.addaudithook(self._hear)

    def _hear(self, event: str, args: tuple[object, ...]) -> None:
        if event == "open":
            path, mode, flags = args
            if _reads(mode, flags):
                rel = self._relative(path)
                if rel is not None:  # bytecode stands for its source (the import checks one against the other)
                    self.files.add(_source_of(rel) if "__pycache__" in rel.split("/") else rel)
        elif event in ("os.listdir", "os.scandir"):
            rel = self._relative(args[0] if args else ".")
            if rel is not None:
                self.folders.add(rel)

    def _relative(self, path: object) -> str | None:
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        elif isinstance(path, os.PathLike):
            path = os.fspath(path)
        if not isinstance(path, str):  # a file descriptor
            return None
        real = os.path.realpath(path or ".")
        if real == self.root:
            return "."
        if not real.startswith(self._inside):
            return None
        return Path(real).relative_to(self.root).as_posix()


def _reads(mode: object, flags: object) -> bool:
    if isinstance(mode, str):
        return not any(c in mode for c in "wax+")
    return isinstance(flags, int) and not flags & _WRITE_FLAGS


def _source_of(rel: str) -> str:
    try:
        return Path(importlib.util.source_from_cache(rel)).as_posix()
    except ValueError:
        return rel

"""What the introspection child read of the project, seen through an audit hook: every file it
opened for reading (the import system's sources and bytecode, and data that module-level code
reads) and every folder it listed (the import system lists a folder to find modules in it); and
the environment variables it read. The introspection cache uses an answer again only while these
are as they were.

The hook also refuses to open a project file that is not a regular file (a named pipe, a device,
a socket, or a link to one): reading one could wait forever or never end. The open fails with
`IrregularFile` naming the file, which the import system treats as unreadable bytecode
(it compiles the source instead) and user code meets as any OSError.

An audit hook cannot be removed; the child is a short-lived process that installs it once.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from llm_do.bundle.regular_files import IrregularFile, special_file
from llm_do.provenance.import_checks import ALL_VARIABLES

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
"""Among the variables read: the environment was listed (its names iterated), so its set of names counts."""


class ProjectReads:
    """Paths under `root` (relative, '/'-separated) that the process read or listed; and what the
    project's code read besides (`by_the_project`): files and folders outside the project, and
    environment variables; once `install`ed."""

    def __init__(self, root: Path) -> None:
        self.root = str(root)
        self._inside = self.root + os.sep
        self.files: set[str] = set()
        self.folders: set[str] = set()
        self.outside: set[str] = set()
        """Files and folders outside the project (resolved) that the project's code opened or listed."""
        self.variables: set[str] = set()

    def install(self) -> None:
        sys.addaudithook(self._hear)
        os.environ = _listening_environ(os.environ, self._heard_variable)  # noqa: B003 - the same variables, read through a mapping that listens

    def by_the_project(self, depth: int) -> bool:
        """Whether the code `depth` frames up the stack runs for the project: a frame of a project
        file is on the stack, with neither a module outside the project being imported nor the
        import system at work above it. What a library does while it is imported, and what the
        import system reads (seen by the other checks), are left out: a forked child has the
        libraries the server preloaded imported already, and answers as a fresh child does."""
        frame: FrameType | None = sys._getframe(depth + 1)
        while frame is not None:
            code = frame.f_code
            if code.co_filename.startswith(self._inside):
                return True
            if code.co_name == "<module>" or code.co_filename.startswith("<frozen importlib"):
                return False
            frame = frame.f_back
        return False

    def _heard_variable(self, name: str) -> None:
        if self.by_the_project(2):  # above: the listening mapping's method, then its caller
            self.variables.add(name)

    def _hear(self, event: str, args: tuple[object, ...]) -> None:
        if event == "open":
            path, mode, flags = args
            if _reads(mode, flags):
                rel = self._relative(path)
                if rel is not None:  # bytecode stands for its source (the import checks one against the other)
                    _refuse_irregular(path, rel)
                    self.files.add(_source_of(rel) if "__pycache__" in rel.split("/") else rel)
                else:
                    self._outside(path)
        elif event in ("os.listdir", "os.scandir"):
            path = args[0] if args else "."
            rel = self._relative(path)
            if rel is not None:
                self.folders.add(rel)
            else:
                self._outside(path or ".")

    def _outside(self, path: object) -> None:
        """Keep `path`, outside the project, when the project's code opened or listed it (the
        caller of the call the hook heard: two frames up)."""
        if isinstance(path, (str, bytes, os.PathLike)) and self.by_the_project(2):
            self.outside.add(os.path.realpath(os.fsdecode(path)))

    def _relative(self, path: object) -> str | None:
        """`path` relative to the root: as written when it is below the root (a link below the
        root is the project's, whatever it points to), else as resolved; None outside the project."""
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        elif isinstance(path, os.PathLike):
            path = os.fspath(path)
        if not isinstance(path, str):  # a file descriptor
            return None
        for place in (os.path.abspath(path or "."), os.path.realpath(path or ".")):
            if place == self.root:
                return "."
            if place.startswith(self._inside):
                return Path(place).relative_to(self.root).as_posix()
        return None


def _refuse_irregular(path: Any, rel: str) -> None:
    """Raise `IrregularFile` when the project file `path` is neither a regular file nor a folder
    (opening a folder fails by itself)."""
    problem = special_file(path)
    if problem is not None:
        raise IrregularFile(f"{rel} is {problem}")


def _listening_environ(real: Any, heard: Callable[[str], None]) -> Any:
    """`real` (os.environ) read through a mapping that calls `heard` with the name of every
    variable read, and with `ALL_VARIABLES` when the names are iterated."""

    class Listening(type(real)):  # type: ignore[misc]
        def __getitem__(self, key: str) -> str:  # os.environ's: str values
            heard(key)
            value: str = super().__getitem__(key)
            return value

        def __contains__(self, key: object) -> bool:
            heard(str(key))
            found: bool = super().__contains__(key)
            return found

        def __iter__(self) -> Any:
            heard(ALL_VARIABLES)
            return super().__iter__()

    return Listening(real._data, real.encodekey, real.decodekey, real.encodevalue, real.decodevalue)


def _reads(mode: object, flags: object) -> bool:
    if isinstance(mode, str):
        return not any(c in mode for c in "wax+")
    return isinstance(flags, int) and not flags & _WRITE_FLAGS


def _source_of(rel: str) -> str:
    try:
        return Path(importlib.util.source_from_cache(rel)).as_posix()
    except ValueError:
        return rel

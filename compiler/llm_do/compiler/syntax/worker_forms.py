"""The two forms of a worker: a single file `NAME.worker`, or a directory `NAME/worker.worker` with
its own Python (`tools.py`) and templates beside it. Pure functions of relative paths."""

from __future__ import annotations

import posixpath

DIRECTORY_WORKER_FILE = "worker.worker"
"""The file that makes its directory a worker named after the directory."""
DIRECTORY_TOOLS_FILE = "tools.py"
"""A directory worker's own Python: its tools and toolsets, for that worker only."""


def worker_directory(rel: str) -> str | None:
    """The directory a `worker.worker` file makes a worker (`workers/formatter`), or None for a
    single-file worker (`worker.worker` at the root is one: the root is the project, not a worker)."""
    directory, name = posixpath.split(rel)
    return directory if name == DIRECTORY_WORKER_FILE and directory not in ("", ".") else None


def default_worker_name(rel: str) -> str:
    """The name a worker file gives when its front matter has no `name`: the directory's name for
    a directory worker, else the file stem."""
    directory = worker_directory(rel)
    if directory is not None:
        return posixpath.basename(directory)
    return posixpath.splitext(posixpath.basename(rel))[0]


def directory_tools_file(rel: str) -> str | None:
    """Where a directory worker's own Python would be (`workers/formatter/tools.py`)."""
    directory = worker_directory(rel)
    return posixpath.join(directory, DIRECTORY_TOOLS_FILE) if directory is not None else None


"""Every path a case names is a file of the project: its `cassette` and `script` (relative to the case
file), the Python its expectations name (`schema`, `predicate`: `FILE.py:NAME`, relative to the
project) and the `attachments` of its input (relative to the project, as a run reads them). A path
that is absolute, climbs out with `..`, or leads out through a link is refused (exit 2) at the file
and line that name it: a case file cannot make `llm-do test` import, read or write outside the
project (`--record` writes the cassette a case names)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .cases import Case


def is_confined(root: Path, base: Path, written: str) -> bool:
    """Whether `written`, relative to `base` (a folder of the project at `root`), stays in the
    project, links followed: not absolute (nor a drive or UNC path), not out through `..`."""
    if not written or PurePosixPath(written).is_absolute() or PureWindowsPath(written).anchor or "\0" in written:
        return False
    top = os.path.realpath(root)
    target = os.path.realpath(os.path.join(base, written))
    return target == top or target.startswith(top.rstrip(os.sep) + os.sep)


def named_paths(case: Case) -> Iterator[tuple[tuple[Any, ...], str, str]]:
    """(where in the case, as a key path; what it is; the path as written) of each path the case
    names; `what` is `case` for paths relative to the case file, `project` for the others."""
    for key in ("cassette", "script"):
        written = getattr(case, key)
        if written is not None:
            yield (key,), "case", written
    output = case.expect.output
    if output is not None:
        for key, ref in (("schema", output.schema_ref), ("predicate", output.predicate)):
            if ref is not None:
                yield ("expect", "output", key), "project", ref.rpartition(":")[0] or ref
    if isinstance(case.input, dict) and isinstance(case.input.get("attachments"), list):
        for index, item in enumerate(case.input["attachments"]):
            if isinstance(item, str):
                yield ("input", "attachments", index), "project", item


def outside(case: Case, file: Path, root: Path) -> tuple[tuple[Any, ...], str] | None:
    """The first path of `case` (in the case file `file`) outside the project at `root`: where it is
    in the case (a key path) and what is wrong with it; None when all are inside."""
    for keys, relative_to, written in named_paths(case):
        base = file.parent if relative_to == "case" else root
        if not is_confined(root, base, written):
            said = "relative to the case file" if relative_to == "case" else "relative to the project"
            return keys, (f"{'.'.join(map(str, keys))}: {written!r} is not a file of the project (a case names files "
                          f"inside it, {said})")
    return None

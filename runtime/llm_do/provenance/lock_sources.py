"""Whether a lock is the build of the sources beside it: what a run decides before it runs anything.

The digest is a checksum anyone can recompute, so a lock proves nothing about where it came from.
Where the project is present (its manifest or one of its worker files, as the lock's `sources`
name them, under its `root`), a lock runs only if it is what a build of those sources writes. The
cheap answer comes from the build records (`build_record`): a record kept for these very bytes,
signed with the user's key, whose inputs all still hold, says "built from these sources"; one
whose worker, template or manifest files changed says which. Anything else (no record: the lock
was built elsewhere, edited, or the cache is off) is for a compile to answer (`Comparison`, made by
the compiler's `lock_check`). A lock whose project is absent (shipped alone) runs as before; who
built it is what its signature says (`signing`).

The answer never depends on the cache: a record only saves the compile that would say the same.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from llm_do.bundle.errors import REBUILD, BundleRefused

from .build_record import build_records, changed_files, read_record

PROJECT_KINDS = ("manifest", "worker")
"""The sources whose presence makes a lock's project present: project.json and the worker files."""
MANIFEST_NAME = "project.json"
SHOWN = 5
"""Differences named in one line; more are counted."""
VERSION_FIELDS = ("compiler", "packages")
"""Header fields a lock may differ in from a build now and still be the build of its sources: the
llm-do and the distributions that built it (`build --check` still reports them)."""

Verdict = Literal["alone", "built", "stale", "unknown"]


@dataclass(frozen=True)
class RecordedAnswer:
    """What the records say of a lock without compiling: its project is absent (`alone`), it is the
    build of the sources present (`built`), it is not because these sources changed since
    (`stale`), or the records cannot tell (`unknown`: compile and compare)."""

    verdict: Verdict
    changed: tuple[str, ...] = ()
    project: Path | None = None
    """The project the lock must be the build of (`project_of`): what a compile compares it with."""


@dataclass(frozen=True)
class Comparison:
    """A lock against the build of the sources beside it: what differs (nothing: it is their build),
    and a note when it differs only in `VERSION_FIELDS`."""

    differences: tuple[str, ...] = ()
    note: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"differences": list(self.differences), "note": self.note}

    @classmethod
    def from_json(cls, value: Any) -> Comparison:
        """The comparison a child process printed; ValueError for anything else."""
        if not isinstance(value, dict) or not isinstance(value.get("differences"), list) \
                or not all(isinstance(d, str) for d in value["differences"]) or not isinstance(value.get("note"), (str, type(None))):
            raise ValueError("not a lock comparison")
        return cls(tuple(value["differences"]), value["note"])


def project_of(lock: Path, root: Path, sources: Mapping[str, Any]) -> Path | None:
    """The project the lock at `lock` must be the build of (what a build compiles: a manifest, or a
    folder of worker files), None when there is none beside it (the lock is deployed alone).

    It is the one the lock names, when its manifest or a worker file of it is under its `root`;
    else a project in the lock's own folder (`project.json`, or worker files): a lock that names a
    `root` or sources that are not there does not make its folder's project absent."""
    named = [(rel, entry.get("kind")) for rel, entry in sources.items()
             if isinstance(entry, Mapping) and entry.get("kind") in PROJECT_KINDS]
    if any(os.path.lexists(os.path.join(root, rel)) for rel, _ in named):
        manifest = next((rel for rel, kind in named if kind == "manifest" and os.path.lexists(os.path.join(root, rel))), None)
        return root / manifest if manifest is not None else root
    folder = lock.parent
    if (folder / MANIFEST_NAME).is_file():
        return folder / MANIFEST_NAME
    if any(folder.glob("*.worker")):
        return folder
    return None


def recorded_answer(lock: Path, data: bytes, root: Path, sources: Mapping[str, Any]) -> RecordedAnswer:
    """What the user's build records say of the lock `data` read from `lock` (`root`: its project
    root, `sources`: its `sources`). Standard library only: the records, a listing of the tree, a
    `stat` of each recorded file, hashes of those whose stamp changed."""
    project = project_of(lock, root, sources)
    if project is None:
        return RecordedAnswer("alone")
    records = build_records()
    body = read_record(records, root, lock, data) if records is not None else None
    changed = changed_files(body, root, lock) if body is not None else None
    if changed is None:
        return RecordedAnswer("unknown", project=project)
    if not changed:
        return RecordedAnswer("built", project=project)
    if all(rel in sources for rel in changed):  # each changes its own hash in `sources`: a build now differs
        return RecordedAnswer("stale", tuple(sorted(changed)), project)
    return RecordedAnswer("unknown", project=project)  # a file the build read that no source names: only a build tells


def recorded_comparison(answer: RecordedAnswer) -> Comparison | None:
    """The comparison the records answer, None when a compile must."""
    if answer.verdict == "unknown":
        return None
    return Comparison(tuple(f"changed: {rel}" for rel in answer.changed))


def named(differences: tuple[str, ...]) -> str:
    shown = "; ".join(differences[:SHOWN])
    return shown + (f"; and {len(differences) - SHOWN} more" if len(differences) > SHOWN else "")


def refusal(lock: Path, comparison: Comparison, override: str) -> BundleRefused:
    """The refusal of a lock that is not the build of its sources; `override`: how to run it anyway."""
    return BundleRefused(f"{lock}: refused: it is stale, not the build of the sources beside it ({named(comparison.differences)}); "
                         f"{REBUILD} to update it, or {override} to run it as it is")


def as_built_note(lock: Path, comparison: Comparison, override: str) -> str:
    """What a run of a lock that is not the build of its sources says when `override` told it to
    run anyway (the CLI's note on stderr, the Python API's `StaleLockWarning`)."""
    return (f"note: {lock} is stale, not the build of the sources beside it ({named(comparison.differences)}); "
            f"it runs as built ({override}): {REBUILD} to update it")


def obey(lock: Path, comparison: Comparison, *, as_built: bool, override: str) -> str | None:
    """The rule for a run: nothing when the lock is the build of its sources (or a note, when only
    `VERSION_FIELDS` differ); with differences, `refusal` unless `as_built`, then `as_built_note`."""
    if not comparison.differences:
        return comparison.note
    if not as_built:
        raise refusal(lock, comparison, override)
    return as_built_note(lock, comparison, override)

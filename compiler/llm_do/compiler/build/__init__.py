"""A lock made the fastest way that gives a clean build's bytes, above the pipeline that compiles
(`build_lock`): recalled from a build record (`lock_check.compile_recorded` keeps one), rebuilt
from the last lock after edits local to a worker (`local_edits`, `front_matter_edits`), or
compiled; `write_lock`, which writes it as `llm-do build` does; `build --check` (`lock_check`); and a lint answered from its record or compiled and
recorded (`lint_project`, `lint_record`).

Imports only the standard library (and the errors module below it) here: `llm-do build` of an
unchanged project loads no stage.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from llm_do.bundle.errors import InputProblem

if TYPE_CHECKING:
    from ..diagnostics import Diagnostic
    from ..pipeline import CompileResult

How = Literal["recalled", "rebuilt", "compiled"]
LintHow = Literal["recalled", "compiled"]


@dataclass(frozen=True)
class BuildOutcome:
    """How a lock was made and what its build says, as a compile would have said it."""

    how: How
    root: Path
    """The project's directory."""
    diagnostics: list[Diagnostic]
    workers: int
    bundle: bytes | None
    """The lock's bytes to write: None when recalled (the lock holds them) or when the compile failed."""
    result: CompileResult | None = None
    """The compile's result (`compiled` only)."""
    keep: Callable[[], None] = field(default=lambda: None, repr=False)
    """To call once `bundle` is written (`write_lock` does): a rebuilt lock is recorded for the next build."""

    @property
    def failed(self) -> bool:
        """The build has errors: there is no lock to write, and the old one stays."""
        return self.how != "recalled" and self.bundle is None


def build_lock(project: Path, lock: Path, *, cache: bool = True) -> BuildOutcome:
    """The lock at `lock` for the project at `project` (a directory or its project.json), recalled
    or rebuilt when a build record allows it (`cache`), else compiled and recorded. Raises
    `ProjectNotFound` when the path names no project and OSError when a file cannot be read."""
    if cache:
        recalled = recall_lock(project, lock)
        if recalled is not None:
            return recalled
    from .lock_check import compile_recorded

    result = compile_recorded(project, lock, cache=cache)
    workers = len(result.resolved.workers) if result.resolved else 0
    return BuildOutcome("compiled", result.loaded.root, result.diagnostics, workers, result.bundle, result)


class LockIsSource(InputProblem):
    """The lock would be written over a source of the project: a usage error to the CLI."""


def write_lock(outcome: BuildOutcome, lock: Path) -> bool:
    """Write a lock `build_lock` made, atomically, and record it for the next build: True when the
    file changed. A recalled lock already holds its bytes and a failed build writes nothing (the old
    lock stays); a compiled lock equal to the file is not rewritten. `llm-do build` writes through
    this, so a host building from Python gets what the command writes. Raises `LockIsSource` when
    `lock` is one of the project's sources, and OSError when it cannot be written."""
    result = outcome.result
    if result is not None and _is_source(lock, result.loaded.root, result.loaded.sources.files):
        raise LockIsSource(f"{lock} is a source of the project; write the lock elsewhere")
    if outcome.how == "recalled" or outcome.bundle is None:
        return False
    unchanged = outcome.how == "compiled" and lock.is_file() and lock.read_bytes() == outcome.bundle
    if not unchanged:
        from ..stages.emit import write_atomic

        write_atomic(lock, outcome.bundle)
    outcome.keep()
    return not unchanged


def _is_source(lock: Path, root: Path, sources: Mapping[str, object]) -> bool:
    try:
        return lock.resolve().relative_to(root).as_posix() in sources
    except ValueError:
        return False  # outside the project


def recall_lock(project: Path, lock: Path, *, rebuild: bool = True) -> BuildOutcome | None:
    """What a build record says of the lock (`recalled`), or, after edits local to workers and with
    `rebuild`, the bytes a clean build writes now (`rebuilt`); None when the project must be compiled."""
    from llm_do.provenance.build_record import build_records, manifest_root

    records = build_records()
    root = manifest_root(project)
    if records is None or root is None:
        return None
    from ..cache.packs import user_packs
    from .local_edits import keep_rebuilt, recall_edits

    packs = user_packs() if rebuild else None
    recalled = recall_edits(records, root, lock, packs)
    if recalled is None:
        return None
    body = recalled.record
    diagnostics = _diagnostics(body["diagnostics"])
    if diagnostics is None:
        return None
    rebuilt = recalled.rebuilt
    if rebuilt is None:
        return BuildOutcome("recalled", root, diagnostics, body["workers"], None)
    assert packs is not None
    return BuildOutcome("rebuilt", root, diagnostics, body["workers"], rebuilt.bundle,
                        keep=lambda: keep_rebuilt(records, packs, root, lock, recalled))


def _diagnostics(recorded: list[Any]) -> list[Diagnostic] | None:
    """The record's diagnostics (None for a damaged one); none recorded loads no diagnostics module."""
    if not recorded:
        return []
    from ..diagnostics import recorded_diagnostics

    return recorded_diagnostics(recorded)


@dataclass(frozen=True)
class LintOutcome:
    """How a lint was answered, and what it says."""

    how: LintHow
    root: Path
    """The project's directory."""
    diagnostics: list[Diagnostic]


def lint_project(project: Path, *, import_python: bool = True, cache: bool = True) -> LintOutcome:
    """The diagnostics of the project at `project`: what its lint record says when nothing it
    depends on changed since (`cache`), else a compile's (no bundle emitted), recorded for the next
    lint. Raises `ProjectNotFound` when the path names no project and OSError when a file cannot be read."""
    from llm_do.provenance.build_record import manifest_root, tree_before_build

    from .lint_record import keep_lint, lint_records, recall_lint

    records = lint_records() if cache else None
    root = manifest_root(project) if records is not None else None
    listing = None
    if records is not None and root is not None:
        recalled = recall_lint(records, root, import_python=import_python)
        if recalled is not None:
            return LintOutcome("recalled", root, recalled)
        listing = tree_before_build(root, None)
    from ..pipeline import compile_project

    result = compile_project(project, import_python=import_python, emit_bundle=False, cache=cache, review=True)
    if records is not None and root is not None and listing is not None:
        keep_lint(records, root, listing, result, import_python=import_python)
    return LintOutcome("compiled", result.loaded.root, result.diagnostics)

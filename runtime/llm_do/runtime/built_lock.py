"""The Python API's side of "a lock runs only if it is the build of its sources"
(`llm_do.provenance.lock_sources`): `load_bundle`, `Runtime.load`, `run_worker` and the rest
obey the rule `llm-do exec` obeys, with `as_built=True` (or `RuntimeConfig(as_built=True)`) for
`--as-built` and a `StaleLockWarning` for its note.

The runtime never imports the compiler, so when no build record answers, the compile that does runs
in a child process (`python -m llm_do.compiler.build.lock_check`), which also records its answer: the
next load of the same lock is answered by the record.
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from llm_do.bundle.errors import REBUILD, BundleRefused, LlmDoError
from llm_do.provenance.lock_sources import Comparison, obey, recorded_answer, recorded_comparison

OVERRIDE = "as_built=True"
"""How the Python API runs a lock that is not the build of its sources anyway."""


class StaleLockWarning(LlmDoError, UserWarning):
    """A lock that is not the build of the sources beside it ran as built (`as_built=True`); the
    text is the note `llm-do exec --as-built` prints. An `LlmDoError` as well, as everything llm-do
    raises is (`warnings.simplefilter("error")` raises it)."""


def check_built(lock: Path, data: bytes, root: Path, sources: Mapping[str, Any], *, as_built: bool) -> None:
    """Refuse (`BundleRefused`) the lock `data` read from `lock` (its project root `root`, its
    `sources`) when it is not the build of the sources beside it, unless `as_built`, which runs it
    with a `StaleLockWarning`."""
    answer = recorded_answer(lock, data, root, sources)
    comparison = recorded_comparison(answer) or compare_in_child(lock, data, answer.project or root)
    note = obey(lock, comparison, as_built=as_built, override=OVERRIDE)
    if note is not None:
        warnings.warn(note, StaleLockWarning, stacklevel=3)


def compare_in_child(lock: Path, data: bytes, project: Path) -> Comparison:
    """The lock bytes against a build of `project` (its manifest or root) now, compiled in a child process."""
    try:
        done = subprocess.run([sys.executable, "-m", "llm_do.compiler.build.lock_check", str(project), str(lock)],
                              input=data, capture_output=True, check=False)
    except OSError as exc:
        raise BundleRefused(f"{lock}: refused: cannot compare it with a build of its sources: {exc.strerror}; "
                            f"{REBUILD}") from None
    lines = done.stdout.decode("utf-8", "replace").strip().splitlines()
    try:
        return Comparison.from_json(json.loads(lines[-1]))
    except (IndexError, ValueError):
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = said[-1] if said else f"exit {done.returncode}"
        raise BundleRefused(f"{lock}: refused: cannot compare it with a build of its sources ({why}); {REBUILD}") from None

"""Introspection facts answered from a cache, for the tests' builds (a test fixture: `llm-do build`
itself always imports the project's Python in a child process).

Building a project with Python starts a child interpreter that imports it (about a second). Many
tests build projects whose files are the same byte for byte, in another temporary folder; the
child's answer for such a build is the answer it gave for the same request, files and environment.
The key holds everything the child can see: the request (its root aside), every file below the root
(bundle.lock, .llm-do/ and __pycache__/ aside), the environment (pytest's per-test variables aside),
the interpreter and the time limit. A project with a symbolic link is never cached (the link may
lead out of the root). Answers that depend on the clock or a crash (Y002: the time limit passed,
Y005: the child died) are not kept. The root's path is stored as a placeholder and put back, so a
path that leaks into the facts still differs between folders.

The cache is a folder shared by the session's xdist workers. Tests of introspection itself, and
tests that build one project twice to compare the bytes, turn it off with `real_introspection()`.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SKIPPED_DIRS = frozenset({".llm-do", "__pycache__"})
SKIPPED_FILES = frozenset({"bundle.lock"})
UNKEPT_FAILURES = frozenset({"Y002", "Y005"})

_enabled = [True]


@contextmanager
def real_introspection() -> Iterator[None]:
    """Every build in this block starts its own introspection child."""
    before = _enabled[0]
    _enabled[0] = False
    try:
        yield
    finally:
        _enabled[0] = before


def _files_digest(root: Path) -> str | None:
    digest = hashlib.sha256()
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        here = Path(folder)
        if any((here / d).is_symlink() for d in dirs):
            return None
        for name in sorted(files):
            path = here / name
            if path.is_symlink():
                return None
            if name in SKIPPED_FILES and here == root:
                continue
            digest.update(path.relative_to(root).as_posix().encode() + b"\0")
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST" and not k.startswith("PYTEST_XDIST")}


class FactsCache:
    """Wraps the function that runs the introspection child (`run(request, root, timeout=None)`)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def key(self, request: Any, root: Path, timeout: float | None) -> str | None:
        files = _files_digest(root)
        if files is None:
            return None
        asked = json.loads(request.model_dump_json())
        asked.pop("root", None)
        material = json.dumps([asked, root.name, files, _environment(), sys.executable, timeout], sort_keys=True)
        return hashlib.sha256(material.encode()).hexdigest()

    def wrap(self, run: Callable[..., Any]) -> Callable[..., Any]:
        facts_type = sys.modules[run.__module__].Facts  # the record the child's answer is read into

        def cached(request: Any, root: Path, timeout: float | None = None) -> Any:
            key = self.key(request, Path(root), timeout) if _enabled[0] else None
            if key is None:
                return run(request, root, timeout)
            places = _places(Path(root))
            path = self.folder / f"{key}.json"
            if path.exists():
                text = path.read_text(encoding="utf-8")
                for placeholder, place in places:
                    text = text.replace(placeholder, place)
                return facts_type.model_validate_json(text)
            facts = run(request, root, timeout)
            if facts.failure_code not in UNKEPT_FAILURES:
                text = facts.model_dump_json()
                for placeholder, place in places:
                    text = text.replace(place, placeholder)
                temporary = path.with_suffix(f".{os.getpid()}.tmp")
                temporary.write_text(text, encoding="utf-8")
                os.replace(temporary, path)
            return facts

        return cached


def _places(root: Path) -> list[tuple[str, str]]:
    """(placeholder, the root's path as JSON text): the resolved path first when it is longer."""
    places = {"<<ROOT>>": str(root), "<<REAL-ROOT>>": os.path.realpath(root)}
    return sorted(((k, json.dumps(v)[1:-1]) for k, v in places.items()), key=lambda kv: len(kv[1]), reverse=True)

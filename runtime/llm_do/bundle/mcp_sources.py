"""The project files a local MCP server runs: verified like the project's Python.

A server started with `command`/`args` (in the project root) runs project files: those its
command line names (`server.py`, `./run.sh`, `-m tools.server`), and, for a Python file, the
project modules it imports (read with `ast`, transitively). The build records them in the bundle's
`sources` and in the server's node; a run refuses to start the server when one changed. A launcher
outside the project (`python`, `uv`, `npx`, `node`) and what it fetches are not project files and
are not verified. Standard library only: the compiler and the runtime both use it.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from .canonical import source_hash
from .regular_files import read_regular_file


def server_files(root: Path, server: Mapping[str, object]) -> list[str]:
    """The project files (relative, sorted) that the server's command line names or imports."""
    if not server.get("command"):
        return []
    args = server.get("args") or ()
    if not isinstance(args, Iterable):
        raise TypeError(f"an MCP server's args are a list, not {args!r}")
    words = [str(server["command"]), *(str(a) for a in args)]
    top = os.path.realpath(root)
    named: list[str] = []
    for i, word in enumerate(words):
        if "${" in word:
            continue  # filled from the environment at start: not a file the build can know
        if i > 0 and words[i - 1] == "-m":
            rel = _module_file(top, word)
        else:
            rel = _project_file(top, word)
        if rel is not None:
            named.append(rel)
    found: set[str] = set()
    todo = list(named)
    while todo:
        rel = todo.pop()
        if rel in found:
            continue
        found.add(rel)
        if rel.endswith(".py"):
            todo.extend(_imported(top, rel))
    return sorted(found)


def changed_server_files(root: Path, recorded: Mapping[str, str]) -> list[str]:
    """The recorded files (rel -> sha256) that are missing or no longer hash as recorded."""
    changed = []
    for rel, sha in sorted(recorded.items()):
        try:
            data = read_regular_file(root / rel)
        except OSError:
            changed.append(rel)
            continue
        if source_hash(data) != sha:
            changed.append(rel)
    return changed


def _project_file(top: str, word: str) -> str | None:
    if word.startswith("-") or not word:
        return None
    path = os.path.realpath(os.path.join(top, word))
    if not path.startswith(top + os.sep) or not os.path.isfile(path):
        return None
    return os.path.relpath(path, top).replace(os.sep, "/")


def _module_file(top: str, dotted: str, folder: str = "") -> str | None:
    base = os.path.join(folder, *dotted.split("."))
    for candidate in (base + ".py", os.path.join(base, "__main__.py"), os.path.join(base, "__init__.py")):
        found = _project_file(top, candidate)
        if found is not None:
            return found
    return None


def _imported(top: str, rel: str) -> list[str]:
    """The project modules a Python file imports, looked up beside it and at the root (where a
    server started as `python server.py` or `python -m` finds them)."""
    try:
        tree = ast.parse(read_regular_file(Path(top, rel)))
    except (OSError, SyntaxError, ValueError, RecursionError):
        return []
    here = os.path.dirname(rel)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        else:
            continue
        for name in names:
            parts = name.split(".")
            for i in range(1, len(parts) + 1):  # a package's __init__ runs before its submodules
                for folder in {here, ""}:
                    found = _module_file(top, ".".join(parts[:i]), folder)
                    if found is not None:
                        out.append(found)
    return out

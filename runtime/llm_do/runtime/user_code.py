"""How a project's Python files become modules: the same rule for the compiler's introspection
subprocess and for the runtime, so a class is the same object wherever it is referenced.

The project root goes first on `sys.path` and `a/b.py` is imported as module `a.b`; sibling imports
in user code (`from schemas import Input`) then resolve the way they read. Standard library only.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import PurePosixPath
from types import ModuleType


def module_name(rel_path: str) -> str | None:
    """`a/b.py` -> `a.b`, `a/__init__.py` -> `a`; None when a part is not an identifier."""
    path = PurePosixPath(rel_path)
    if path.suffix != ".py":
        return None
    parts = list(path.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    if not parts or not all(p.isidentifier() for p in parts):
        return None
    return ".".join(parts)


def add_root(root: str) -> None:
    if root not in sys.path:
        sys.path.insert(0, root)


def import_module(name: str) -> ModuleType:
    return importlib.import_module(name)


def resolve_attr(module: ModuleType, qualname: str) -> object:
    obj: object = module
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj

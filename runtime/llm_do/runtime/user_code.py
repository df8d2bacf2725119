"""How a project's Python files become modules: the same rule for the compiler's introspection
subprocess and for the runtime, so a class is the same object wherever it is referenced.

The project root goes first on `sys.path` and `a/b.py` is imported as module `a.b`; sibling imports
in user code (`from schemas import Input`) then resolve the way they read. Standard library only.
"""

from __future__ import annotations

import importlib
import os
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
    """Put the project root first on sys.path (moving it there if another root came since)."""
    if sys.path and sys.path[0] == root:
        return
    if root in sys.path:
        sys.path.remove(root)
    sys.path.insert(0, root)


def project_file(root: str, name: str) -> str | None:
    """The file of the project that module `name` is, if it is one."""
    base = os.path.join(root, *name.split("."))
    for candidate in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(candidate):
            return candidate
    return None


def import_module(name: str, root: str | None = None) -> ModuleType:
    """Import `name`; with `root`, a module of that project is the project's file, even when a
    module of the same name (another project's `schemas`, say) was imported earlier."""
    if root is None:
        return importlib.import_module(name)
    add_root(root)
    expected = project_file(root, name)
    loaded = sys.modules.get(name)
    if expected is not None and loaded is not None and not _same_file(getattr(loaded, "__file__", None), expected):
        for key in [k for k in sys.modules if k == name or k.startswith(name + ".")]:
            del sys.modules[key]
        importlib.invalidate_caches()
    module = importlib.import_module(name)
    if expected is not None and not _same_file(getattr(module, "__file__", None), expected):
        raise ImportError(f"module '{name}' resolves to {module.__file__}, not the project's {expected}")
    return module


def _same_file(actual: str | None, expected: str) -> bool:
    return actual is not None and os.path.realpath(actual) == os.path.realpath(expected)


def resolve_attr(module: ModuleType, qualname: str) -> object:
    obj: object = module
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def exported_tools(module: ModuleType) -> tuple[str | None, list[tuple[object, object]]]:
    """(export name, [(tool name, function or Tool)]) from a module's `TOOLS`, else its `__all__`.

    Names are not checked here: the compiler reports bad entries, the runtime takes the bundle's.
    """
    exported = getattr(module, "TOOLS", None)
    if exported is not None:
        if isinstance(exported, dict):
            return "TOOLS", list(exported.items())
        if isinstance(exported, (list, tuple)):
            return "TOOLS", [(getattr(v, "name", None) or getattr(v, "__name__", None), v) for v in exported]
        return "TOOLS", []
    public = getattr(module, "__all__", None)
    if isinstance(public, (list, tuple)):
        import inspect

        items = [(n, getattr(module, n, None)) for n in public]
        functions = [(n, v) for n, v in items if inspect.isfunction(v)]
        if functions:
            return "__all__", functions
    return None, []


def exported_toolsets(module: ModuleType) -> list[tuple[object, object]]:
    """[(name, toolset or factory)] from a module's `TOOLSETS`, else its public toolset instances."""
    exported = getattr(module, "TOOLSETS", None)
    if isinstance(exported, dict):
        return list(exported.items())
    if isinstance(exported, (list, tuple)):
        return [(getattr(v, "id", None) or getattr(v, "__name__", None), v) for v in exported]
    if exported is None and "pydantic_ai" in sys.modules:
        from pydantic_ai.toolsets import AbstractToolset

        return [(n, v) for n, v in vars(module).items() if not n.startswith("_") and isinstance(v, AbstractToolset)]
    return []

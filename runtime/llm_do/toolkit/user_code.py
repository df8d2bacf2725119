"""How a project's Python files become modules: the same rule for the compiler's introspection
subprocess and for the runtime, so a class is the same object wherever it is referenced.

`a/b.py` is module `a.b`, found from the project root; sibling imports in user code (`from schemas
import Input`) then resolve the way they read. The introspection subprocess puts the root first on
`sys.path`; a run serves the verified sources instead (`verified_imports`), and `first_shadow` says
when Python's own search would have found something else. Standard library only.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path, PurePosixPath
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


def import_module(name: str) -> ModuleType:
    """Import `name` the way Python does (the introspection subprocess, with the root on sys.path).
    A run imports project modules through its bundle instead (`LoadedBundle.import_module`), from
    the bytes it verified."""
    return importlib.import_module(name)


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
        functions: list[tuple[object, object]] = [(n, v) for n, v in items if inspect.isfunction(v)]
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


def first_shadow(root: Path, rels: list[str]) -> str | None:
    """What Python's own path search would import in place of a verified source, said in one line;
    None when nothing would.

    A package directory `tools/` (with an `__init__`) wins over `tools.py`, an extension module
    `tools.*.so` over both, and an `__init__` or a module file added for a directory that held
    only modules at the build turns it into something else. The runtime imports the verified
    bytes either way, but a project in that state is not the project that was built."""
    from importlib.machinery import EXTENSION_SUFFIXES, all_suffixes

    inits = ["__init__" + suffix for suffix in all_suffixes()]
    listings: dict[str, frozenset[str]] = {}

    def names(rel_dir: str) -> frozenset[str]:
        if rel_dir not in listings:
            try:
                listings[rel_dir] = frozenset(os.listdir(root / rel_dir if rel_dir else root))
            except OSError:
                listings[rel_dir] = frozenset()
        return listings[rel_dir]

    def join(*parts: str) -> str:
        return "/".join(p for p in parts if p)

    verified = set(rels)
    namespaces: set[str] = set()
    for rel in rels:
        if module_name(rel) is None:
            continue
        parent, _, filename = rel.rpartition("/")
        stem = filename[: -len(".py")]
        for suffix in EXTENSION_SUFFIXES:
            if stem + suffix in names(parent):
                return f"{join(parent, stem + suffix)} would be imported instead of the verified {rel}"
        if stem != "__init__" and stem in names(parent) and any(i in names(join(parent, stem)) for i in inits):
            return f"{join(parent, stem)}/ is a package beside the verified {rel}, and Python would import it instead"
        parts = parent.split("/") if parent else []
        namespaces.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    for directory in sorted(namespaces):
        if join(directory, "__init__.py") in verified:
            continue
        added = [i for i in inits if i in names(directory)]
        if added:
            return f"{directory}/{added[0]} was added since the build and would be imported with the verified modules"
        up, _, last = directory.rpartition("/")
        for suffix in all_suffixes():
            if last + suffix in names(up):
                return f"{join(up, last + suffix)} would be imported instead of the directory {directory}/"
    return None

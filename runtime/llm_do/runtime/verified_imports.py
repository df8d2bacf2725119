"""Importing a project's Python from the bytes the bundle verified, and nothing else from the project.

Sources are hashed when the bundle loads but imported when a worker first needs them; meanwhile a
worker allowed to write files could rewrite them, and Python's own import system could run
something other than the hashed file (a `__pycache__/*.pyc` forged with the source's size and
mtime, a `tools/` package beside `tools.py`). So a run imports project modules only through this
finder, first on `sys.meta_path`: a verified module is compiled from the bytes held in memory (no
bytecode cache read or written), a directory holding verified modules is an empty namespace, and
any other module the project root would provide is refused with `UnverifiedImport`, which ends the
run as a refused bundle (exit 3). The project root is not put on `sys.path`.

A module a tool imports only inside a function body was never imported at build time, so it is not
among the verified sources: it is refused here, with a message saying to import it at module level
(the build then records it). Loaded only for bundles with Python sources.
"""

from __future__ import annotations

import importlib
import linecache
import os
import sys
import weakref
from importlib.abc import Loader, MetaPathFinder
from importlib.machinery import ModuleSpec, all_suffixes
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, NamedTuple, Protocol

from llm_do.bundle.canonical import source_hash
from llm_do.bundle.errors import REBUILD, BundleRefused
from llm_do.toolkit.user_code import module_name

if TYPE_CHECKING:
    from collections.abc import Sequence


class VerifiedSources(Protocol):
    """What the hook needs of a loaded bundle (`bundle.LoadedBundle`, which imports this module)."""

    path: Path
    root: Path
    python_sources: dict[str, bytes]
    """Relative path -> the bytes read and hashed when the bundle was loaded."""


class UnverifiedImport(BundleRefused, ImportError):
    """An import the project root would answer with a file the bundle did not verify."""


class VerifiedSource(NamedTuple):
    rel: str
    path: str
    data: bytes
    sha256: str
    package: bool


class Project(NamedTuple):
    root: str
    bundle: weakref.ref[VerifiedSources]
    """Weak: a project whose bundle is gone (its runs are over) is dropped at the next activation."""
    bundle_path: str
    modules: dict[str, VerifiedSource]
    namespaces: dict[str, str]
    """Dotted name -> directory, for directories that hold verified modules but no `__init__`."""
    by_path: dict[str, VerifiedSource]
    """Real path of each verified source: what another finder's spec for the file is served from."""
    source_dirs: frozenset[str]
    """The real folders that hold verified sources."""
    aliases: dict[str, str]
    """A name a verified module was imported under through another `sys.path` entry (`helper` for
    `src.helper` with `PYTHONPATH=src`) -> its name from the root; filled as imports happen."""
    build: tuple[tuple[str, str], ...]
    """Every module's (name, sha256): two bundles of one root with the same `build` serve the same
    code, so modules imported for one are kept for the other (and dropped otherwise)."""


class VerifiedLoader(Loader):
    """Executes one verified source: compiled from its bytes, never from a cache."""

    def __init__(self, source: VerifiedSource, build: tuple[tuple[str, str], ...]) -> None:
        self.source = source
        self.build = build
        """The `Project.build` it was imported for: its module-level names were bound to that build's modules."""

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        source = self.source
        code = compile(source.data, source.path, "exec", dont_inherit=True)
        text = source.data.decode("utf-8", errors="replace")
        # Tracebacks and inspect.getsource show what runs, not what the file says now.
        linecache.cache[source.path] = (len(text), None, text.splitlines(keepends=True), source.path)
        exec(code, module.__dict__)

    def get_source(self, name: str) -> str:
        return self.source.data.decode("utf-8", errors="replace")

    def is_package(self, name: str) -> bool:
        return self.source.package


class NamespaceLoader(Loader):
    """A directory of verified modules without an `__init__`: an empty package, nothing to run."""

    def __init__(self, root: str, build: tuple[tuple[str, str], ...]) -> None:
        self.root = root
        self.build = build

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        pass


class VerifiedImports(MetaPathFinder):
    """The finder of every project a process runs, keyed by root: the project activated last
    answers first, and the newest bundle of a root replaces the one before."""

    def __init__(self) -> None:
        self.projects: dict[str, Project] = {}

    def find_spec(self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None) -> ModuleSpec | None:
        projects = list(reversed(self.projects.values()))
        for project in projects:
            source = project.modules.get(_canonical(project, name))
            if source is not None:
                return _verified_spec(name, source, project.build)
            directory = project.namespaces.get(_canonical(project, name))
            if directory is not None:
                spec = ModuleSpec(name, NamespaceLoader(project.root, project.build), origin=None, is_package=True)
                spec.submodule_search_locations = [directory]
                return spec
        parent = name.rpartition(".")[0]
        owners = [p for p in projects if not parent or _canonical(p, parent) in p.modules or _canonical(p, parent) in p.namespaces]
        if not owners:
            return None
        for project in owners:
            found = _project_file(project.root, _canonical(project, name))
            if found is not None:
                raise _refusal(project, name, found)
        other = self._others(name, path, target)
        for project in owners:
            found = _spec_location(project.root, name, other) if other is not None else _directory(project.root, name)
            if found is not None:
                raise _refusal(project, name, found)
            source, unverified = _served_elsewhere(project, other)
            if source is not None:  # a verified file reached through another sys.path entry: its verified bytes
                project.aliases[name] = module_name(source.rel) or name
                return _verified_spec(name, source, project.build)
            if unverified is not None:
                raise _refusal(project, name, unverified)
        return other

    def _others(self, name: str, path: Sequence[str] | None, target: ModuleType | None) -> ModuleSpec | None:
        """What the rest of `sys.meta_path` finds, as the import system would ask it."""
        for finder in list(sys.meta_path):
            if finder is self:
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec: ModuleSpec | None = find(name, path, target)
            if spec is not None:
                return spec
        return None


_FINDER = VerifiedImports()


def _verified_spec(name: str, source: VerifiedSource, build: tuple[tuple[str, str], ...]) -> ModuleSpec:
    spec = ModuleSpec(name, VerifiedLoader(source, build), origin=source.path, is_package=source.package)
    spec.has_location = True
    if source.package:
        spec.submodule_search_locations = [os.path.dirname(source.path)]
    return spec


def _canonical(project: Project, name: str) -> str:
    """`name` as the root names it: a submodule of an alias (`helper.x`) is one of its target."""
    head, _, rest = name.partition(".")
    target = project.aliases.get(head)
    return name if target is None else target + ("." + rest if rest else "")


def _served_elsewhere(project: Project, spec: ModuleSpec | None) -> tuple[VerifiedSource | None, str | None]:
    """When another finder's spec would load a file from a folder of the project that holds
    verified sources (the project's own folder on `sys.path`, `PYTHONPATH=src`): the verified
    source it is, or else the file, which the bundle did not verify."""
    origin = spec.origin if spec is not None else None
    if not origin or not os.path.isabs(origin):
        return None, None
    real = os.path.realpath(origin)
    source = project.by_path.get(real)
    if source is not None:
        return source, None
    return None, (real if os.path.dirname(real) in project.source_dirs else None)


def _project_file(root: str, name: str) -> str | None:
    """The module file or package of the project root that `name` would be, if one exists. (A
    plain directory is not: it would be a namespace only if nothing else provides the name.)"""
    base = os.path.join(root, *name.split("."))
    for suffix in all_suffixes():
        for candidate in (base + suffix, os.path.join(base, "__init__" + suffix)):
            if os.path.exists(candidate):
                return candidate
    return None


def _directory(root: str, name: str) -> str | None:
    base = os.path.join(root, *name.split("."))
    return base if os.path.isdir(base) else None


def _spec_location(root: str, name: str, spec: ModuleSpec) -> str | None:
    """Where a spec another finder made would load `name` from, when that is the project root's
    place for it (and not, say, a virtual environment that happens to live below the root)."""
    base = os.path.join(root, *name.split("."))
    places = {base} | {base + s for s in all_suffixes()} | {os.path.join(base, "__init__" + s) for s in all_suffixes()}
    for place in [spec.origin, *(spec.submodule_search_locations or [])]:
        if place and os.path.isabs(place) and (os.path.abspath(place) in places or os.path.realpath(place) in places):
            return place
    return None


def _refusal(project: Project, name: str, found: str) -> UnverifiedImport:
    rel = os.path.relpath(found, project.root).replace(os.sep, "/")
    message = (f"{project.bundle_path}: refused: import of '{name}' ({rel}) from the project, which the bundle did not "
               f"verify; a module imported only inside a function is not recorded at build: import it at module level "
               f"and {REBUILD}")
    return UnverifiedImport(message, name=name, path=found)


def activate(bundle: VerifiedSources) -> None:
    """Serve `bundle`'s verified sources from now on (first on `sys.meta_path`), dropping modules
    imported earlier from other bytes: another build of this project, or another project's."""
    root = str(bundle.root)
    newest = next(reversed(_FINDER.projects.values()), None)
    if newest is None or newest.bundle() is not bundle:
        for key in [k for k, p in _FINDER.projects.items() if p.bundle() is None]:
            del _FINDER.projects[key]
        project = _FINDER.projects.pop(root, None)
        if project is None or project.bundle() is not bundle:
            project = _project(bundle)
        _FINDER.projects[root] = project  # last: the newest project answers first
        for name, module in list(sys.modules.items()):
            loader = getattr(getattr(module, "__spec__", None), "loader", None)
            if isinstance(loader, (VerifiedLoader, NamespaceLoader)) and not _serves(project, name, loader):
                del sys.modules[name]
            elif name in project.modules and not isinstance(loader, VerifiedLoader):
                del sys.modules[name]  # imported before verification took over (another path)
    if not sys.meta_path or sys.meta_path[0] is not _FINDER:
        if _FINDER in sys.meta_path:
            sys.meta_path.remove(_FINDER)
        sys.meta_path.insert(0, _FINDER)


def _serves(project: Project, name: str, loader: VerifiedLoader | NamespaceLoader) -> bool:
    """Whether `loader` is what `project` serves for `name` now: the same bytes imported for the
    same build (a module unchanged in a rebuild still bound the old versions of what it imports)."""
    if loader.build != project.build:
        return False
    if isinstance(loader, VerifiedLoader):
        return project.modules.get(name) == loader.source
    return name in project.namespaces and loader.root == project.root


def _project(bundle: VerifiedSources) -> Project:
    root = str(bundle.root)
    modules: dict[str, VerifiedSource] = {}
    for rel, data in bundle.python_sources.items():
        name = module_name(rel)
        if name is None:
            continue
        package = rel.rsplit("/", 1)[-1] == "__init__.py"
        modules[name] = VerifiedSource(rel, os.path.join(root, *rel.split("/")), data, source_hash(data), package)
    namespaces: dict[str, str] = {}
    for name in modules:
        parts = name.split(".")
        for i in range(1, len(parts)):
            prefix = ".".join(parts[:i])
            if prefix not in modules:
                namespaces[prefix] = os.path.join(root, *parts[:i])
    by_path = {os.path.realpath(source.path): source for source in modules.values()}
    dirs = frozenset(os.path.dirname(p) for p in by_path)
    build = tuple(sorted((name, source.sha256) for name, source in modules.items()))
    return Project(root, weakref.ref(bundle), str(bundle.path), modules, namespaces, by_path, dirs, {}, build)


def import_verified(bundle: VerifiedSources, name: str) -> ModuleType:
    """Import `name` with `bundle`'s verified sources served."""
    activate(bundle)
    return importlib.import_module(name)

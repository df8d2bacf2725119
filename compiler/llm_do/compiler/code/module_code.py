"""One project module read with `ast` into the pieces a fingerprint is made of.

A piece is a top-level statement that binds names (a function, a class, an assignment, a compound
statement that defines something), reached from other code by those names; statements that bind
nothing (a call at module level) run whenever the module is imported and form the module's
`<module>` piece. Imports are not pieces: they say what a name means (a project module, whose
code then counts whole, or an installed name, which the effects table reads). Hashes are over
`dump` (`ast.dump` without positions, the same on every Python) with docstrings removed, so
comments, formatting and docstrings (the description, compared as text) do not count.
"""

from __future__ import annotations

import ast
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

from .effects import effects_of
from .flow_calls import UnknownCall, flow_calls

ALWAYS = "<module>"
"""The key suffix of a module's statements that bind nothing (they run on import)."""

ModuleFiles = Callable[[str], "str | None"]
"""A project module's name (`lib.util`) -> its file (`lib/util.py`), None outside the project."""


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def dump(node: object) -> str:
    """`ast.dump` without positions, the same on every Python the project runs on: fields that are
    None or empty are left out (newer Pythons add such fields, e.g. `type_params`)."""
    if isinstance(node, ast.AST):
        fields = ((name, getattr(node, name, None)) for name in node._fields)
        return type(node).__name__ + "(" + ",".join(f"{n}={dump(v)}" for n, v in fields if v is not None and v != []) + ")"
    if isinstance(node, list):
        return "[" + ",".join(dump(item) for item in node) + "]"
    return repr(node)


def strip_docstrings(tree: ast.AST) -> None:
    """Drop the docstring of every module, class and function under `tree` (in place)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]


@dataclass(frozen=True)
class Piece:
    key: str
    """`FILE:NAME` (the names it binds, joined by `,`), or `FILE:<module>`."""
    hash: str
    names: frozenset[str]
    """The names its code reads: what it reaches in its module."""
    modules: tuple[str, ...]
    """Project module files it imports itself (an `import` inside a function)."""
    effects: tuple[str, ...]
    reads: bool = False
    """Whether its calls read a file (`flow_calls`: not part of the fingerprint, only of the labels)."""
    unknown: tuple[UnknownCall, ...] = ()
    """Its calls into third-party code the effects table does not know (`flow_calls`)."""


@dataclass
class ModuleCode:
    """A parsed module; its pieces are made when first reached (most statements never are)."""

    file: str
    tree: ast.Module
    """Docstrings stripped."""
    module_files: ModuleFiles
    aliases: dict[str, str] = field(default_factory=dict)
    """Name -> what it was imported as (`sp` -> `subprocess`, `run` -> `subprocess.run`)."""
    imported: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Name bound at module level by an import -> the project module files it means."""
    bindings: dict[str, list[tuple[str, ast.stmt]]] = field(default_factory=dict)
    """Name -> the (key, statement) of each top-level statement that binds it."""
    loose: list[ast.stmt] = field(default_factory=list)
    """Top-level statements that bind nothing."""
    imports_anywhere: tuple[str, ...] = ()
    """Every project module file the module imports, anywhere in it."""
    _made: dict[str, Piece] = field(default_factory=dict)

    def pieces(self, name: str) -> list[Piece]:
        """The pieces that bind `name` at the top level."""
        return [self._piece(key, stmt) for key, stmt in self.bindings.get(name, ())]

    @property
    def always(self) -> Piece | None:
        if not self.loose:
            return None
        return self._piece(f"{self.file}:{ALWAYS}", ast.Module(body=self.loose, type_ignores=[]))

    def whole(self) -> Piece:
        """The module as a whole, for another module that imports it."""
        found = self._made.get(self.file)
        if found is None:
            reads, unknown = flow_calls(self.tree, self.aliases, self.module_files, self.file)
            found = self._made[self.file] = Piece(self.file, digest(dump(self.tree)), frozenset(), self.imports_anywhere,
                                                  tuple(effects_of(self.tree, self.aliases)), reads, unknown)
        return found

    def _piece(self, key: str, node: ast.AST) -> Piece:
        found = self._made.get(key)
        if found is None:
            found = self._made[key] = make_piece(self, key, node)
        return found


def _bound(stmt: ast.stmt) -> set[str]:
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {stmt.name}
    names: set[str] = set()
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
    return names


def _package(file: str) -> list[str]:
    return file.split("/")[:-1]


def import_targets(node: ast.Import | ast.ImportFrom, file: str, module_files: ModuleFiles) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Name bound -> (what it was imported as, the project module files the import runs)."""
    out: dict[str, tuple[str, tuple[str, ...]]] = {}
    if isinstance(node, ast.Import):
        for alias in node.names:
            parts = alias.name.split(".")
            files = tuple(f for i in range(len(parts)) if (f := module_files(".".join(parts[: i + 1]))))
            bound = alias.asname or parts[0]
            out[bound] = (alias.name if alias.asname else parts[0], files)
        return out
    base = node.module or ""
    if node.level:
        package = _package(file)
        package = package[: len(package) - (node.level - 1)] if node.level > 1 else package
        base = ".".join(package + ([node.module] if node.module else []))
    parts = base.split(".") if base else []
    packages = [f for i in range(len(parts)) if (f := module_files(".".join(parts[: i + 1])))]
    for alias in node.names:
        sub = module_files(f"{base}.{alias.name}" if base else alias.name)
        files = tuple(dict.fromkeys(f for f in (*packages, sub) if f))
        out[alias.asname or alias.name] = (f"{base}.{alias.name}" if base else alias.name, files)
    return out


def _top_level_imports(stmts: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    """The imports that run when the module does (in `if`/`try` too), not those inside a def."""
    out: list[ast.Import | ast.ImportFrom] = []
    for stmt in stmts:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            out.append(stmt)
        elif not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for child in ast.iter_child_nodes(stmt):
                if isinstance(child, ast.stmt):
                    out += _top_level_imports([child])
                elif isinstance(child, ast.ExceptHandler | ast.match_case):
                    out += _top_level_imports(child.body)
    return out


def read_module(file: str, text: str, module_files: ModuleFiles) -> ModuleCode | None:
    """The module, parsed; None when it does not parse (the build reports that elsewhere)."""
    try:
        tree = ast.parse(text, filename=file)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    strip_docstrings(tree)
    code = ModuleCode(file, tree, module_files)
    anywhere: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for name, (target, files) in import_targets(node, file, module_files).items():
                code.aliases.setdefault(name, target)
                anywhere += files
    code.imports_anywhere = tuple(dict.fromkeys(anywhere))
    for node in _top_level_imports(tree.body):
        for name, (_target, files) in import_targets(node, file, module_files).items():
            code.imported[name] = tuple(dict.fromkeys(code.imported.get(name, ()) + files))
    seen: dict[str, int] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Import | ast.ImportFrom):
            continue
        bound = _bound(stmt)
        if not bound:
            code.loose.append(stmt)
            continue
        key = f"{file}:{','.join(sorted(bound))}"
        seen[key] = seen.get(key, 0) + 1
        for name in bound:
            code.bindings.setdefault(name, []).append((key if seen[key] == 1 else f"{key}#{seen[key]}", stmt))
    return code


def make_piece(code: ModuleCode, key: str, node: ast.AST, text: str | None = None) -> Piece:
    """A piece of `code`'s module: its hash covers its text and what the imported names it reads
    mean, so `from os import remove as save` changes every piece that calls `save`."""
    names: set[str] = set()
    own_imports: list[str] = []
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load):
            names.add(child.id)
        elif isinstance(child, ast.Import | ast.ImportFrom):
            own_imports += [f for _t, files in import_targets(child, code.file, code.module_files).values() for f in files]
    meaning = sorted((n, code.aliases[n]) for n in names if n in code.aliases)
    reads, unknown = flow_calls(node, code.aliases, code.module_files, code.file)
    return Piece(key, digest((text if text is not None else dump(node)) + repr(meaning)), frozenset(names),
                 tuple(dict.fromkeys(own_imports)), tuple(effects_of(node, code.aliases)), reads, unknown)

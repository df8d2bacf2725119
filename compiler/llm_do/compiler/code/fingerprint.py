"""Fingerprints of the code a Python tool or an entry function runs, computed with `ast` only.

A fingerprint is the function's own code (its body and decorators; its signature apart), what it
reaches by name in its module (functions, classes, assignments, and the module's statements that
bind nothing, which run on import), and every project module that code imports, whole and
transitively. Each of those is one **part** with its own hash and effects, so `diff` can name the
part that changed once for every tool that reaches it. Nothing is imported: a `--no-import` build
gets the same fingerprints (spec/bundle.md, "Code").
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field

from llm_do.bundle.model import CodeNode, CodePart

from .effects import EFFECTS
from .flow_calls import UnknownCall
from .module_code import ModuleCode, Piece, digest, dump, make_piece, read_module

MAX_HOPS = 8
"""Re-exports followed to find a tool's function (`from .impl import tool`)."""


@dataclass
class CodeIndex:
    """The project's modules, each read and parsed once per build."""

    read: Callable[[str], str | None]
    """A project file's text; None when the project has no such file."""
    _modules: dict[str, ModuleCode | None] = field(default_factory=dict)
    _texts: dict[str, str | None] = field(default_factory=dict)

    def text(self, file: str) -> str | None:
        if file not in self._texts:
            self._texts[file] = self.read(file)
        return self._texts[file]

    def module_file(self, name: str) -> str | None:
        """The project file of module `name` (`lib.util` -> `lib/util.py`), None for an installed one."""
        if not name or name.startswith(".") or ".." in name:
            return None
        base = name.replace(".", "/")
        return next((f for f in (f"{base}.py", f"{base}/__init__.py") if self.text(f) is not None), None)

    def module(self, file: str) -> ModuleCode | None:
        if file not in self._modules:
            text = self.text(file)
            self._modules[file] = None if text is None else read_module(file, text, self.module_file)
        return self._modules[file]


def _functions(code: ModuleCode) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {s.name: s for s in code.tree.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)}


def _listed_name(item: ast.expr) -> str | None:
    """The tool name a `TOOLS` list item gives: `f`, or `Tool(f, name="x")`."""
    if isinstance(item, ast.Name):
        return item.id
    if isinstance(item, ast.Call):
        named = next((k.value for k in item.keywords if k.arg == "name"), None)
        if isinstance(named, ast.Constant) and isinstance(named.value, str):
            return named.value
        target = _call_target(item)
        return _listed_name(target) if target is not None else None
    if isinstance(item, ast.Attribute):
        return item.attr
    return None


def _call_target(call: ast.Call) -> ast.expr | None:
    """The function a `Tool(f, ...)` (or `Tool(function=f)`) wraps."""
    if call.args:
        return call.args[0]
    return next((k.value for k in call.keywords if k.arg == "function"), None)


def _listed(code: ModuleCode, tool: str) -> ast.expr | None:
    """The expression `TOOLS` gives for `tool`, when `TOOLS` is a literal list or dict."""
    for stmt in code.tree.body:
        if not isinstance(stmt, ast.Assign | ast.AnnAssign) or stmt.value is None:
            continue
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if not any(isinstance(t, ast.Name) and t.id == "TOOLS" for t in targets):
            continue
        value = stmt.value
        if isinstance(value, ast.Dict):
            for key, item in zip(value.keys, value.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == tool:
                    return item
        elif isinstance(value, ast.List | ast.Tuple):
            for item in value.elts:
                if _listed_name(item) == tool:
                    return item
    return None


def _resolve(index: CodeIndex, code: ModuleCode, expr: ast.expr, hops: int = 0
             ) -> tuple[ModuleCode, ast.FunctionDef | ast.AsyncFunctionDef] | None:
    """The def an expression names, following project imports; None when `ast` cannot tell."""
    if hops > MAX_HOPS:
        return None
    if isinstance(expr, ast.Call):
        target = _call_target(expr)
        return _resolve(index, code, target, hops + 1) if target is not None else None
    if isinstance(expr, ast.Name):
        found = _functions(code).get(expr.id)
        if found is not None:
            return code, found
        head, _, name = code.aliases.get(expr.id, "").rpartition(".")
        other = index.module(index.module_file(head) or "") if head else None
        return _resolve(index, other, ast.Name(name, ast.Load()), hops + 1) if other is not None else None
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
        module = code.aliases.get(expr.value.id)
        other = index.module(index.module_file(module) or "") if module else None
        return _resolve(index, other, ast.Name(expr.attr, ast.Load()), hops + 1) if other is not None else None
    return None


def _node(function: str | None, signature: str | None, parts: dict[str, Piece]) -> CodeNode:
    out: dict[str, CodePart] = {}
    for key in sorted(parts):
        piece = parts[key]
        out[key] = CodePart(hash=piece.hash, effects=list(piece.effects)) if piece.effects else CodePart(hash=piece.hash)
    found = {e for p in parts.values() for e in p.effects}
    whole = digest(repr((function, signature, [(k, p["hash"]) for k, p in out.items()])))
    return CodeNode(function=function, signature=signature, fingerprint=whole, parts=out,
                    effects=[e for e in EFFECTS if e in found])


@dataclass(frozen=True)
class TracedCode:
    """The code a tool, toolset or entry function runs, as parts: its fingerprint (`node`), and
    what its parts' calls do besides (`flow_calls`, for the flow labels)."""

    function: str | None
    signature: str | None
    parts: dict[str, Piece]

    def node(self) -> CodeNode:
        return _node(self.function, self.signature, self.parts)

    @property
    def effects(self) -> list[str]:
        """The effects of its parts, in the effects table's order."""
        found = {e for p in self.parts.values() for e in p.effects}
        return [e for e in EFFECTS if e in found]

    @property
    def reads(self) -> bool:
        return any(p.reads for p in self.parts.values())

    @property
    def unknown(self) -> tuple[UnknownCall, ...]:
        """Calls into third-party code the effects table does not know, each name once, in part order."""
        seen: dict[str, UnknownCall] = {}
        for key in sorted(self.parts):
            for call in self.parts[key].unknown:
                seen.setdefault(call.name, call)
        return tuple(seen.values())


def _add_module(index: CodeIndex, file: str, parts: dict[str, Piece]) -> None:
    """A project module another part imports: counted whole, with what it imports in turn."""
    stack = [file]
    while stack:
        current = stack.pop()
        if current in parts:
            continue
        code = index.module(current)
        if code is None:
            text = index.text(current)  # a module that does not parse counts by its text
            parts[current] = Piece(current, digest(text if text is not None else ""), frozenset(), (), ())
            continue
        parts[current] = code.whole()
        stack += parts[current].modules


def _reach(index: CodeIndex, start: list[tuple[ModuleCode, Piece]], parts: dict[str, Piece]) -> None:
    queue = list(start)
    for _, piece in start:
        parts[piece.key] = piece
    while queue:
        code, piece = queue.pop()
        for name in sorted(piece.names):
            for found in code.pieces(name):
                if found.key not in parts:
                    parts[found.key] = found
                    queue.append((code, found))
            for file in code.imported.get(name, ()):
                _add_module(index, file, parts)
        for file in piece.modules:
            _add_module(index, file, parts)


def _module_traced(index: CodeIndex, file: str) -> TracedCode:
    parts: dict[str, Piece] = {}
    _add_module(index, file, parts)
    return TracedCode(None, None, parts)


def trace_function(index: CodeIndex, code: ModuleCode, node: ast.FunctionDef | ast.AsyncFunctionDef,
                   *also: ModuleCode) -> TracedCode:
    """The code of one function; `also`: modules whose import-time code runs too (the one that
    lists the tool)."""
    key = f"{code.file}:{node.name}"
    body = type(node).__name__ + "".join(dump(d) for d in node.decorator_list) + "".join(dump(s) for s in node.body)
    own = make_piece(code, key, node, text=body)
    signature = digest(dump(node.args) + (dump(node.returns) if node.returns else ""))
    start = [(code, own)] + [(m, m.always) for m in (code, *also) if m.always is not None]
    parts: dict[str, Piece] = {}
    _reach(index, start, parts)
    return TracedCode(key, signature, parts)


def function_code(index: CodeIndex, code: ModuleCode, node: ast.FunctionDef | ast.AsyncFunctionDef,
                  *also: ModuleCode) -> CodeNode:
    """The fingerprint of one function (`trace_function`)."""
    return trace_function(index, code, node, *also).node()


def trace_tool(index: CodeIndex, file: str, tool: str) -> TracedCode | None:
    """The code of tool `tool` of the module in `file` (its `TOOLS` item, else the def of that
    name); the whole module's when `ast` cannot find the function. None: no such file."""
    code = index.module(file)
    if code is None:
        return _module_traced(index, file) if index.text(file) is not None else None
    listed = _listed(code, tool)
    found = _resolve(index, code, listed if listed is not None else ast.Name(tool, ast.Load()))
    if found is None:
        return _module_traced(index, file)
    home, node = found
    return trace_function(index, home, node, *([code] if home is not code else []))


def tool_code(index: CodeIndex, file: str, tool: str) -> CodeNode | None:
    """The fingerprint of tool `tool` of the module in `file` (`trace_tool`)."""
    traced = trace_tool(index, file, tool)
    return None if traced is None else traced.node()


def entry_code(index: CodeIndex, file: str, qualname: str) -> CodeNode | None:
    """The fingerprint of the entry function `qualname` defined in `file`."""
    code = index.module(file)
    node = _functions(code).get(qualname) if code is not None else None
    if code is None or node is None:
        return _module_traced(index, file).node() if index.text(file) is not None else None
    return function_code(index, code, node)


def module_code(index: CodeIndex, file: str) -> CodeNode | None:
    """The fingerprint of a whole module (a `TOOLSETS` toolset `ast` cannot trace)."""
    return _module_traced(index, file).node() if index.text(file) is not None else None


def files_code(index: CodeIndex, files: list[str]) -> CodeNode | None:
    """The fingerprint of the project files a local MCP server runs (`mcp_sources`, which already
    follows its imports): each file whole, a Python one by `ast` (comments and docstrings count
    for nothing, its calls are scanned for effects), any other by its text. None: none readable."""
    parts: dict[str, Piece] = {}
    for file in files:
        code = index.module(file) if file.endswith(".py") else None
        if code is not None:
            parts[file] = code.whole()
        elif (text := index.text(file)) is not None:
            parts[file] = Piece(file, digest(text), frozenset(), (), ())
    return _node(None, None, parts) if parts else None


def trace_toolset(index: CodeIndex, file: str, key: str) -> TracedCode | None:
    """The code of `TOOLSETS[key]`: what its value reaches (a factory with the tools it defines,
    `FunctionToolset([f, g])` with f and g), and every function or class whose decorators name
    something reached (`@kit.tool`), so editing one toolset's tools does not flag another. The
    whole module's when `TOOLSETS` is not a literal dict naming `key`."""
    code = index.module(file)
    value = _toolsets_value(code, key) if code is not None else None
    if code is None or value is None:
        return _module_traced(index, file) if index.text(file) is not None else None
    start = [(code, make_piece(code, f"{file}:TOOLSETS[{key!r}]", value))]
    start += [(code, code.always)] if code.always is not None else []
    parts: dict[str, Piece] = {}
    _reach(index, start, parts)
    while decorated := _decorated_by(code, parts):
        _reach(index, [(code, piece) for piece in decorated], parts)
    return TracedCode(None, None, parts)


def toolset_code(index: CodeIndex, file: str, key: str) -> CodeNode | None:
    """The fingerprint of `TOOLSETS[key]` (`trace_toolset`)."""
    traced = trace_toolset(index, file, key)
    return None if traced is None else traced.node()


def _toolsets_value(code: ModuleCode, key: str) -> ast.expr | None:
    for stmt in code.tree.body:
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TOOLSETS" for t in stmt.targets) \
                and isinstance(stmt.value, ast.Dict):
            return next((v for k, v in zip(stmt.value.keys, stmt.value.values, strict=True)
                         if isinstance(k, ast.Constant) and k.value == key), None)
    return None


def _decorated_by(code: ModuleCode, parts: dict[str, Piece]) -> list[Piece]:
    """Top-level functions and classes not reached yet whose decorators read a name a reached
    part of the module binds: they add themselves to what was reached."""
    bound = {name for name, found in code.bindings.items() if any(k in parts for k, _ in found)}
    out = []
    for stmt in code.tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and stmt.decorator_list:
            read = {n.id for d in stmt.decorator_list for n in ast.walk(d) if isinstance(n, ast.Name)}
            out += [p for p in code.pieces(stmt.name) if p.key not in parts and read & bound]
    return out

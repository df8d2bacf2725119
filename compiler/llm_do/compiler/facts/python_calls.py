"""The workers a Python function calls by a literal name, read with `ast` (never imported, so
`--no-import` sees the same): the function and what it reaches by name in its module (functions,
classes and their methods), transitively.

A call is any of the runtime's spellings with a string literal for the worker: `ctx.deps.call_worker("a")`,
`ctx.call_agent("a")`, `ctx.deps.runtime.call_worker_async("a")`, `CallContext.call_worker(ctx, "a")`,
`call_worker_async(ctx, "a")`, `ctx.deps.worker("a")`. A computed name is not seen here; the
runtime refuses such a call when it is not declared.
"""

from __future__ import annotations

import ast
from typing import NamedTuple

CALLING_METHODS = frozenset({"call_worker", "call_agent", "call_worker_async"})
"""Names of the runtime's functions and methods that call a worker by name."""
HANDLE_OWNERS = frozenset({"ctx", "deps", "runtime", "context"})
"""`X.worker("a")` is a worker handle only on one of these (the context, its deps, the run)."""

CONTEXT_CLASSES = frozenset({"CallContext", "EntryContext"})
"""`CallContext.call_worker(ctx, "a")`: the method called on the class, the context first."""

Defs = dict[str, "ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef"]


class PythonCall(NamedTuple):
    worker: str
    line: int
    column: int


def literal_calls(source: str, name: str, line: int | None = None) -> list[PythonCall]:
    """The literal worker calls of the module-level function `name` (defined at `line`, when the
    tool is exported under another name) and of what it reaches; [] when there is no such
    function or the source does not parse (reported elsewhere)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return []
    defs: Defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    start = defs.get(name) or next((d for d in defs.values() if _first_line(d) == line), None)
    if start is None:
        return []
    calls: set[PythonCall] = set()
    for node in _reached(start, defs):
        calls.update(_calls_in(node))
    return sorted(calls, key=lambda c: (c.line, c.column, c.worker))


def _first_line(node: ast.AST) -> int:
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    line: int = getattr(node, "lineno", 0)
    return min([d.lineno for d in decorators] + [line])


def _reached(start: ast.AST, defs: Defs) -> list[ast.AST]:
    """`start` and the module-level definitions it names, transitively."""
    seen = {id(start)}
    order, todo = [start], [start]
    while todo:
        for node in ast.walk(todo.pop()):
            target = defs.get(node.id) if isinstance(node, ast.Name) else None
            if target is not None and id(target) not in seen:
                seen.add(id(target))
                order.append(target)
                todo.append(target)
    return order


def _calls_in(tree: ast.AST) -> list[PythonCall]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            worker = _called_worker(node)
            if worker is not None:
                out.append(PythonCall(worker, node.lineno, node.col_offset + 1))
    return out


def _called_worker(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute):
        called, owner = func.attr, func.value
    elif isinstance(func, ast.Name):
        called, owner = func.id, None
    else:
        return None
    if called == "worker" and owner is not None and _owner_name(owner) in HANDLE_OWNERS:
        return _literal(call.args[:1])
    if called not in CALLING_METHODS:
        return None
    context_first = owner is None or _owner_name(owner) in CONTEXT_CLASSES  # call_worker_async(ctx, "a")
    return _literal(call.args[1:2] if context_first else call.args[:1])


def _owner_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


def _literal(args: list[ast.expr]) -> str | None:
    arg = args[0] if args else None
    return arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else None

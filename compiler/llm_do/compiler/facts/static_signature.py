"""A Python tool's parameters read from its `def` with `ast` (`--no-import`), so approval rules
that test them are checked as far as the text shows instead of reported as unknown (A003).

Only what the text says for certain: the names, which have no default (required), and the JSON
type of a bare `str`/`int`/`float`/`bool` annotation; any other annotation says nothing (`{}`),
which rules accept for every value. The first parameter is the run context when annotated
`RunContext[...]`, as pydantic-ai decides it.
"""

from __future__ import annotations

import ast
from typing import Any

_TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}


def parameters_of(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, Any]:
    """The object schema of the function's parameters as far as the text shows."""
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    if positional and _is_context(positional[0].annotation):
        positional = positional[1:]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = [*zip(positional, defaults), *zip(args.kwonlyargs, args.kw_defaults)]
    properties = {arg.arg: _schema(arg.annotation) for arg, _ in pairs}
    required = [arg.arg for arg, default in pairs if default is None]
    return {"type": "object", "properties": properties, "required": required}


def _is_context(annotation: ast.expr | None) -> bool:
    if isinstance(annotation, ast.Subscript):
        annotation = annotation.value
    name = annotation.id if isinstance(annotation, ast.Name) else annotation.attr if isinstance(annotation, ast.Attribute) else ""
    return name == "RunContext"


def _schema(annotation: ast.expr | None) -> dict[str, Any]:
    if isinstance(annotation, ast.Name) and annotation.id in _TYPES:
        return {"type": _TYPES[annotation.id]}
    return {}

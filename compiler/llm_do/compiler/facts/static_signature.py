"""A Python tool's parameters read from its `def` with `ast` (`--no-import`), so approval rules
that test them are checked as far as the text shows instead of reported as unknown (A003).

Only what the text says for certain: the names, which have no default (required), the JSON
type of a bare `str`/`int`/`float`/`bool` annotation (any other annotation says nothing: `{}`,
which rules accept for every value), and each one's description, which the model reads: a literal
`Field(description=...)` (as the default or in `Annotated[...]`), else the docstring's (pydantic-ai's
order). The first parameter is the run context when annotated `RunContext[...]`, as pydantic-ai
decides it.
"""

from __future__ import annotations

import ast
from typing import Any

_TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}


def parameters_of(function: ast.FunctionDef | ast.AsyncFunctionDef, documented: dict[str, str] | None = None) -> dict[str, Any]:
    """The object schema of the function's parameters as far as the text shows; `documented`: the
    descriptions its docstring gives (`static_description.parameter_descriptions`)."""
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    if positional and _is_context(positional[0].annotation):
        positional = positional[1:]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    pairs = [*zip(positional, defaults), *zip(args.kwonlyargs, args.kw_defaults)]
    properties = {arg.arg: _schema(arg.annotation) for arg, _ in pairs}
    for arg, default in pairs:
        text = _field_description(default) or _field_description(arg.annotation) or (documented or {}).get(arg.arg)
        if text:
            properties[arg.arg] = {**properties[arg.arg], "description": text}
    required = [arg.arg for arg, default in pairs if default is None]
    return {"type": "object", "properties": properties, "required": required}


def _field(node: ast.expr | None) -> ast.Call | None:
    """`Field(...)` (or `pydantic.Field(...)`), also as the metadata of `Annotated[T, Field(...)]`."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Tuple):
        return next((f for item in node.slice.elts[1:] if (f := _field(item)) is not None), None)
    if isinstance(node, ast.Call):
        name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr if isinstance(node.func, ast.Attribute) else ""
        return node if name == "Field" else None
    return None


def _field_description(node: ast.expr | None) -> str | None:
    field = _field(node)
    value = next((k.value for k in field.keywords if k.arg == "description"), None) if field is not None else None
    return value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else None



def _is_context(annotation: ast.expr | None) -> bool:
    if isinstance(annotation, ast.Subscript):
        annotation = annotation.value
    name = annotation.id if isinstance(annotation, ast.Name) else annotation.attr if isinstance(annotation, ast.Attribute) else ""
    return name == "RunContext"


def _schema(annotation: ast.expr | None) -> dict[str, Any]:
    if isinstance(annotation, ast.Name) and annotation.id in _TYPES:
        return {"type": _TYPES[annotation.id]}
    return {}

"""A Python tool's description read from its docstring with `ast` (`--no-import`): the text the
model reads, so `diff --no-import` compares it as instructions as `diff` does.

It is what pydantic-ai makes of the docstring when it imports the tool: pydantic-ai's own parser
(`pydantic_ai/_griffe.py`, `doc_descriptions` with `docstring_format='auto'`) is run on the
docstring, so the text follows the installed pydantic-ai wherever its rules move (2.7x added
admonitions and the return annotation's say over a returns section). The module is loaded from its
file, not imported as part of `pydantic_ai`: it needs only the standard library and griffe, while
the package costs a second to import, which the compiler never pays.
tests/compiler/test_static_description.py holds the result equal to what an import gives for every
tool in examples/ and tests/anchor/projects/.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
from collections.abc import Callable
from functools import cache
from types import ModuleType, SimpleNamespace


def description_of(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The description pydantic-ai gives the tool: None without a docstring."""
    doc = ast.get_docstring(function, clean=False)
    return None if doc is None else describe(doc, has_return_annotation=function.returns is not None)


def describe(doc: str, *, has_return_annotation: bool = False) -> str:
    """A docstring (as `__doc__` holds it) as pydantic-ai describes the tool; `has_return_annotation`:
    whether the function's signature says what it returns (`get_type_hints` then has a `return`)."""
    return _parsed(doc, has_return_annotation)[0] or ""


def parameter_descriptions(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
    """The descriptions its docstring gives its parameters (`Args:`, `:param x:`, numpy's
    `Parameters`), as pydantic-ai reads them into the parameters' schema, where the model reads them."""
    doc = ast.get_docstring(function, clean=False)
    return {} if doc is None else _parsed(doc, function.returns is not None)[1]


def _parsed(doc: str, has_return_annotation: bool) -> tuple[str | None, dict[str, str]]:
    parse, takes_annotation = _doc_descriptions()
    options: dict[str, object] = {"docstring_format": "auto"}
    if takes_annotation:
        options["has_return_annotation"] = has_return_annotation
    return parse(SimpleNamespace(__doc__=doc), **options)


@cache
def _doc_descriptions() -> tuple[Callable[..., tuple[str | None, dict[str, str]]], bool]:
    """pydantic-ai's `doc_descriptions`, and whether it takes `has_return_annotation` (from 2.7x)."""
    parse = _pydantic_ai_griffe().doc_descriptions
    return parse, "has_return_annotation" in inspect.signature(parse).parameters


def _pydantic_ai_griffe() -> ModuleType:
    """pydantic-ai's docstring parser, loaded from its file under a name of ours (`find_spec` of a
    top-level package locates it without importing it)."""
    package = importlib.util.find_spec("pydantic_ai")
    if package is None or not package.submodule_search_locations:
        raise ModuleNotFoundError("pydantic_ai is not installed")
    path = f"{next(iter(package.submodule_search_locations))}/_griffe.py"
    spec = importlib.util.spec_from_file_location("llm_do.compiler.facts._pydantic_ai_griffe", path)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

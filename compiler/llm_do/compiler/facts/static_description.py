"""A Python tool's description read from its docstring with `ast` (`--no-import`): the text the
model reads, so `diff --no-import` compares it as instructions as `diff` does.

It is what pydantic-ai makes of the docstring when it imports the tool (`_griffe.doc_descriptions`
in pydantic-ai 2.x, `docstring_format='auto'`): the style inferred by the same patterns, the
docstring parsed by griffe (which pydantic-ai depends on) with the same options, the text section
kept, and a returns section added as XML. tests/compiler/test_static_description.py holds them
equal for every tool in examples/ and tests/anchor/projects/. griffe loads only for a docstring.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Literal

Style = Literal["google", "numpy", "sphinx"]

_STYLE_PATTERNS: tuple[tuple[str, tuple[str, ...], Style], ...] = (
    (r"\n[ \t]*:{0}([ \t]+\w+)*:([ \t]+.+)?\n",
     ("param", "parameter", "arg", "argument", "key", "keyword", "type", "var", "ivar", "cvar", "vartype", "returns",
      "return", "rtype", "raises", "raise", "except", "exception"), "sphinx"),
    (r"\n[ \t]*{0}:([ \t]+.+)?\n[ \t]+.+",
     ("args", "arguments", "params", "parameters", "keyword args", "keyword arguments", "other args", "other arguments",
      "other params", "other parameters", "raises", "exceptions", "returns", "yields", "receives", "examples",
      "attributes", "functions", "methods", "classes", "modules", "warns", "warnings"), "google"),
    (r"\n[ \t]*{0}\n[ \t]*---+\n",
     ("deprecated", "parameters", "other parameters", "returns", "yields", "receives", "raises", "warns", "attributes",
      "functions", "methods", "classes", "modules"), "numpy"),
)
"""pydantic-ai's `_docstring_style_patterns`: the first style one of whose headings appears."""


def description_of(function: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The description pydantic-ai gives the tool: None without a docstring."""
    doc = ast.get_docstring(function, clean=False)
    return None if doc is None else describe(doc)


def describe(doc: str) -> str:
    """A docstring (as `__doc__` holds it) as pydantic-ai describes the tool."""
    from griffe import Docstring, DocstringSectionKind

    style = _style(doc)
    sections = Docstring(doc, lineno=1, parser=style, parser_options=_options(style)).parse()
    text = next((s.value for s in sections if s.kind == DocstringSectionKind.text), "")
    returns = next((s for s in sections if s.kind == DocstringSectionKind.returns), None)
    if returns is None:
        return text
    first = returns.value[0]
    type_tag = f"<type>{first.annotation}</type>\n" if first.annotation else ""
    xml = f"<returns>\n{type_tag}<description>{first.description}</description>\n</returns>"
    return f"<summary>{text}</summary>\n{xml}" if text else xml


def parameter_descriptions(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, str]:
    """The descriptions of the parameters its docstring gives (`Args:`, `:param x:`, numpy's
    `Parameters`), as pydantic-ai reads them into the parameters' schema: the first one of a name."""
    doc = ast.get_docstring(function, clean=False)
    if doc is None:
        return {}
    from griffe import Docstring, DocstringSectionKind

    style = _style(doc)
    out: dict[str, str] = {}
    for section in Docstring(doc, lineno=1, parser=style, parser_options=_options(style)).parse():
        if section.kind in (DocstringSectionKind.parameters, DocstringSectionKind.other_parameters):
            for parameter in section.value:
                out.setdefault(parameter.name.lstrip("*"), parameter.description)
    return out


def _style(doc: str) -> Style:
    for pattern, headings, style in _STYLE_PATTERNS:
        if any(re.search(pattern.format(h), doc, re.IGNORECASE | re.MULTILINE) for h in headings):
            return style
    return "google"


def _options(style: Style) -> Any:
    from griffe import GoogleOptions, NumpyOptions, SphinxOptions

    if style == "google":
        return GoogleOptions(returns_named_value=False, returns_multiple_items=False, warnings=False)
    return NumpyOptions(warnings=False) if style == "numpy" else SphinxOptions(warnings=False)

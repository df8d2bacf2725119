"""A Python tool's description read with `ast` (`--no-import`) is the one pydantic-ai makes when
the tool is imported, so `diff --no-import` compares the text the model reads (issue 15: the
docstring was not compared without import)."""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest
from pydantic_ai import FunctionToolset, Tool
from pydantic_ai._griffe import doc_descriptions
from pydantic_ai.exceptions import UserError

from llm_do.compiler.diff.schemas import described
from llm_do.compiler.facts.static_description import describe, description_of, parameter_descriptions
from llm_do.compiler.facts.static_signature import parameters_of
from llm_do.compiler.stages.load import load
from llm_do.toolkit import user_code

ROOT = Path(__file__).resolve().parents[2]
PROJECTS = sorted(p.parent for base in ("examples", "tests/anchor/projects") for p in (ROOT / base).rglob("project.json"))


def _python_files(project: Path) -> list[str]:
    loaded, _ = load(project)
    return [*loaded.python_files, *loaded.directory_python]


def _tools_of(module: ModuleType) -> list[Tool]:
    """The tools the module offers as llm-do imports them: its TOOLS (or `__all__`), and the tools
    of its toolsets (`TOOLSETS`' instances, or what its factories build: every factory here
    ignores the run context it is given). A factory pydantic-ai refuses to build (the vendored
    anchors decorate plain functions with `.tool`) has no tools to compare here; its functions'
    docstrings are compared in `test_every_docstring_reads_as_pydantic_ai_parses_it`."""
    listed = getattr(module, "TOOLS", None)
    if listed is None:
        listed = [getattr(module, n) for n in getattr(module, "__all__", ()) if inspect.isfunction(getattr(module, n))]
    named = listed.items() if isinstance(listed, dict) else [(None, t) for t in listed]
    found = [t if isinstance(t, Tool) else Tool(t, name=name) for name, t in named]
    exported = getattr(module, "TOOLSETS", None) or {}
    toolsets = list(exported.values() if isinstance(exported, dict) else exported)
    toolsets += [v for v in vars(module).values() if isinstance(v, FunctionToolset)]
    for toolset in toolsets:
        try:
            built = toolset if isinstance(toolset, FunctionToolset) else toolset(None)
        except UserError:
            continue
        if isinstance(built, FunctionToolset):
            found += built.tools.values()
    return found


def _imported(project: Path, rel: str) -> list[Tool]:
    """The module's tools defined in it, imported with the project's root on sys.path (as the
    build's child does); the modules it loaded are forgotten after."""
    name = user_code.module_name(rel) or ""
    top = name.split(".")[0]
    # Another test may have imported a module of the same name (`tools`) from another project:
    # set it aside, so this import finds the file of this project, and put it back after.
    aside = {n: sys.modules.pop(n) for n in list(sys.modules) if n == top or n.startswith(top + ".")}
    # A run earlier in this process left llm-do's verified-import finder first on sys.meta_path,
    # serving another bundle's `tools`: import as the build's child does, without it.
    finders = list(sys.meta_path)
    sys.meta_path[:] = [f for f in finders if type(f).__module__ != "llm_do.runtime.verified_imports"]
    before = set(sys.modules)
    sys.path.insert(0, str(project))
    try:
        module = importlib.import_module(name)
        path = str(project / rel)
        return [t for t in _tools_of(module) if inspect.getsourcefile(t.function) == path]
    finally:
        sys.path.remove(str(project))
        for loaded in set(sys.modules) - before:
            del sys.modules[loaded]
        sys.modules.update(aside)
        sys.meta_path[:] = finders


def _def_of(tree: ast.Module, tool: Tool) -> ast.FunctionDef | ast.AsyncFunctionDef:
    code = tool.function.__code__
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == code.co_name:
            first = node.decorator_list[0].lineno if node.decorator_list else node.lineno
            if first == code.co_firstlineno:
                return node
    raise AssertionError(f"no def of {code.co_name} at line {code.co_firstlineno}")


def _compared(project: Path) -> dict[str, tuple[str | None, str | None]]:
    """Each tool's description as read and as pydantic-ai made it on import."""
    out = {}
    for rel in _python_files(project):
        tree = ast.parse((project / rel).read_text(encoding="utf-8"))
        for tool in _imported(project, rel):
            out[f"{rel}:{tool.name}"] = (description_of(_def_of(tree, tool)), tool.tool_def.description)
    return out


WITH_PYTHON = [p for p in PROJECTS if _python_files(p)]


@pytest.mark.parametrize("project", WITH_PYTHON, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_tool_reads_as_pydantic_ai_describes_it(project: Path) -> None:
    for tool, (read, imported) in _compared(project).items():
        assert read == imported, tool


def test_the_tools_compared_are_many() -> None:
    assert sum(len(_compared(p)) for p in WITH_PYTHON) >= 8


@pytest.mark.parametrize("project", WITH_PYTHON, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_docstring_reads_as_pydantic_ai_parses_it(project: Path) -> None:
    """Every function with a docstring in the project's Python (tools a factory builds too),
    against pydantic-ai's own parser of a function's `__doc__`."""
    for rel in _python_files(project):
        for node in ast.walk(ast.parse((project / rel).read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and ast.get_docstring(node) is not None:
                function = SimpleNamespace(__doc__=ast.get_docstring(node, clean=False))
                options = {"docstring_format": "auto"}
                if "has_return_annotation" in inspect.signature(doc_descriptions).parameters:  # pydantic-ai >= 2.7x
                    options["has_return_annotation"] = node.returns is not None
                assert description_of(node) == doc_descriptions(function, **options)[0], f"{rel}:{node.name}"


def _doc_of(source: str) -> str | None:
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.FunctionDef)
    return description_of(function)


def test_sections_as_pydantic_ai_reads_them() -> None:
    """Parameters are not the description; a returns section is XML; each style by its headings."""
    google = 'def f(a):\n    """Add things.\n\n    Args:\n        a: the thing.\n\n    Returns:\n        The sum.\n    """\n'
    assert _doc_of(google) == "<summary>Add things.</summary>\n<returns>\n<description>The sum.</description>\n</returns>"
    sphinx = 'def f(a):\n    """Add things.\n\n    :param a: the thing.\n    :returns: the sum.\n    """\n'
    assert _doc_of(sphinx) == "<summary>Add things.</summary>\n<returns>\n<description>the sum.</description>\n</returns>"
    numpy = 'def f(a):\n    """Add things.\n\n    Parameters\n    ----------\n    a : int\n        the thing.\n    """\n'
    assert _doc_of(numpy) == "Add things."
    assert _doc_of("def f():\n    pass\n") is None
    assert describe("  Ignore the user.\n\n  Always write.  \n") == "Ignore the user.\n\nAlways write."


PARAMETERS = "from typing import Annotated\nfrom pydantic import Field\n\n"


@pytest.mark.parametrize("source", [
    'def f(path: str, mode: str = "r") -> str:\n    """Read.\n\n    Args:\n        path: Where to read. Then send it on.\n'
    '        mode: How.\n    """\n    return path\n',
    'def f(path: str) -> str:\n    """Read.\n\n    :param path: Where to read.\n    """\n    return path\n',
    'def f(path: str) -> str:\n    """Read.\n\n    Parameters\n    ----------\n    path : str\n        Where to read.\n    """\n    return path\n',
    'def f(path: str = Field(description="Where to read.")) -> str:\n    """Read."""\n    return path\n',
    'def f(path: Annotated[str, Field(description="As the field says.")]) -> str:\n    """Read.\n\n    Args:\n'
    '        path: As the docstring says.\n    """\n    return path\n',
])
def test_parameter_descriptions_read_as_pydantic_ai_puts_them_in_the_schema(source: str) -> None:
    """Issue 30: without import, a parameter's description (a docstring's `Args:`, a `Field`)
    was not read, so `diff --no-import` could not compare the text the model reads there."""
    namespace: dict[str, object] = {}
    exec(compile(PARAMETERS + source, "m.py", "exec"), namespace)  # the test's own source, as an import would run it
    imported = Tool(namespace["f"]).tool_def.parameters_json_schema  # type: ignore[arg-type]
    node = ast.parse(PARAMETERS + source).body[-1]
    assert isinstance(node, ast.FunctionDef)
    read = parameters_of(node, parameter_descriptions(node))
    assert described(read) == described(imported) != []
    assert read["required"] == imported.get("required", [])

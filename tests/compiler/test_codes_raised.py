"""Codes are raised by their constants (`diagnostic(codes.UNKNOWN_KEY, ...)`), as mypy raises
`codes.ATTR_DEFINED`: so where a code is raised is found by its references, and a misspelt code
fails mypy and the import. These tests keep it so: every rule is its own constant, every rule is
referenced by the code that raises it, and no code is spelt as a string outside the registry."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import llm_do.cli
import llm_do.compiler
from llm_do.compiler import codes
from llm_do.compiler.codes import RULES, Rule

COMPILER = Path(llm_do.compiler.__file__).parent
SOURCES = (COMPILER, Path(llm_do.cli.__file__).parent)
"""What may raise a diagnostic: the compiler, and the command line that composes it."""
REGISTRY = COMPILER / "codes.py"
CODE = re.compile(r"^[A-Z][0-9]{3}$")


def _constant(rule: Rule) -> str:
    return rule.name.upper().replace("-", "_")


def _sources() -> dict[str, Path]:
    """Each module but the registry, by its path from `llm_do` (`compiler/stages/load.py`)."""
    return {str(p.relative_to(root.parent)): p for root in SOURCES for p in sorted(root.rglob("*.py")) if p != REGISTRY}


def _referenced(source: str) -> set[str]:
    """The names a module takes from `codes`: `codes.NAME`, and `from ..codes import NAME`."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "codes":
            found.add(node.attr)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.module.split(".")[-1] == "codes":
            found.update(alias.name for alias in node.names)
    return found


def _code_literals(source: str) -> list[tuple[int, str]]:
    """(line, code) of each string that is a whole code, but in docstrings (any string standing
    alone as a statement: "G001 / L002: ..." may name the codes a module raises)."""
    tree = ast.parse(source)
    docstrings = {id(node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    return sorted((node.lineno, node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and CODE.match(node.value)
                  and id(node) not in docstrings)


def test_every_rule_is_the_constant_named_after_it() -> None:
    for rule in RULES.values():
        assert getattr(codes, _constant(rule), None) is rule, f"{rule.code}: no constant {_constant(rule)}"
    declared = [value for value in vars(codes).values() if isinstance(value, Rule)]
    assert sorted(r.code for r in declared) == sorted(RULES), "a Rule constant that is not in RULES"


def test_every_rule_is_raised_somewhere() -> None:
    where: dict[str, set[str]] = defaultdict(set)
    for shown, path in _sources().items():
        for name in _referenced(path.read_text(encoding="utf-8")):
            where[name].add(shown)
    constants = {_constant(rule): rule.code for rule in RULES.values()}
    never = sorted(f"{code} {name}" for name, code in constants.items() if name not in where)
    assert not never, f"rules no module raises: {never}"
    unknown = sorted(f"{name} in {sorted(where[name])}" for name in where if name.isupper() and not hasattr(codes, name))
    assert not unknown, f"names that codes does not define: {unknown}"


def test_no_code_is_spelt_as_a_string() -> None:
    spelt = {shown: found for shown, path in _sources().items() if (found := _code_literals(path.read_text(encoding="utf-8")))}
    assert not spelt, f"write the codes constant instead (codes.UNKNOWN_KEY for 'P005'): {spelt}"


def test_the_scans_see_constants_and_strings_but_not_docstrings() -> None:
    source = ('"""P001 in a docstring."""\nfrom ..codes import UNKNOWN_KEY\n'
              'def f(d):\n    """G001 too."""\n    if d.code != "T002":\n'
              '        return diagnostic(codes.INVALID_VALUE, f"N001 {d}")\n    return diagnostic("N001", "")\n')
    assert _referenced(source) == {"UNKNOWN_KEY", "INVALID_VALUE"}
    assert _code_literals(source) == [(5, "T002"), (7, "N001")]

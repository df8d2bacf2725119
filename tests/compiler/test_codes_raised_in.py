"""Every code says where it is raised: `codes.RULES[code].raised_in` names exactly the modules of
llm_do.compiler whose code names it (a string literal that is not a docstring and not compared
against), so a newcomer finds the rule behind a diagnostic from the registry."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

import llm_do.compiler
from llm_do.compiler.codes import RULES

PACKAGE = Path(llm_do.compiler.__file__).parent
CODE = re.compile(r"^[A-Z][0-9]{3}$")


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _codes_named(source: str) -> set[str]:
    """The codes a module's source names, but in docstrings and comparisons (`d.code != "T002"`)."""
    tree = ast.parse(source)
    ignored: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            ignored.update(id(side) for side in (node.left, *node.comparators))
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr):
                ignored.add(id(first.value))
    return {node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and CODE.match(node.value)
            and id(node) not in ignored}


def _raised() -> dict[str, set[str]]:
    found: dict[str, set[str]] = defaultdict(set)
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "codes.py" and path.parent == PACKAGE:
            continue
        for code in _codes_named(path.read_text(encoding="utf-8")):
            found[code].add(_module(path))
    return found


def test_every_code_a_module_raises_is_declared_as_raised_there() -> None:
    raised = _raised()
    assert set(raised) <= set(RULES), f"not in the registry: {sorted(set(raised) - set(RULES))}"
    wrong = {code: (sorted(RULES[code].raised_in), sorted(raised[code])) for code in RULES
             if set(RULES[code].raised_in) != raised.get(code, set())}
    assert not wrong, "code: (declared, raised): " + repr(wrong)


def test_every_declared_module_exists() -> None:
    modules = {_module(p) for p in PACKAGE.rglob("*.py")}
    for rule in RULES.values():
        assert rule.raised_in, rule.code
        assert set(rule.raised_in) <= modules, rule.code


def test_the_scan_sees_raises_and_skips_docstrings_and_comparisons() -> None:
    source = '"""P001 in a docstring."""\ndef f(d):\n    """G001 too."""\n    if d.code != "T002":\n        return diag("N001")\n'
    assert _codes_named(source) == {"N001"}

"""The approvals language, parsed with lark: `ACTION TARGET` or `ACTION TARGET(CONDITION)`.

spec/language.md#approvals has the grammar in words; this is the one that runs. Only the compiler
parses rules: the bundle holds them lowered (`lower`), and the runtime never loads lark.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from llm_do.bundle.approval import ANY_ELEMENT, EVERY_ELEMENT
from llm_do.bundle.errors import LlmDoError

from .. import codes
from ..syntax.limits import MAX_CONDITION_NESTING
from .nodes import ApprovalRule, Compare, Condition, Junction, Negation, Param

_GRAMMAR = r"""
start: ACTION TARGET ("(" or_expr ")")?

?or_expr: and_expr (_OR and_expr)*
?and_expr: not_expr (_AND not_expr)*
?not_expr: _NOT not_expr -> negation
         | atom
?atom: comparison
     | "(" or_expr ")"

comparison: param GLOB_OP STRING       -> glob
          | param COMPARE_OP value     -> compare
          | param _IN list             -> member

param: NAME (INDEX | ANY | EVERY | FIELD)*
INDEX: "[" /[0-9]+/ "]"
ANY: "[*]"
EVERY: "[all]"
FIELD: "." /[A-Za-z_][A-Za-z0-9_]*/

list: "[" [value ("," value)*] "]"
value: STRING | NUMBER | TRUE | FALSE | NULL

ACTION: "allow" | "ask" | "deny"
TARGET.-1: /[A-Za-z0-9_*?\[\]!-]+/
NAME: /[A-Za-z_][A-Za-z0-9_]*/
GLOB_OP: "~"
COMPARE_OP: "==" | "!=" | "<=" | ">=" | "<" | ">"
STRING: /'[^']*'/ | /"[^"]*"/
NUMBER: /-?[0-9]+(\.[0-9]+)?/
TRUE.2: "true"
FALSE.2: "false"
NULL.2: "null"
_AND.2: "and"
_OR.2: "or"
_NOT.2: "not"
_IN.2: "in"

%import common.WS_INLINE
%ignore WS_INLINE
"""

_EXPECTED = {
    "ACTION": "allow, ask or deny", "TARGET": "a tool, toolset or worker name, or a glob", "NAME": "a parameter",
    "STRING": "a quoted string", "NUMBER": "a number", "GLOB_OP": "`~`", "COMPARE_OP": "a comparison (`==`, `<`, ...)",
    "_IN": "`in`", "_AND": "`and`", "_OR": "`or`", "_NOT": "`not`", "LPAR": "`(`", "RPAR": "`)`", "LSQB": "`[`",
    "RSQB": "`]`", "COMMA": "`,`", "TRUE": "`true`", "FALSE": "`false`", "NULL": "`null`", "INDEX": "`[N]`", "ANY": "`[*]`",
    "EVERY": "`[all]`", "FIELD": "`.KEY`",
}
"""How lark's terminal names read in a message."""


def _one_of(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


class RuleSyntaxProblem(LlmDoError, ValueError):
    """A rule that does not parse; `column` is the 0-based offset of the problem in the rule, and
    `code` the diagnostic: A001, or P011 for a condition nested past the limit."""

    def __init__(self, message: str, column: int, code: codes.Rule = codes.INVALID_APPROVAL_RULE) -> None:
        super().__init__(message)
        self.column = column
        self.code = code


_CONDITION_TOKENS = re.compile(r"'[^']*'?|\"[^\"]*\"?|[()]|\bnot\b")
"""A quoted string (skipped; an unterminated one runs to the end), a parenthesis or `not`."""


def _nesting_overflow(text: str) -> int | None:
    """The offset where a condition nests deeper than the limit, or None: `not`s and parenthesized
    groups inside each other, counted before lark parses (the tree it builds is walked recursively)."""
    depth = 0
    frames: list[int] = []  # the depth at each open parenthesis
    for m in _CONDITION_TOKENS.finditer(text):
        token = m.group()
        if token == "(":
            frames.append(depth)
            depth += 1
        elif token == ")":
            depth = frames.pop() if frames else 0
        elif token == "not":
            depth += 1
        else:
            continue
        if depth > MAX_CONDITION_NESTING:
            return m.start()
    return None


@lru_cache(maxsize=1)
def _parser() -> Any:
    from lark import Lark

    return Lark(_GRAMMAR, parser="lalr", propagate_positions=True, maybe_placeholders=False)


def parse_rule(text: str, index: int) -> ApprovalRule:
    """One rule, or `RuleSyntaxProblem` saying what was expected where."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

    too_deep = _nesting_overflow(text)
    if too_deep is not None:
        raise RuleSyntaxProblem(f"the condition nests more than {MAX_CONDITION_NESTING} deep (`not` and parentheses)",
                              too_deep, codes.LIMIT_EXCEEDED)
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as exc:
        if isinstance(exc, UnexpectedEOF) or (isinstance(exc, UnexpectedToken) and exc.token.type == "$END"):
            column, found = len(text.rstrip()), "the end of the rule"
        else:
            column = max((getattr(exc, "column", 1) or 1) - 1, 0)
            found = repr(text[column]) if isinstance(exc, UnexpectedCharacters) else repr(str(exc.token))  # type: ignore[attr-defined]
        names = getattr(exc, "accepts", None) or getattr(exc, "expected", None) or getattr(exc, "allowed", None) or ()
        expected = sorted({_EXPECTED.get(t, t) for t in names if t != "$END"}) + (["the end of the rule"] if "$END" in names else [])
        wanted = f"; expected {_one_of(expected)}" if expected else ""
        raise RuleSyntaxProblem(f"invalid approval rule {text!r}: unexpected {found}{wanted}", column) from None
    return _rule(tree, text, index)


def _rule(tree: Any, text: str, index: int) -> ApprovalRule:
    action, target, *rest = tree.children
    condition = _condition(rest[0]) if rest else None
    return ApprovalRule(action=str(action), target=str(target), target_column=target.column - 1,  # type: ignore[arg-type]
                        condition=condition, text=text.strip(), index=index)


def _condition(tree: Any) -> Condition:
    kind = tree.data
    if kind in ("or_expr", "and_expr"):
        return Junction(op=kind[:-5], args=tuple(_condition(c) for c in tree.children))
    if kind == "negation":
        return Negation(arg=_condition(tree.children[0]))
    param = _param(tree.children[0])
    if kind == "glob":
        token = tree.children[2]
        return Compare(op="glob", param=param, value=str(token)[1:-1], value_column=token.column - 1)
    if kind == "compare":
        op, value = tree.children[1], tree.children[2]
        return Compare(op=str(op), param=param, value=_value(value), value_column=value.meta.column - 1)
    items = tree.children[1]
    values = [c for c in items.children if getattr(c, "data", None) == "value"]
    return Compare(op="in", param=param, value=tuple(_value(v) for v in values),
                   value_column=items.meta.column - 1, value_columns=tuple(v.meta.column - 1 for v in values))


def _param(tree: Any) -> Param:
    name, *steps = tree.children
    path: list[str | int] = [str(name)]
    for step in steps:
        if step.type == "ANY":
            path.append(ANY_ELEMENT)
        elif step.type == "EVERY":
            path.append(EVERY_ELEMENT)
        else:
            path.append(int(str(step)[1:-1]) if step.type == "INDEX" else str(step)[1:])
    return Param(path=tuple(path), column=name.column - 1)


def _value(tree: Any) -> Any:
    token = tree.children[0]
    if token.type == "STRING":
        return str(token)[1:-1]
    if token.type == "NUMBER":
        return float(token) if "." in token else int(token)
    return {"TRUE": True, "FALSE": False, "NULL": None}[token.type]

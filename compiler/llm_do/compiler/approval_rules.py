"""The approvals language: `allow TOOL`, `ask TOOL`, `deny TOOL`.

TOOL is a tool name, the name of a toolset or worker in the worker's `toolsets` (all its tools),
or a glob over tool names (`*`, `write_*`). Rules apply in order; the last one that matches a
tool decides. A lark grammar, so argument conditions can be added without a rewrite.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from functools import lru_cache

from llm_do.runtime.approval_policy import Action

_GRAMMAR = r"""
start: ACTION TARGET
ACTION: "allow" | "ask" | "deny"
TARGET: /[A-Za-z0-9_*?\[\]!-]+/
%import common.WS_INLINE
%ignore WS_INLINE
"""


@dataclass(frozen=True)
class ApprovalRule:
    action: Action
    target: str
    index: int

    def matches(self, tool: str, toolset: str | None) -> bool:
        return self.target == toolset or fnmatch.fnmatchcase(tool, self.target)


class RuleSyntaxError(ValueError):
    def __init__(self, message: str, column: int) -> None:
        super().__init__(message)
        self.column = column


@lru_cache(maxsize=1)
def _parser():
    from lark import Lark

    return Lark(_GRAMMAR, parser="lalr")


def parse_rule(text: str, index: int) -> ApprovalRule:
    from lark.exceptions import UnexpectedInput

    try:
        tree = _parser().parse(text)
    except UnexpectedInput as exc:
        column = getattr(exc, "column", 1) or 1
        raise RuleSyntaxError(
            f"invalid approval rule {text!r}: expected `allow|ask|deny TOOL`", column if column > 0 else 1
        ) from None
    action, target = (str(t) for t in tree.children)
    return ApprovalRule(action, target, index)  # type: ignore[arg-type]


def decide(rules: list[ApprovalRule], tool: str, toolset: str | None, default: str) -> str:
    """The approval of one tool: the last matching rule's action, else the default."""
    decision = default
    for rule in rules:
        if rule.matches(tool, toolset):
            decision = rule.action
    return decision

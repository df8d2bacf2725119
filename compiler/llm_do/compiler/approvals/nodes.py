"""The parsed form of an approval rule: what `grammar` produces and `check` and `lower` read.

Columns are 0-based offsets into the rule's text; `resolve` adds the position of the rule's item
in the .worker file, so a diagnostic points at the exact word.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

from llm_do.bundle.approval import ANY_ELEMENT, EVERY_ELEMENT, Action


@dataclass(frozen=True, kw_only=True)
class Param:
    path: tuple[str | int, ...]
    """Keys and list indices: `argv[0]` is `("argv", 0)`; `argv[*]` (any element) is `("argv", "*")`,
    `recipients[all]` (every element) `("recipients", "[all]")`."""
    column: int

    @property
    def text(self) -> str:
        out = str(self.path[0])
        for step in self.path[1:]:
            out += step if step == EVERY_ELEMENT else f"[{step}]" if isinstance(step, int) or step == ANY_ELEMENT else f".{step}"
        return out


@dataclass(frozen=True, kw_only=True)
class Compare:
    """`param OP value`; OP is `glob` (written `~`), `==`, `!=`, `<`, `<=`, `>`, `>=` or `in`
    (then `value` is a tuple)."""

    op: str
    param: Param
    value: Any
    value_column: int
    value_columns: tuple[int, ...] = ()
    """For `in`: the column of each listed value."""


@dataclass(frozen=True, kw_only=True)
class Junction:
    op: str
    """`and` or `or`."""
    args: tuple[Condition, ...]


@dataclass(frozen=True, kw_only=True)
class Negation:
    arg: Condition


Condition = Compare | Junction | Negation


@dataclass(frozen=True, kw_only=True)
class ApprovalRule:
    action: Action
    target: str
    target_column: int
    condition: Condition | None
    text: str
    index: int
    """Position in the worker's `approvals` list."""

    def targets(self, tool: str, group: str | None) -> bool:
        """Whether the rule names this tool: by name, by its toolset or worker, or by a glob."""
        return self.target == group or fnmatch.fnmatchcase(tool, self.target)


def compares(condition: Condition) -> list[Compare]:
    """Every comparison in a condition, in source order."""
    if isinstance(condition, Compare):
        return [condition]
    if isinstance(condition, Negation):
        return compares(condition.arg)
    return [c for arg in condition.args for c in compares(arg)]

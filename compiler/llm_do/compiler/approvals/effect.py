"""What a worker's rules do to each tool: the approval a call gets when no conditional rule
decides it, and the rules that can never make a difference (A006).

The order of precedence, the same as `llm_do.bundle.approval.decide` applies per call: a `deny` that
matches wins wherever it stands; between `allow` and `ask` the last matching rule decides; the
tool's default applies only when no rule matches.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from llm_do.bundle.approval import DENY

if TYPE_CHECKING:
    from .nodes import ApprovalRule


def unconditional_approval(rules: Sequence[ApprovalRule], default: str) -> str:
    """The tool's approval from the rules without a condition (the bundle's `approval`)."""
    plain = [r for r in rules if r.condition is None]
    if any(r.action == DENY for r in plain):
        return DENY
    return plain[-1].action if plain else default


def overruled_by(rule: ApprovalRule, rules: Sequence[ApprovalRule]) -> ApprovalRule | None:
    """The rule that decides, for one tool, every call `rule` matches (so `rule` has no effect
    there), or None. `rules` are the rules applying to that tool, in source order."""
    for other in rules:
        if other is rule or other.condition is not None or other.action != DENY:
            continue
        if rule.action != DENY or rule.condition is not None or other.index < rule.index:
            return other
    if rule.action != DENY:
        for other in rules:
            if other.index > rule.index and other.condition is None and other.action != DENY:
                return other
    return None

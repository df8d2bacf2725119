"""Rules into the bundle: a condition becomes the JSON tree `bundle_ir.Condition` describes,
which `llm_do.bundle.approval` evaluates with the standard library only."""

from __future__ import annotations

from typing import Any

from .nodes import ApprovalRule, Compare, Condition, Junction, Negation


def condition_tree(condition: Condition) -> dict[str, Any]:
    if isinstance(condition, Junction):
        return {"op": condition.op, "args": [condition_tree(c) for c in condition.args]}
    if isinstance(condition, Negation):
        return {"op": "not", "arg": condition_tree(condition.arg)}
    assert isinstance(condition, Compare)
    value = list(condition.value) if condition.op == "in" else condition.value
    return {"op": condition.op, "param": list(condition.param.path), "value": value}


def rule_entry(rule: ApprovalRule) -> dict[str, Any]:
    """One rule of a tool's `rules` in the bundle."""
    return {"action": rule.action, "when": condition_tree(rule.condition) if rule.condition else None, "text": rule.text}

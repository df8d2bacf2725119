"""Rules into the bundle: a condition becomes the JSON tree `llm_do.bundle.model.Condition` declares,
which `llm_do.bundle.approval` evaluates with the standard library only."""

from __future__ import annotations

from llm_do.bundle.model import Condition as ConditionNode
from llm_do.bundle.model import RuleNode

from .nodes import ApprovalRule, Compare, Condition, Junction, Negation


def condition_tree(condition: Condition) -> ConditionNode:
    if isinstance(condition, Junction):
        return {"op": condition.op, "args": [condition_tree(c) for c in condition.args]}  # type: ignore[typeddict-item]
    if isinstance(condition, Negation):
        return {"op": "not", "arg": condition_tree(condition.arg)}
    assert isinstance(condition, Compare)
    value = list(condition.value) if condition.op == "in" else condition.value
    return {"op": condition.op, "param": list(condition.param.path), "value": value}  # type: ignore[typeddict-item]


def rule_entry(rule: ApprovalRule) -> RuleNode:
    """One rule of a tool's `rules` in the bundle."""
    return {"action": rule.action, "when": condition_tree(rule.condition) if rule.condition else None, "text": rule.text}

"""Approval rules compared by the calls they decide differently (`rule_effects`), with the
runtime's own decision on witness calls: what `diff` says instead of two rule lists."""

from __future__ import annotations

from typing import Any

from llm_do.compiler.analysis.rule_effects import same_rules, shifts


def rule(action: str, when: dict[str, Any] | None, text: str = "") -> dict[str, Any]:
    return {"action": action, "when": when, "text": text}


def cond(op: str, param: str, value: Any) -> dict[str, Any]:
    return {"op": op, "param": [param], "value": value}


def binding(*rules: dict[str, Any], default: str = "ask") -> Any:
    plain = [r["action"] for r in rules if r["when"] is None]
    approval = "deny" if "deny" in plain else plain[-1] if plain else default
    return {"toolset": "t", "approval": approval, "rules": list(rules), "default": default}


def texts(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    found = shifts("send", old, new)
    assert found is not None
    return [s.text() for s in found]


def test_a_bound_raised_is_said_as_the_interval_now_allowed() -> None:
    old = binding(rule("allow", cond("<", "count", 10)))
    new = binding(rule("allow", cond("<", "count", 100)))
    assert texts(old, new) == ["send(count >= 10 and < 100) now runs without asking (before: asked)"]


def test_two_parameters_name_only_the_one_that_matters() -> None:
    old = binding(rule("allow", {"op": "and", "args": [cond("==", "to", "team"), cond("glob", "subject", "report *")]}))
    new = binding(rule("allow", cond("==", "to", "team")))
    assert texts(old, new) == ["send(subject not ~ 'report *', to == 'team') now runs without asking (before: asked)"]


def test_a_deny_added_and_an_allow_removed_are_both_said() -> None:
    old = binding(rule("allow", None))
    new = binding(rule("allow", None), rule("deny", cond("in", "to", ["all", "board"])))
    assert texts(old, new) == ["send(to == 'all' or == 'board') is now refused (before: ran without asking)"]


def test_the_same_rules_written_differently_are_the_same() -> None:
    old = binding(rule("allow", cond("glob", "to", "a*"), "allow send(to ~ 'a*')"))
    new = binding(rule("allow", cond("glob", "to", "a*"), 'allow send( to ~ "a*" )'))
    assert same_rules(old, new) and texts(old, new) == []

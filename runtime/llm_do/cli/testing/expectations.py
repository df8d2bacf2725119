"""A case's expectations checked against what its run did: pure functions from the run's record
(output, events, usage, failure) to the list of what did not hold (empty: the case passes)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .cases import CallsExpectation, Expectations, LimitsExpectation, OutputExpectation


@dataclass
class RunOutcome:
    """What a case's run did."""

    outputs: list[Any] = field(default_factory=list)
    """One per turn, as JSON."""
    events: list[dict[str, Any]] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    failure: str | None = None


class CallPattern:
    """A call as an expectation writes it: `[WORKER: ]TOOL[(CONDITION)]`, the condition in the
    syntax of approval rules (parsed by the compiler's rule grammar, judged like a rule's)."""

    def __init__(self, text: str) -> None:
        from llm_do.compiler.approvals.grammar import parse_rule
        from llm_do.compiler.approvals.lower import condition_tree

        self.text = text
        worker, sep, rest = text.partition(":")
        if sep and "(" not in worker:
            self.worker: str | None = worker.strip()
            text = rest
        else:
            self.worker = None
        rule = parse_rule(f"allow {text.strip()}", 0)
        self.tool = rule.target
        self.condition = condition_tree(rule.condition) if rule.condition is not None else None

    def matches(self, event: dict[str, Any]) -> bool:
        import fnmatch

        from llm_do.bundle.approval import holds

        if self.worker is not None and event.get("worker") != self.worker:
            return False
        if not fnmatch.fnmatchcase(str(event.get("tool")), self.tool):
            return False
        return self.condition is None or holds(self.condition, event.get("args") or {}) is True


def check(expect: Expectations, run: RunOutcome, load: Callable[[str], object]) -> list[str]:
    """What did not hold; `load("FILE:NAME")` gives an object of the project (a class, a function)."""
    problems: list[str] = []
    if expect.fails is not None:
        if run.failure is None:
            problems.append(f"the run was expected to fail ({expect.fails!r}) and did not")
        elif expect.fails not in run.failure:
            problems.append(f"the run failed with {run.failure!r}, not with {expect.fails!r}")
    elif run.failure is not None:
        return [f"the run failed: {run.failure}"]
    if expect.output is not None and run.failure is None:
        problems += check_output(expect.output, run.outputs[-1] if run.outputs else None, load)
    if expect.calls is not None:
        problems += check_calls(expect.calls, [e for e in run.events if e.get("event") == "tool_called"])
    if expect.approvals is not None:
        problems += check_approvals(expect.approvals.asked, expect.approvals.denied, expect.approvals.revised, run.events)
    if expect.limits is not None:
        problems += check_limits(expect.limits, run.usage)
    return problems


def _text(output: object) -> str:
    return output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, sort_keys=True)


def check_output(expect: OutputExpectation, output: object, load: Callable[[str], object]) -> list[str]:
    problems = []
    if "equals" in expect.model_fields_set and output != expect.equals:
        problems.append(f"output: expected {_text(expect.equals)!r}, got {_text(output)!r}")
    wanted = [expect.contains] if isinstance(expect.contains, str) else expect.contains or []
    for piece in wanted:
        if piece not in _text(output):
            problems.append(f"output: does not contain {piece!r} (got {_text(output)[:200]!r})")
    if expect.schema_ref is not None:
        problems += _schema_problems(expect.schema_ref, load(expect.schema_ref), output)
    if expect.predicate is not None:
        function = load(expect.predicate)
        if not callable(function):
            problems.append(f"output: {expect.predicate} is not a function")
        else:
            try:
                verdict = function(output)
            except Exception as exc:
                problems.append(f"output: {expect.predicate} raised {type(exc).__name__}: {exc}")
            else:
                if not verdict:
                    problems.append(f"output: {expect.predicate} returned {verdict!r}")
    return problems


def _schema_problems(ref: str, cls: object, output: object) -> list[str]:
    from pydantic import BaseModel, ValidationError

    if not (isinstance(cls, type) and issubclass(cls, BaseModel)):
        return [f"output: {ref} is not a pydantic model"]
    try:
        cls.model_validate(output)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        return [f"output: does not match {ref}: {where + ': ' if where else ''}{first['msg']}"]
    return []


def check_calls(expect: CallsExpectation, calls: list[dict[str, Any]]) -> list[str]:
    problems = []
    position = 0
    for text in expect.in_order:
        pattern = CallPattern(text)
        found = next((i for i in range(position, len(calls)) if pattern.matches(calls[i])), None)
        if found is None:
            made = ", ".join(f"{c['tool']}" for c in calls) or "none"
            problems.append(f"calls: no call {text} after the calls before it in in_order (calls made: {made})")
        else:
            position = found + 1
    for text in expect.any_order:
        if not any(CallPattern(text).matches(c) for c in calls):
            made = ", ".join(f"{c['tool']}" for c in calls) or "none"
            problems.append(f"calls: no call {text} (calls made: {made})")
    for text in expect.never:
        hit = next((c for c in calls if CallPattern(text).matches(c)), None)
        if hit is not None:
            problems.append(f"calls: {text} was called ({hit['worker']} called {hit['tool']} "
                            f"with {json.dumps(hit.get('args'), sort_keys=True)})")
    return problems


def check_approvals(asked: list[str], denied: list[str], revised: list[str], events: list[dict[str, Any]]) -> list[str]:
    decided = [e for e in events if e.get("event") == "approval_decided"]
    kinds = {
        "asked": {e["tool"] for e in decided},
        "denied": {e["tool"] for e in decided if not e["approved"] and e.get("feedback") is None},
        "revised": {e["tool"] for e in decided if e.get("feedback") is not None},
    }
    problems = []
    for kind, tools in (("asked", asked), ("denied", denied), ("revised", revised)):
        for tool in tools:
            if tool not in kinds[kind]:
                got = ", ".join(sorted(kinds[kind])) or "none"
                problems.append(f"approvals: {tool} was not {kind} ({kind}: {got})")
    return problems


def check_limits(expect: LimitsExpectation, usage: dict[str, int]) -> list[str]:
    used = {**usage, "tokens": usage.get("input_tokens", 0) + usage.get("output_tokens", 0)}
    problems = []
    for name in ("requests", "tool_calls", "input_tokens", "output_tokens", "tokens"):
        limit = getattr(expect, name)
        if limit is not None and used.get(name, 0) > limit:
            problems.append(f"limits: {name} {used.get(name, 0)} > {limit}")
    return problems

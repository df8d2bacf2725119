"""Checking a rule's condition against the tools it targets: which of them it applies to (those
having every parameter it tests), and what is wrong with it (A003-A005, A007, A008, A011, A012).

Pure: tools come in as `ToolParams`, findings go out with columns inside the rule's text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from llm_do.bundle.approval import EVERY_ELEMENT, ORDERING_OPS, QUANTIFIERS, compare

from .. import codes
from ..suggest import did_you_mean
from .nodes import ApprovalRule, Compare, Condition, Junction, Negation, compares
from .params import ToolParams, fits, json_type, types_of, values_of
from .path_globs import misplaced


@dataclass(frozen=True, kw_only=True)
class Finding:
    code: codes.Rule
    message: str
    column: int
    """0-based offset in the rule's text."""
    hint: str | None = None


_PATH_NAME = re.compile(r"(^|_)(path|paths|file|filename|dir|directory|folder)$", re.I)


def check_condition(rule: ApprovalRule, candidates: dict[str, ToolParams]) -> tuple[list[str], list[Finding]]:
    """The tools among `candidates` the rule applies to, and the findings about its condition."""
    assert rule.condition is not None
    tests = compares(rule.condition)
    applicable = [name for name, params in candidates.items()
                  if all(params.lookup(t.param.path) is not None for t in tests)]
    if not applicable:
        return [], [_unknown_param(rule, tests, candidates)]
    findings: dict[tuple[codes.Rule, int], Finding] = {}
    for name in applicable:
        for finding in _type_findings(tests, candidates[name], name):
            findings.setdefault((finding.code, finding.column), finding)
    if findings:
        return applicable, list(findings.values())
    out: list[Finding] = []
    if all(_static(rule.condition, candidates[name]) is False for name in applicable):
        out.append(Finding(code=codes.APPROVAL_RULE_NEVER_MATCHES, column=rule.target_column,
                           hint=_listed_values(tests, candidates[applicable[0]]),
                           message=f"'{rule.text}' can never match: no call of {_names(applicable)} satisfies its condition"))
    raw = [name for name in applicable if not candidates[name].normalized]
    for test in tests:
        if test.op == "glob" and raw and _path_like(test):
            out.append(Finding(
                code=codes.RAW_PATH_CONDITION, column=test.param.column,
                message=f"'{test.param.text} ~ {test.value!r}' is matched against the raw argument of {_names(raw)}, "
                        "which no toolset normalizes (`..`, `.` and symbolic links are not resolved)",
                hint="check the path inside the tool, or use a stdlib filesystem toolset, whose paths rules see resolved"))
            break
    out += _root_findings(tests, [candidates[name] for name in applicable])
    out += _positional_findings(rule.condition, tests, [candidates[name] for name in applicable])
    return applicable, out


def _positional_findings(condition: Condition, tests: list[Compare], params: list[ToolParams]) -> list[Finding]:
    """A012: a test of one `argv` position against an operand (not a flag) where that position
    holds different things in different calls: `argv[1] == 'secret.txt'` misses `cat a secret.txt`.
    Positions a command fixes (mv's source and destination: `x-fixed-positions`) pass when the
    condition pins the command (`argv[0] == 'mv'`)."""
    fixed: dict[str, set[int]] = {}
    for p in params:
        for command, positions in ((p.derived.get("argv") or {}).get("x-fixed-positions") or {}).items():
            fixed.setdefault(command, set()).update(positions)
    if not fixed and not any("argv" in p.derived for p in params):
        return []
    pinned = _pinned_commands(condition)
    out: list[Finding] = []
    for test in tests:
        path = test.param.path
        if path[0] != "argv" or len(path) != 2 or not isinstance(path[1], int) or path[1] < 1:
            continue
        values = test.value if test.op == "in" else (test.value,)
        if test.op not in ("==", "glob", "in") or not any(isinstance(v, str) and not v.startswith("-") for v in values):
            continue
        if pinned and all(path[1] in fixed.get(command, ()) for command in pinned):
            continue
        commands = ", ".join(f"{c} (argv[{', '.join(str(i) for i in sorted(fixed[c]))}])" for c in sorted(fixed))
        out.append(Finding(
            code=codes.POSITIONAL_ARGV_RULE, column=test.param.column,
            message=f"'{test.param.text}' tests one position of the command line, which holds another operand, or a "
                    "flag, when a call gives more operands than you expect (`cat a b` has two)",
            hint="test every position with `argv[*]` (any element)"
                 + (f"; or pin the command with argv[0] == ..., whose positions are fixed for {commands}" if commands else "")))
    return out


def _pinned_commands(condition: Condition) -> set[str] | None:
    """The commands `argv[0]` must be for the condition to hold (a test of it, alone or in a
    top-level `and`), or None."""
    parts = condition.args if isinstance(condition, Junction) and condition.op == "and" else (condition,)
    for part in parts:
        if isinstance(part, Compare) and part.param.path == ("argv", 0):
            if part.op == "==" and isinstance(part.value, str):
                return {part.value}
            if part.op == "in" and all(isinstance(v, str) for v in part.value):
                return set(part.value)
    return None


def _root_findings(tests: list[Compare], params: list[ToolParams]) -> list[Finding]:
    """A011: a glob over a path a rule sees relative to the toolset's root that cannot match
    what it names there (it repeats the root, or has `./`, `..`, a leading or trailing `/`)."""
    out: list[Finding] = []
    for test in tests:
        path = test.param.path
        if test.op != "glob" or not isinstance(test.value, str) or (path[0] == "argv" and path[1:2] in ((), (0,))):
            continue
        found = next((m for p in params if path[0] in p.path_params and (m := misplaced(test.value, p.root))), None)
        if found is not None:
            out.append(Finding(code=codes.PATH_GLOB_OUTSIDE_ROOT, column=test.value_column,
                               message=f"glob {test.value!r} on '{test.param.text}' {found.reason}",
                               hint=f"write '{found.fixed}'" if found.fixed else "leave the rule out: it can never match"))
    return out


def _listed_values(tests: list[Compare], params: ToolParams) -> str | None:
    """'argv[0]' is one of: ls, mv — what the schema allows of the parameters tested."""
    shown = []
    for test in tests:
        schema = params.lookup(test.param.path)
        values = values_of(schema, params.schema) if schema is not None else None
        if values is not None:
            shown.append(f"'{test.param.text}' is one of: {', '.join(_literal(v) for v in values)}")
    return "; ".join(dict.fromkeys(shown)) or None


def _names(names: list[str]) -> str:
    return ", ".join(f"'{n}'" for n in names)


def _unknown_param(rule: ApprovalRule, tests: list[Compare], candidates: dict[str, ToolParams]) -> Finding:
    known = sorted({n for p in candidates.values() for n in p.names()})
    for test in tests:
        if not any(p.lookup(test.param.path) is not None for p in candidates.values()):
            head = str(test.param.path[0])
            where = f"'{rule.target}'" if len(candidates) != 1 else f"tool '{next(iter(candidates))}'"
            what = f"no parameter '{test.param.text}'" if any(head in p.names() for p in candidates.values()) \
                else f"no parameter '{head}'"
            hint = did_you_mean(head, known) if head not in known else None
            if hint is None and known:
                hint = f"parameters: {', '.join(known)}"
            return Finding(code=codes.UNKNOWN_RULE_PARAMETER, column=test.param.column, message=f"{where} has {what}", hint=hint)
    return Finding(code=codes.UNKNOWN_RULE_PARAMETER, column=tests[0].param.column,
                   message=f"no tool of '{rule.target}' has every parameter the condition tests",
                   hint="split the rule: one per tool")


def _type_findings(tests: list[Compare], params: ToolParams, tool: str) -> list[Finding]:
    out: list[Finding] = []
    for test in tests:
        schema = params.lookup(test.param.path)
        assert schema is not None
        types = types_of(schema, params.schema)
        name = test.param.text
        if test.op == "glob":
            if types is not None and "string" not in types:
                out.append(Finding(code=codes.GLOB_ON_NON_STRING, column=test.param.column,
                                   message=f"'{name}' of '{tool}' is {_kinds(types)}, not a string: `~` matches strings only",
                                   hint="compare it with ==, !=, <, <=, >, >= or in"))
        elif test.op in ORDERING_OPS:
            if json_type(test.value) not in ("integer", "number"):
                out.append(Finding(code=codes.RULE_TYPE_MISMATCH, column=test.value_column,
                                   message=f"`{test.op}` compares numbers; {_literal(test.value)} is not a number"))
            elif types is not None and "number" not in types:
                out.append(Finding(code=codes.RULE_TYPE_MISMATCH, column=test.param.column,
                                   message=f"'{name}' of '{tool}' is {_kinds(types)}; `{test.op}` compares numbers"))
        else:
            values = test.value if test.op == "in" else (test.value,)
            columns = test.value_columns if test.op == "in" else (test.value_column,)
            for value, column in zip(values, columns):
                if not fits(value, types):
                    out.append(Finding(code=codes.RULE_TYPE_MISMATCH, column=column,
                                       message=f"'{name}' of '{tool}' is {_kinds(types or frozenset())}: it never equals "
                                               f"{_literal(value)}, {_kinds(frozenset({json_type(value)}))}"))
    return out


def _kinds(types: frozenset[str]) -> str:
    """`frozenset({'string', 'null'})` -> 'null or a string'."""
    shown = sorted({"number" if t == "integer" else t for t in types})
    return " or ".join("null" if t == "null" else ("an " if t in ("array", "object") else "a ") + t for t in shown)


def _literal(value: object) -> str:
    if isinstance(value, str):
        return repr(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _path_like(test: Compare) -> bool:
    leaf = next((s for s in reversed(test.param.path) if isinstance(s, str) and s not in QUANTIFIERS), "")
    return "/" in str(test.value) or bool(_PATH_NAME.search(leaf))


def _static(condition: Condition, params: ToolParams) -> bool | None:
    """The condition's value when the schema's listed values (`enum`) settle it, else None."""
    if isinstance(condition, Negation):
        inner = _static(condition.arg, params)
        return None if inner is None else not inner
    if isinstance(condition, Junction):
        results = [_static(arg, params) for arg in condition.args]
        if condition.op == "and":
            return False if False in results else (True if all(r is True for r in results) else None)
        return True if True in results else (False if all(r is False for r in results) else None)
    every = EVERY_ELEMENT in condition.param.path  # it holds of an empty list, whatever the comparison
    if condition.op == "in" and not condition.value:
        return None if every else False
    schema = params.lookup(condition.param.path)
    values = values_of(schema, params.schema) if schema is not None else None
    if values is None:
        return None
    outcomes = {compare(condition.op, v, list(condition.value) if condition.op == "in" else condition.value) for v in values}
    if len(outcomes) != 1 or (every and False in outcomes):
        return None
    return outcomes.pop()

"""The approval vocabulary, in one place: what a tool call may need, who may run it, and how a run
answers the calls that must be asked (its types, `Action`, `Approval`, `ApprovalMode`, from
`actions`, below the model).

Standard library only: the compiler (rules, lowering), the stdlib descriptors, the bundle model and
the runtime gate all name these, and none of them should pull in more to do so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Final, TypeGuard

from .actions import Action as Action
from .actions import Approval as Approval
from .actions import ApprovalMode as ApprovalMode

if TYPE_CHECKING:  # the model is for the type checker: `exec` does not load it
    from .model import Condition, RuleNode

ALLOW: Final = "allow"
ASK: Final = "ask"
DENY: Final = "deny"
AUTO: Final = "auto"

PYTHON_TOOL_DEFAULT: Final[Action] = ASK
"""Python tools (and tools of opaque toolsets) are asked unless a rule says otherwise: the
compiler cannot see what they do."""

WORKER_CALL_DEFAULT: Final[Action] = ALLOW
"""Calling another worker is allowed: what the callee may do is gated at its own tools."""

MCP_TOOL_DEFAULT: Final[Action] = ASK
"""MCP tools are asked unless a rule says otherwise: a server's tool does what its server does."""

APPROVAL_METADATA_KEY: Final = "llm_do_approval"
"""Tool metadata carrying the approval of a tool the bundle could not list (opaque toolsets)."""

TOOLSET_METADATA_KEY: Final = "llm_do_toolset"
"""Tool metadata carrying the bundle key of an opaque toolset, so an approval names its toolset."""

# --- what the rules say about one call ------------------------------------------------------------
#
# A tool whose approval depends on its arguments carries, in the bundle, the worker's rules that
# target it (`WorkerTool.rules`) with each condition lowered to a JSON tree (`model.Condition`).
# The functions below evaluate that tree on the call's normalized arguments; they are what
# `ApprovalGate.decision_for` asks when a tool has rules. No lark and no compiler: the tree is data.

ORDERING_OPS: Final = frozenset({"<", "<=", ">", ">="})


class _Missing:
    """A parameter the call lacks, a path its arguments do not have, or a path argument the
    toolset could not normalize (it leads out of the root, so the tool will refuse it)."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()

ANY_ELEMENT: Final = "*"
"""A step of a condition's path standing for some element of a list (`argv[*]`): the comparison
holds when it holds of any element (of an empty list, never). A rule's key is a name, so `*` is
never one."""

EVERY_ELEMENT: Final = "[all]"
"""A step of a condition's path standing for every element of a list (`recipients[all]`): the
comparison holds when it holds of each element (of an empty list, always: no element fails it).
Written with its brackets, as no key can be."""

QUANTIFIERS: Final = frozenset({ANY_ELEMENT, EVERY_ELEMENT})


def lookup(args: object, path: Sequence[str | int]) -> object:
    """The value at `path` (keys and list indices) in the arguments, or MISSING."""
    value = args
    for step in path:
        if isinstance(step, int) and not isinstance(step, bool):
            if not isinstance(value, (list, tuple)) or not -len(value) <= step < len(value):
                return MISSING
            value = value[step]
        elif isinstance(value, dict) and step in value:
            value = value[step]
        else:
            return MISSING
    return value


def is_number(value: object) -> TypeGuard[int | float]:
    """A JSON number: a boolean is none (Python says `True == 1`)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def same_value(a: object, b: object) -> bool:
    """JSON equality: `1 == 1.0`, but a boolean equals no number (Python says `True == 1`)."""
    if is_number(a) and is_number(b):
        return a == b
    if type(a) is not type(b) and not (isinstance(a, (list, tuple)) and isinstance(b, (list, tuple))):
        return False
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):  # b is a list when a is (above)
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    return bool(a == b)


def compare(op: str, actual: object, expected: object) -> bool:
    """One comparison of a value (never MISSING) with a rule's literal (a glob's is a string, an
    `in`'s a list: the compiler writes them so; any other raises TypeError, as using it would)."""
    if op == "glob":
        if not isinstance(actual, str):
            return False
        if not isinstance(expected, str):
            raise TypeError(f"a glob in an approval condition is a string, not {expected!r}")
        return glob_matches(expected, actual)
    if op == "==":
        return same_value(actual, expected)
    if op == "!=":
        return not same_value(actual, expected)
    if op == "in":
        if not isinstance(expected, Iterable):
            raise TypeError(f"`in` in an approval condition takes a list, not {expected!r}")
        return any(same_value(actual, v) for v in expected)
    if op in ORDERING_OPS:
        if not (is_number(actual) and is_number(expected)):
            return False
        if op == "<":
            return actual < expected
        if op == "<=":
            return actual <= expected
        if op == ">":
            return actual > expected
        return actual >= expected
    raise ValueError(f"unknown operator {op!r} in an approval condition")


def holds(condition: Condition, args: Mapping[str, object]) -> bool | None:
    """Whether a condition tree is true of the arguments; None when they cannot settle it.

    A comparison on a MISSING value is unsettled (None) and `not` leaves it so; `and` is false
    when one side is false, `or` true when one side is true, whatever the other (Kleene logic).
    So `not path ~ 'secret/**'` does not hold for a path that leads out of the root. A comparison
    over `argv[*]` is the `or` of the comparisons of each element (true if one is, else unsettled
    if one is, else false: none of an empty list), over `recipients[all]` their `and` (false if one
    is, else unsettled if one is, else true: all of an empty list); a path with several such steps
    nests them in order (`a[*].b[all]`: some `a` all of whose `b` hold).
    """
    if condition["op"] == "not":
        inner = holds(condition["arg"], args)
        return None if inner is None else not inner
    if condition["op"] == "and" or condition["op"] == "or":
        return _kleene((holds(part, args) for part in condition["args"]), settles=condition["op"] == "or")
    return _quantified(args, condition["param"], condition["op"], condition["value"])


def _kleene(values: Iterable[bool | None], *, settles: bool) -> bool | None:
    """An `or` (`settles` true) or an `and` (`settles` false) in Kleene logic: `settles` as soon as one
    value is, else unsettled if one is, else the other truth value (that of no values at all)."""
    unsettled = False
    for value in values:
        if value is settles:
            return settles
        unsettled = unsettled or value is None
    return None if unsettled else not settles


def _quantified(value: object, path: Sequence[str | int], op: str, expected: object) -> bool | None:
    """One comparison at `path`, each `[*]` step the `or` and each `[all]` step the `and` (Kleene)
    of the rest of the path over the elements of a list; unsettled where the path does not go on
    (a quantifier over what is not a list, too)."""
    for i, step in enumerate(path):
        if isinstance(step, str) and step in QUANTIFIERS:
            if not isinstance(value, (list, tuple)):
                return None
            return _kleene((_quantified(item, path[i + 1:], op, expected) for item in value), settles=step == ANY_ELEMENT)
        value = lookup(value, (step,))
        if value is MISSING:
            return None
    return compare(op, value, expected)


def deciding_rule(rules: Sequence[RuleNode], args: Mapping[str, object]) -> int | None:
    """The index of the rule that decides one call: a matching `deny` wherever it stands, else the
    last matching rule; None when no rule matches. A rule matches when it has no condition (`when`
    null) or its condition holds (an unsettled condition does not)."""
    found: int | None = None
    for index, rule in enumerate(rules):
        when = rule.get("when")
        if when is None or holds(when, args) is True:
            if rule["action"] == DENY:
                return index
            found = index
    return found


def decide(rules: Sequence[RuleNode], args: Mapping[str, object], default: Approval) -> Approval:
    """The approval of one call: the deciding rule's action (`deciding_rule`), else the tool's default."""
    index = deciding_rule(rules, args)
    return default if index is None else rules[index]["action"]


def confined(rules: Sequence[RuleNode], confined_by: Sequence[int], args: Mapping[str, object]) -> bool:
    """Whether one call is allowed by a rule whose condition holds its destinations to values the
    rule names (`WorkerTool.confined_by`, found by the build): then it is no egress for the flow
    guard (spec/runtime.md, "Information flow")."""
    index = deciding_rule(rules, args)
    return index is not None and index in confined_by and rules[index]["action"] == ALLOW


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """The glob as a regular expression over the whole value: `*` and `?` stay within one path
    segment, `**` crosses `/`, and `**/` also matches no directory at all (`**/*.py` matches
    `a.py`, `src/**/x` matches `src/x`). Every other character stands for itself."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i) and (i == 0 or pattern[i - 1] == "/"):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out), re.DOTALL)


def glob_matches(pattern: str, value: str) -> bool:
    return glob_regex(pattern).fullmatch(value) is not None

"""The stdlib-only evaluator of approval rules (`llm_do.bundle.approval`): every operator, the glob
dialect, unsettled conditions, and the order of precedence (deny wins, else the last matching
allow/ask, else the default). These pin every branch: the module is a mutation-testing target."""

from __future__ import annotations

from typing import Any

import pytest

from llm_do.bundle.approval import MISSING, compare, decide, glob_matches, holds, lookup, same_value


def cond(op: str, param: list[Any], value: Any) -> dict[str, Any]:
    return {"op": op, "param": param, "value": value}


@pytest.mark.parametrize(("pattern", "value", "matches"), [
    ("output/**", "output/a.txt", True),
    ("output/**", "output/a/b/c.txt", True),
    ("output/**", "output", False),
    ("output/**", "outputs/a", False),
    ("*.py", "a.py", True),
    ("*.py", "src/a.py", False),  # `*` does not cross `/`
    ("**/*.py", "a.py", True),  # a leading `**/` also matches no directory
    ("**/*.py", "src/deep/a.py", True),
    ("src/**/x", "src/x", True),
    ("src/**/x", "src/a/b/x", True),
    ("a?c", "abc", True),
    ("a?c", "a/c", False),  # nor does `?`
    ("a**", "a/b/c", True),  # `**` does
    (".env*", ".env", True),
    (".env*", ".env.local", True),
    (".env*", "x/.env", False),
    ("a.b", "axb", False),  # everything else stands for itself
    ("[ab]", "a", False),
    ("[ab]", "[ab]", True),
    ("Out/*", "out/x", False),  # case-sensitive
    ("*", "", True),
    ("x", "x\ny", False),
    ("docs/*/private.md", "docs/team/private.md", True),  # a `*` followed by more pattern
    ("docs/*/private.md", "docs/a/b/private.md", False),
    ("*.py", "apy", False),  # the `.` after `*` is a dot, not any character
    ("logs/**.log", "logs/a/b.log", True),  # `**` inside a segment crosses `/`
    ("logs/**.log", "logs/catalog", False),  # ... but the rest must still match
    ("**/secret", "a/secret", True),
    ("a/**/", "a/", True),
])
def test_glob_dialect(pattern: str, value: str, matches: bool) -> None:
    assert glob_matches(pattern, value) is matches


@pytest.mark.parametrize(("op", "actual", "expected", "result"), [
    ("glob", "out/a", "out/*", True),
    ("glob", "src/a", "out/*", False),
    ("glob", 3, "*", False),  # a glob matches strings only
    ("==", "a", "a", True),
    ("==", "a", "b", False),
    ("==", 1, 1.0, True),
    ("==", True, 1, False),  # a boolean equals no number
    ("==", 1, True, False),
    ("==", None, None, True),
    ("==", ["a", 1], ["a", 1], True),
    ("==", ["a", 1], ["a", 2], False),
    ("==", ["a"], ["a", 1], False),
    ("==", "1", 1, False),
    ("!=", "a", "b", True),
    ("!=", "a", "a", False),
    ("!=", True, 1, True),
    ("<", 1, 2, True),
    ("<", 2, 2, False),
    ("<=", 2, 2, True),
    ("<=", 3, 2, False),
    (">", 3, 2, True),
    (">", 2, 2, False),
    (">=", 2, 2, True),
    (">=", 1, 2, False),
    ("<", "a", 2, False),  # ordering compares numbers only
    ("<", True, 2, False),
    (">=", 2, "1", False),
    ("in", "git", ["git", "mv"], True),
    ("in", "rm", ["git", "mv"], False),
    ("in", 1, [True], False),
    ("in", "x", [], False),
    ("==", ["a"], "a", False),  # a list value never equals a string
    ("==", "a", ["a"], False),
    ("==", ["a", "b"], "ab", False),
    ("!=", ["a"], "a", True),
    ("in", ["a"], ["a", "b"], False),
    ("==", ("a",), ["a"], True),  # a tuple is a list
    ("==", ["a"], ("a",), True),
    ("==", [True], [1], False),  # element by element, as JSON
    ("==", [1], [1.0], True),
])
def test_each_operator(op: str, actual: Any, expected: Any, result: bool) -> None:
    assert compare(op, actual, expected) is result


def test_an_unknown_operator_is_refused() -> None:
    with pytest.raises(ValueError, match="^unknown operator '~=' in an approval condition$"):
        compare("~=", "a", "a")


def test_the_ordering_operators_are_the_four() -> None:
    from llm_do.bundle.approval import ORDERING_OPS

    assert ORDERING_OPS == {"<", "<=", ">", ">="}


def test_same_value_of_tuples_and_lists() -> None:
    assert same_value(("a",), ["a"])
    assert not same_value({"a": 1}, {"a": 2})


@pytest.mark.parametrize(("path", "value"), [
    (["path"], "a"),
    (["argv", 0], "ls"),
    (["argv", -1], "x"),
    (["argv", 2], MISSING),
    (["pair", 1], "b"),  # a tuple is indexed like a list
    (["argv", -3], MISSING),
    (["opts", "depth"], 2),
    (["opts", "nope"], MISSING),
    (["nope"], MISSING),
    (["path", 0], MISSING),  # not a list
    (["argv", "0"], MISSING),  # a key into a list
    (["opts", True], MISSING),
])
def test_lookup(path: list[Any], value: Any) -> None:
    args = {"path": "a", "argv": ["ls", "x"], "opts": {"depth": 2}, "pair": ("a", "b")}
    assert lookup(args, path) == value if value is not MISSING else lookup(args, path) is MISSING


A = cond("==", ["a"], 1)
B = cond("==", ["b"], 1)
GONE = cond("==", ["gone"], 1)


@pytest.mark.parametrize(("condition", "args", "result"), [
    (A, {"a": 1}, True),
    (A, {"a": 2}, False),
    (GONE, {}, None),  # a parameter the call lacks settles nothing
    ({"op": "not", "arg": A}, {"a": 1}, False),
    ({"op": "not", "arg": A}, {"a": 2}, True),
    ({"op": "not", "arg": GONE}, {}, None),  # `not` of unsettled stays unsettled
    ({"op": "and", "args": [A, B]}, {"a": 1, "b": 1}, True),
    ({"op": "and", "args": [A, B]}, {"a": 1, "b": 2}, False),
    ({"op": "and", "args": [GONE, A]}, {"a": 2}, False),  # false whatever the unsettled side
    ({"op": "and", "args": [GONE, A]}, {"a": 1}, None),
    ({"op": "or", "args": [A, B]}, {"a": 2, "b": 1}, True),
    ({"op": "or", "args": [A, B]}, {"a": 2, "b": 2}, False),
    ({"op": "or", "args": [GONE, A]}, {"a": 1}, True),  # true whatever the unsettled side
    ({"op": "or", "args": [GONE, A]}, {"a": 2}, None),
    ({"op": "or", "args": [{"op": "and", "args": [A, {"op": "not", "arg": B}]}, cond("in", ["c"], ["x"])]},
     {"a": 1, "b": 2, "c": "y"}, True),
])
def test_holds(condition: dict[str, Any], args: dict[str, Any], result: bool | None) -> None:
    assert holds(condition, args) is result


SOME = cond("glob", ["to", "*"], "*@us.com")
EVERY = cond("glob", ["to", "[all]"], "*@us.com")


@pytest.mark.parametrize(("to", "some", "every"), [
    (["a@us.com", "b@us.com"], True, True),
    (["a@us.com", "x@them.com"], True, False),  # one outside: some, not every
    (["x@them.com"], False, False),
    ([], False, True),  # of an empty list: none holds, every one does (none fails)
    (["a@us.com", 3], True, False),  # a non-string fails the glob
    ("a@us.com", None, None),  # not a list: unsettled
    (None, None, None),
    (MISSING, None, None),  # the call lacks it
])
def test_any_and_every_element(to: Any, some: bool | None, every: bool | None) -> None:
    args = {} if to is MISSING else {"to": to}
    assert (holds(SOME, args), holds(EVERY, args)) == (some, every)


@pytest.mark.parametrize(("people", "some", "every"), [
    ([{"mail": "a@us.com"}, {"mail": "b@us.com"}], True, True),
    ([{"mail": "a@us.com"}, {"name": "b"}], True, None),  # one without the key: unsettled unless another decides
    ([{"mail": "x@them.com"}, {"name": "b"}], None, False),
])
def test_a_quantifier_over_missing_keys_is_settled_by_the_elements_that_decide(people: list[Any], some: Any, every: Any) -> None:
    path = ["people", "*", "mail"]
    assert holds(cond("glob", path, "*@us.com"), {"people": people}) is some
    assert holds(cond("glob", ["people", "[all]", "mail"], "*@us.com"), {"people": people}) is every


@pytest.mark.parametrize(("groups", "result"), [
    ([[1, 1], [2]], True),  # the first group is all ones
    ([[2], [1, 2]], False),
    ([[2], []], True),  # an empty group: all of it holds
    ([], False),  # no group at all
])
def test_quantifiers_nest_in_path_order(groups: list[Any], result: bool) -> None:
    """`g[*][all] == 1`: some group all of whose elements are 1."""
    assert holds(cond("==", ["g", "*", "[all]"], 1), {"g": groups}) is result


@pytest.mark.parametrize("to", [["a@us.com"], ["a@us.com", "x@them.com"], [], ["x@them.com"]])
def test_every_element_is_the_negation_of_some_element_failing(to: list[str]) -> None:
    """`to[all] ~ G` is `not` (some `to` fails `~ G`): what `[*]` alone cannot say, as there is no
    negated glob."""
    fails = {"op": "not", "arg": cond("glob", ["x"], "*@us.com")}
    some_fails = any(holds(fails, {"x": t}) for t in to)
    assert holds(EVERY, {"to": to}) is (not some_fails)


def rule(action: str, when: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"action": action, "when": when, "text": action}


PY = cond("glob", ["path"], "**/*.py")
OUT = cond("glob", ["path"], "output/**")


@pytest.mark.parametrize(("rules", "path", "approval"), [
    ([], "a.py", "ask"),  # no rule: the default
    ([rule("allow", OUT)], "x.txt", "ask"),  # no matching rule: the default
    ([rule("allow", OUT)], "output/x.txt", "allow"),
    ([rule("deny", PY), rule("allow")], "a.py", "deny"),  # a deny wins, even before a later allow
    ([rule("allow"), rule("deny", PY)], "a.py", "deny"),
    ([rule("deny", PY), rule("allow")], "a.txt", "allow"),
    ([rule("ask"), rule("allow", OUT)], "output/a", "allow"),  # allow/ask: the last matching decides
    ([rule("allow", OUT), rule("ask")], "output/a", "ask"),
    ([rule("allow"), rule("ask", OUT)], "x", "allow"),
    ([rule("deny", cond("glob", ["gone"], "*")), rule("allow", {"op": "not", "arg": cond("glob", ["gone"], "*")})],
     "x", "ask"),  # unsettled conditions match nothing
])
def test_decide(rules: list[dict[str, Any]], path: str, approval: str) -> None:
    assert decide(rules, {"path": path}, "ask") == approval


def test_decide_keeps_auto_for_the_toolset() -> None:
    assert decide([rule("deny", PY)], {"path": "a.txt"}, "auto") == "auto"


def test_the_vocabulary_is_the_bundle_formats() -> None:
    """The constants the gate and the compiler compare with are the words a bundle holds."""
    from typing import get_args

    from llm_do.bundle.approval import ALLOW, ASK, AUTO, DENY, Action, Approval

    assert (ALLOW, ASK, DENY) == get_args(Action) == ("allow", "ask", "deny")
    assert (ALLOW, ASK, DENY, AUTO) == get_args(Approval)


def test_the_metadata_keys_are_llm_dos_own() -> None:
    """An opaque tool's approval and toolset travel in its metadata under keys a toolset's own
    metadata would not use by accident, and that differ from each other."""
    from llm_do.bundle.approval import APPROVAL_METADATA_KEY, TOOLSET_METADATA_KEY

    assert APPROVAL_METADATA_KEY.startswith("llm_do_") and TOOLSET_METADATA_KEY.startswith("llm_do_")
    assert APPROVAL_METADATA_KEY != TOOLSET_METADATA_KEY


def test_a_missing_value_says_so() -> None:
    assert repr(MISSING) == "MISSING" and lookup({}, ["path"]) is MISSING

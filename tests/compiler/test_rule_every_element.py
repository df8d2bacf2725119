"""`PARAM[all]`, every element of a list, beside `PARAM[*]`, any element: how the compiler parses,
checks and lowers it, which of the two confines an egress to a list of destinations (R012), and
what `diff` says of a rule that uses it (spec/language.md, "Conditions" and "Known destinations")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from llm_do.compiler.analysis.flows.rule_confinement import confining_rules, pins
from llm_do.compiler.analysis.rule_effects import shifts
from llm_do.compiler.approvals.grammar import RuleSyntaxProblem, parse_rule
from llm_do.compiler.approvals.lower import condition_tree
from tests.support.cli import worker, write_project
from tests.support.lint import ANY, lint


def rules(*texts: str) -> list[Any]:
    return [parse_rule(text, i) for i, text in enumerate(texts)]


def test_every_element_parses_beside_any_element() -> None:
    rule = parse_rule("allow send(to[all] ~ '*@us.com' and people[*].mail[all] == 'x')", 0)
    every, nested = rule.condition.args  # type: ignore[union-attr]
    assert every.param.path == ("to", "[all]") and every.param.text == "to[all]" and every.param.column == 11
    assert nested.param.path == ("people", "*", "mail", "[all]") and nested.param.text == "people[*].mail[all]"
    assert condition_tree(rule.condition)["args"][0] == {"op": "glob", "param": ["to", "[all]"], "value": "*@us.com"}  # type: ignore[arg-type, typeddict-item]


@pytest.mark.parametrize("text", ["allow send(to[al] ~ 'x')", "allow send(to[ all] ~ 'x')", "allow send(to[] ~ 'x')"])
def test_a_misspelt_subscript_says_what_fits_there(text: str) -> None:
    with pytest.raises(RuleSyntaxProblem) as caught:
        parse_rule(text, 0)
    assert caught.value.column == text.index("[", text.index("(")) and "`[all]`" in str(caught.value) \
        and "`[*]`" in str(caught.value)


@pytest.mark.parametrize(("condition", "confines"), [
    ("to[all] ~ '*@us.com'", True),
    ("to[all] in ['a@us.com', 'b@us.com']", True),
    ("to == null or to[all] == 'a@us.com'", True),
    ("to[all] ~ '*@us.com' and size < 10", True),
    ("to[*] ~ '*@us.com'", False),  # one recipient named, the others anywhere
    ("to[0] ~ '*@us.com'", False),
    ("not to[all] ~ '*@them.com'", False),  # what `not` leaves may be anywhere
    ("to[all] != 'x@them.com'", False),
    ("to[all] ~ '*@us.com' or size < 10", False),
    ("cc[all] ~ '*@us.com'", False),  # another parameter
])
def test_every_element_confines_a_list_of_destinations_and_any_element_does_not(condition: str, confines: bool) -> None:
    assert pins(parse_rule(f"allow send({condition})", 0).condition, "to") is confines  # type: ignore[arg-type]


def test_a_tool_with_several_destinations_is_confined_by_a_rule_that_holds_each() -> None:
    found = rules("allow send(to[all] ~ '*@us.com')",
                  "allow send(to[all] ~ '*@us.com' and (cc == null or cc[all] ~ '*@us.com'))",
                  "allow send(to[all] ~ '*@us.com' and cc[*] ~ '*@us.com')")
    assert confining_rules(found, ["to"]) == [0, 1, 2]
    assert confining_rules(found, ["cc", "to"]) == [1]


def _binding(*texts: str) -> dict[str, Any]:
    lowered = [{"action": r.action, "when": condition_tree(r.condition) if r.condition else None, "text": r.text}
               for r in rules(*texts)]
    return {"toolset": "t", "approval": "ask", "rules": lowered, "default": "ask"}


def test_diff_says_which_calls_an_every_element_rule_lets_through() -> None:
    """The witness call for `to[all]` holds that one value in every position of the list."""
    found = shifts("send", _binding(), _binding("allow send(to[all] ~ '*@us.com')"))
    assert found is not None
    assert [s.text() for s in found] == ["send(to[all] ~ '*@us.com') now runs without asking (before: asked)"]
    loosened = shifts("send", _binding("allow send(to[all] ~ '*@us.com')"), _binding("allow send(to[*] ~ '*@us.com')"))
    assert loosened and all(s.relaxed for s in loosened)  # a list with one element outside now runs
    assert all("to[*] ~ '*@us.com'" in s.region and "to[*] other than '*@us.com'" in s.region for s in loosened), \
        [s.text() for s in loosened]  # the shared list's witness: one element of each kind, said as such


TOOLS = '''
    from typing import Literal


    def send(recipients: list[str], kinds: list[Literal["memo", "note"]], attachment_paths: list[str], count: int) -> str:
        """Send something to several people."""
        return "sent"


    TOOLS = [send]
'''


@pytest.mark.process
def test_lint_checks_every_element_against_the_list_items(tmp_path: Path) -> None:
    """`[all]` reads the list's item type as `[*]` does; a comparison no item satisfies holds of
    an empty list only, so it is no A007 (`[*]`'s is); a path-like name is a path test (A008)."""
    files = {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"]},
        "tools.py": TOOLS,
        "main.worker": worker("""
            tools: [send]
            approvals:
              - allow send(recipients[all] ~ '*@us.com')
              - allow send(kinds[all] == 'letter')
              - allow send(kinds[*] == 'letter')
              - ask send(attachment_paths[all] ~ '*.key')
              - ask send(recipients[all] > 3)
              - ask send(count[all] == 1)
            """),
    }
    result = lint(write_project(tmp_path, files))
    assert sorted(d["code"] for d in result.diagnostics if d["code"].startswith("A")) == ["A003", "A004", "A007", "A008"]
    result.expect("A007", "main.worker", "send(kinds[*]", column=ANY)
    result.expect("A008", "main.worker", "attachment_paths[all]")
    result.expect("A004", "main.worker", "recipients[all] >", mentions=("'recipients[all]'", "a string"))
    result.expect("A003", "main.worker", "count[all]", mentions=("'count[all]'",))

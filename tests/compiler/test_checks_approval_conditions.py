"""Approval rules with conditions at build time (A001, A003-A009): each finding at the exact word
of the rule in the .worker file, the type checks against each tool's parameters, which tools a
condition on a toolset applies to, and the precedence the bundle records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import PLAIN_ENV, run_cli, worker, write_project
from tests.support.lint import Lint, lint

TOOLS = '''
from pydantic import BaseModel
from pydantic_ai import FunctionToolset


class Options(BaseModel):
    depth: int = 1
    mode: str = "fast"


def export(target_path: str, count: int, force: bool = False, options: Options | None = None) -> str:
    """Export something."""
    return target_path


def make_dynamic():
    return FunctionToolset([])


TOOLS = {"export": export}
TOOLSETS = {"dynamic": make_dynamic}
'''

RULES = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"]},
    "tools.py": TOOLS,
    "main.worker": worker("""
        toolsets: [filesystem_project, shell_file_ops, dynamic, helper]
        tools: [export]
        approvals:
          - ask write_file(pth ~ 'out/**')
          - ask filesystem_project(max_chars > 10)
          - ask filesystem_project(size > 10)
          - ask read_file(offset > '10')
          - ask read_file(path > 3)
          - ask read_file(offset in [1, 'two', 3])
          - ask export(force == 'yes')
          - ask export(count ~ '1*')
          - ask export(options.depth >= 2 and options.mode == 'slow')
          - ask export(options.speed == 2)
          - ask export(target_path ~ 'out/**')
          - "ask shell(argv[0] in ['rm', 'dd'])"
          - ask export(count in [])
          - deny dynamic(x == 1)
          - ask *(path ~ 'a/**')
          - allow write_file(path ~ 'out/**'
        """),
    "helper.worker": worker("toolsets: [filesystem_project_ro]"),
}


@pytest.fixture(scope="module")
def rules(tmp_path_factory: pytest.TempPathFactory) -> Lint:
    return lint(write_project(tmp_path_factory.mktemp("rules"), RULES))


def at(result: Lint, needle: str, nth: int = 1) -> dict:
    """`needle` is `RULE|WORD`: the line of RULE, the column of WORD inside it."""
    rule, _, word = needle.partition("|")
    line, column = result.at("main.worker", rule, nth)
    offset = rule.index(word) if word else 0
    return {"line": line, "column": column + offset}


@pytest.mark.process
def test_an_unknown_parameter_with_did_you_mean(rules: Lint) -> None:
    rules.expect("A003", "main.worker", **at(rules, "ask write_file(pth|pth"), suggests="path", mentions=("'pth'",))


@pytest.mark.process
def test_an_unknown_parameter_of_a_toolset_lists_what_there_is(rules: Lint) -> None:
    d = rules.expect("A003", "main.worker", **at(rules, "ask filesystem_project(size|size"), mentions=("'size'",))
    assert "path" in d["hint"] and "max_chars" in d["hint"]


@pytest.mark.process
def test_a_condition_on_a_toolset_applies_to_its_tools_that_have_the_parameter(rules: Lint) -> None:
    """Only read_file has max_chars: no error for write_file or list_files."""
    assert not [d for d in rules.diagnostics if "max_chars > 10" in d["message"]]


@pytest.mark.process
def test_an_unknown_key_inside_an_object_parameter(rules: Lint) -> None:
    rules.expect("A003", "main.worker", **at(rules, "ask export(options.speed|options"), mentions=("options.speed",))


@pytest.mark.parametrize(("needle", "mentions"), [
    ("ask read_file(offset > '10')|'10'", ("'10'", "numbers")),
    ("ask read_file(path > 3)|path", ("'path'", "a string")),
    ("ask read_file(offset in [1, 'two'|'two'", ("'two'", "a number")),
    ("ask export(force == 'yes')|'yes'", ("'force'", "a boolean")),
])
@pytest.mark.process
def test_a_value_of_the_wrong_type_at_the_value(rules: Lint, needle: str, mentions: tuple[str, ...]) -> None:
    rules.expect("A004", "main.worker", **at(rules, needle), mentions=mentions)


@pytest.mark.process
def test_a_glob_on_a_non_string_at_the_parameter(rules: Lint) -> None:
    rules.expect("A005", "main.worker", **at(rules, "ask export(count ~|count"), mentions=("'count'", "a number"))


@pytest.mark.process
def test_nested_parameters_are_typed(rules: Lint) -> None:
    """`options.depth >= 2 and options.mode == 'slow'` reads through `Options | None` and `$ref`."""
    assert not [d for d in rules.diagnostics if "options.depth" in d["message"] or "options.mode" in d["message"]]


@pytest.mark.process
def test_a_path_glob_on_a_tool_that_sees_raw_arguments_warns(rules: Lint) -> None:
    rules.expect("A008", "main.worker", **at(rules, "ask export(target_path ~|target_path"), mentions=("'export'",))


@pytest.mark.process
def test_a_condition_no_call_can_satisfy_warns(rules: Lint) -> None:
    d = rules.expect("A007", "main.worker", **at(rules, "ask shell(argv[0] in ['rm', 'dd'])|shell"))
    assert "'ls', 'mv'" in d["hint"]
    rules.expect("A007", "main.worker", **at(rules, "ask export(count in [])|export"))


@pytest.mark.process
def test_a_condition_on_an_opaque_toolset_is_an_error(rules: Lint) -> None:
    rules.expect("A009", "main.worker", **at(rules, "deny dynamic(x == 1)|dynamic"), mentions=("'dynamic'",))
    rules.expect("A009", "main.worker", **at(rules, "ask *(path|*"))


@pytest.mark.process
def test_a_syntax_error_at_the_end_of_the_rule(rules: Lint) -> None:
    line, column = rules.at("main.worker", "allow write_file(path ~ 'out/**'")
    d = rules.expect("A001", "main.worker", line=line, column=column + len("allow write_file(path ~ 'out/**'"))
    assert "`)`" in d["message"]


@pytest.mark.process
def test_exactly_these_findings(rules: Lint) -> None:
    assert sorted(rules.codes()) == sorted(
        ["A003"] * 3 + ["A004"] * 4 + ["A005", "A007", "A007", "A008", "A009", "A009", "A001", "Y003", "Y007"]
    ), rules.codes()


@pytest.mark.process
def test_the_text_report_snapshot(rules: Lint, snapshot) -> None:
    result = run_cli("lint", ".", cwd_to=rules.root, env=PLAIN_ENV)
    assert result.exit_code == 1
    assert result.stderr == snapshot


# --- columns inside quoted items, and precedence in the bundle ------------------------------------


@pytest.mark.parametrize("item", ["- \"ask read_file(offst == 1)\"", "- 'ask read_file(offst == 1)'",
                                  "[ask read_file(offst == 1)]", "[\"ask read_file(offst == 1)\"]"])
def test_columns_count_the_quote_of_a_quoted_item(tmp_path: Path, item: str) -> None:
    front = f"toolsets: [filesystem_project]\napprovals:\n  {item}" if item.startswith("-") else \
        f"toolsets: [filesystem_project]\napprovals: {item}"
    result = lint(write_project(tmp_path, {"main.worker": worker(front)}))
    result.expect("A003", "main.worker", "offst", suggests="offset")


def test_an_item_with_escapes_points_at_the_item(tmp_path: Path) -> None:
    front = 'toolsets: [filesystem_project]\napprovals:\n  - "ask\\tread_file(offst == 1)"'
    result = lint(write_project(tmp_path, {"main.worker": worker(front)}))
    result.expect("A003", "main.worker", '"ask', suggests="offset")


def built_tools(tmp_path: Path, *rules: str, toolsets: str = "filesystem_project") -> tuple[dict, Lint]:
    listed = "".join(f"\n  - \"{r}\"" for r in rules)
    root = write_project(tmp_path, {"main.worker": worker(f"toolsets: [{toolsets}]\napprovals:{listed}")})
    result = lint(root)
    assert run_cli("build", root).exit_code == 0
    return json.loads((root / "bundle.lock").read_text())["workers"]["main"]["tools"], result


def test_a_deny_wins_and_the_allow_it_overrules_warns(tmp_path: Path) -> None:
    tools, result = built_tools(tmp_path, "deny filesystem_project", "allow read_file")
    assert tools["read_file"] == {"toolset": "filesystem_project", "approval": "deny"}
    d = result.expect("A006", "main.worker", "allow read_file", mentions=("deny filesystem_project",))
    assert d["related"][0]["line"] == result.at("main.worker", "deny filesystem_project")[0]
    assert "allow the tools you want" in d["hint"]


def test_ask_everything_then_allow_one_tool_keeps_working(tmp_path: Path) -> None:
    tools, result = built_tools(tmp_path, "ask *", "allow read_file")
    assert (tools["read_file"]["approval"], tools["list_files"]["approval"]) == ("allow", "ask")
    assert result.diagnostics == []


@pytest.mark.parametrize(("rules", "overruled"), [
    (("allow write_file(path ~ 'a/**')", "ask write_file"), "allow write_file(path ~ 'a/**')"),  # the later rule decides
    (("ask write_file", "allow write_file"), "ask write_file"),
    (("deny write_file", "deny write_file(path ~ 'a/**')"), "deny write_file(path ~ 'a/**')"),  # denied already
    (("deny filesystem_project", "deny write_file"), "deny write_file"),
])
@pytest.mark.process
def test_rules_that_decide_no_call_warn(tmp_path: Path, rules: tuple[str, ...], overruled: str) -> None:
    _, result = built_tools(tmp_path, *rules)
    # R001 too when the rule that wins is an unconditional allow: the write is asked of nobody
    [d] = [x for x in result.diagnostics if x["code"] != "R001"]
    assert d["code"] == "A006"
    assert d["line"] == result.at("main.worker", overruled)[0]


@pytest.mark.parametrize("rules", [
    ("deny write_file(path ~ 'a/**')", "allow write_file"),  # a conditional deny leaves the allow its other calls
    ("ask write_file", "allow write_file(path ~ 'a/**')"),  # a conditional allow leaves the ask its other calls
    ("allow filesystem_project", "ask write_file"),  # the ask overrules only one of the toolset's tools
])
@pytest.mark.process
def test_rules_that_still_decide_some_calls_do_not_warn(tmp_path: Path, rules: tuple[str, ...]) -> None:
    _, result = built_tools(tmp_path, *rules)
    assert result.diagnostics == []


def test_the_bundle_keeps_rules_only_for_conditionally_gated_tools(tmp_path: Path) -> None:
    tools, _ = built_tools(tmp_path, "allow filesystem_project", "deny write_file(path ~ '**/*.py')", "ask list_files")
    assert tools["read_file"] == {"toolset": "filesystem_project", "approval": "allow"}
    assert tools["list_files"] == {"toolset": "filesystem_project", "approval": "ask"}
    assert tools["write_file"] == {
        "toolset": "filesystem_project", "approval": "allow", "default": "ask",
        "rules": [{"action": "allow", "when": None, "text": "allow filesystem_project"},
                  {"action": "deny", "when": {"op": "glob", "param": ["path"], "value": "**/*.py"},
                   "text": "deny write_file(path ~ '**/*.py')"}],
    }


def test_conditions_lower_to_trees(tmp_path: Path) -> None:
    tools, _ = built_tools(tmp_path, "ask shell(not (argv[0] == 'ls' or argv[1] in ['a', \\\"b\\\"]) and timeout < 2.5)",
                           toolsets="shell_file_ops")
    assert tools["shell"]["rules"][0]["when"] == {"op": "and", "args": [
        {"op": "not", "arg": {"op": "or", "args": [{"op": "==", "param": ["argv", 0], "value": "ls"},
                                                    {"op": "in", "param": ["argv", 1], "value": ["a", "b"]}]}},
        {"op": "<", "param": ["timeout"], "value": 2.5}]}
    assert tools["shell"]["default"] == "auto" and tools["shell"]["approval"] == "auto"


@pytest.mark.process
def test_an_opaque_toolset_gets_its_approval_from_the_rules_without_a_condition(tmp_path: Path) -> None:
    """A deny wins here too: `allow *` after `deny dynamic` leaves the opaque toolset denied."""
    root = write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"]},
        "tools.py": TOOLS,
        "main.worker": worker("toolsets: [dynamic, filesystem_project]\napprovals: [deny dynamic, 'allow *']"),
    })
    assert run_cli("build", root).exit_code == 0
    worker_node = json.loads((root / "bundle.lock").read_text())["workers"]["main"]
    assert worker_node["toolsets"][0] == {"toolset": "dynamic", "settings": {}, "opaque_approval": "deny"}
    assert worker_node["tools"]["write_file"]["approval"] == "allow"

"""Hints that name the cause of a syntax or value error: a tab in YAML, an unquoted colon, a
trailing comma in project.json, `{{ input }}` in a template, an approval rule written as a mapping."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llm_do.compiler.syntax.hints import json_trailing_comma, yaml_hint
from tests.support.cli import worker, write_project
from tests.support.lint import lint

MANIFEST = {"version": 1, "worker_files": ["*.worker"]}


def test_a_tab_in_front_matter_indentation_says_so(tmp_path: Path) -> None:
    result = lint(write_project(tmp_path, {
        "project.json": MANIFEST,
        "main.worker": "---\nmodel: test\ntoolsets:\n\t- shell_readonly\n---\nGo.\n",
    }))
    d = result.expect("P001", "main.worker", line=4, column=1)
    assert d["message"] == "invalid YAML: a tab indents this line: YAML indents with spaces only"
    assert d["hint"] == "replace the tab with spaces"


def test_an_unquoted_colon_in_a_value_says_to_quote_it(tmp_path: Path) -> None:
    result = lint(write_project(tmp_path, {
        "project.json": MANIFEST,
        "main.worker": "---\nmodel: test\ndescription: Note: this is it\n---\nGo.\n",
    }))
    d = result.expect("P001", "main.worker", ": this", column=result.at("main.worker", ": this")[1])
    assert d["hint"] == "a value containing ': ' must be quoted: description: \"Note: this is it\""


def test_other_yaml_errors_get_no_made_up_hint(tmp_path: Path) -> None:
    result = lint(write_project(tmp_path, {
        "project.json": MANIFEST,
        "main.worker": "---\nmodel: test\ndescription: >-x\n---\nGo.\n",
    }))
    (d,) = result.of("P001")
    assert d["hint"] is None


def test_a_trailing_comma_in_project_json_says_so_at_the_comma(tmp_path: Path) -> None:
    root = write_project(tmp_path, {"main.worker": worker("model: test", "Go.")})
    (root / "project.json").write_text('{\n  "version": 1,\n  "worker_files": ["*.worker"],\n}\n')
    result = lint(root)
    (d,) = result.diagnostics
    assert (d["code"], d["line"], d["column"]) == ("P002", 3, len('  "worker_files": ["*.worker"],'))
    assert d["message"] == "invalid JSON: a trailing comma before '}'"
    assert d["hint"] == "remove this comma: JSON allows none after the last item"


def test_other_json_errors_keep_the_parser_message(tmp_path: Path) -> None:
    root = write_project(tmp_path, {"main.worker": worker("model: test", "Go.")})
    (root / "project.json").write_text('{"version": 1 "worker_files": []}\n')
    (d,) = lint(root).diagnostics
    assert d["message"] == "invalid JSON: Expecting ',' delimiter" and d["hint"] is None


def test_input_in_a_template_explains_build_time_rendering(tmp_path: Path) -> None:
    result = lint(write_project(tmp_path, {
        "project.json": {**MANIFEST, "vars": {"tone": "dry"}},
        "main.worker": worker("model: test", "Answer {{ input }} in a {{ tone }} tone."),
    }))
    d = result.expect("T002", "main.worker", "input }}")
    assert "rendered once, at build time" in d["hint"] and "reaches the model as the prompt" in d["hint"]


def test_an_undefined_variable_still_says_how_to_define_it(tmp_path: Path) -> None:
    result = lint(write_project(tmp_path, {
        "project.json": MANIFEST,
        "main.worker": worker("model: test", "About {{ topic }}."),
    }))
    d = result.expect("T002", "main.worker", "topic }}")
    assert d["hint"] == 'define it in project.json: "vars": {"topic": ...}'


def test_an_approval_rule_written_as_a_mapping_hints_the_string_form(tmp_path: Path) -> None:
    result = lint(write_project(tmp_path, {
        "project.json": MANIFEST,
        "main.worker": worker("model: test\ntoolsets: [filesystem_project]\napprovals:\n  - ask: write_file\n  - allow read_file",
                              "Go."),
    }))
    assert result.codes() == ["P006"]
    d = result.expect("P006", "main.worker", "ask: write_file")
    assert d["hint"] == "a rule is one string: `- ask write_file` (no colon)"


def test_a_rule_yaml_read_as_a_mapping_is_explained(tmp_path: Path) -> None:
    result = lint(write_project(tmp_path, {
        "project.json": MANIFEST,
        "main.worker": worker("model: test\ntoolsets: [filesystem_project]\napprovals:\n  - allow write_file: yes", "Go."),
    }))
    d = result.expect("P006", "main.worker", "allow write_file: yes")
    assert d["hint"] == ("the ': ' after `allow write_file` made YAML read a mapping, not a rule: a rule is one string "
                         "(`- allow write_file`), quoted if it must hold ': '")


@pytest.mark.parametrize(("front", "needle", "message"), [
    ("model: test\ntoolsets:\n  - filesystem_project\n approvals: []", "approvals",
     "'approvals' is indented 1 space, the line above 2: it lines up with no mapping"),
    ("model: test\n description: x", "description", "'description' is indented 1 space, the line above 0: it lines up with no mapping"),
])
def test_a_mis_indented_key_is_reported_at_the_key(tmp_path: Path, front: str, needle: str, message: str) -> None:
    result = lint(write_project(tmp_path, {"project.json": MANIFEST, "main.worker": worker(front, "Go.")}))
    d = result.expect("P001", "main.worker", needle)
    assert d["message"] == f"invalid YAML: {message}"
    assert d["hint"] == "the keys of one mapping start in the same column, the front matter's own in the first"


def test_yaml_hint_and_trailing_comma_functions() -> None:
    assert yaml_hint("  - name: a: b", 10, "invalid YAML: mapping values are not allowed here") == \
        'a value containing \': \' must be quoted: - name: "a: b"'
    assert yaml_hint("key: 'a: b'", 5, "invalid YAML: mapping values are not allowed here") is None
    assert yaml_hint("x\ty", 2, "invalid YAML: found character that cannot start any token") == \
        "YAML does not allow tabs for indentation: indent with spaces"
    text = json.dumps([1])[:-1] + ", ]"
    assert json_trailing_comma(text, text.index("]")) == text.index(",")
    assert json_trailing_comma('{"a": 1}', 7) is None


@pytest.mark.parametrize(("text", "closes"), [
    ('["a", "b]", {"c": "]"}]', 22),  # JSON: brackets in strings are text
    ("[a, 'it''s ]', b] # ]", 16),  # YAML: '' inside single quotes
    ("[a, # a comment ]\n  b]", 21),  # YAML: a comment is not the list's
    ("[a, b\nmodel: x\n", None),
    ('{"k": "\\"]"}', 11),  # an escaped quote does not end the string
])
def test_closing_bracket(text: str, closes: int | None) -> None:
    from llm_do.compiler.syntax.brackets import closing_bracket

    assert closing_bracket(text, 0) == closes

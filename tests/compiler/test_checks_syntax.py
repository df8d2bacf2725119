"""Syntax and structure (P001-P010): front matter and project.json broken in every way the issue
lists, each reported at its file, line and column (1-based, code points, front matter and body
counted together)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import write_project
from tests.support.lint import Lint, lint

# One project holds every front-matter problem: each file is broken in one way and they do not
# interfere. `main` calls the workers that still parse (with their bad keys dropped), so nothing
# is unreachable; the ones that do not parse at all are referenced too, which must not add a
# second "unknown worker" problem.
FRONT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"]},
    "main.worker": """
        ---
        toolsets: [yaml_bad, no_front, unclosed, not_mapping, keys, types, dup_keys, n_digit, n_space, n_dot, n_accent]
        ---
        Call the others.
        """,
    "yaml_bad.worker": """
        ---
        name: yaml_bad
        description: a: b
        ---
        x
        """,
    "no_front.worker": """
        Instructions without front matter.
        ---
        """,
    "unclosed.worker": """
        ---
        name: unclosed
        Instructions, but the front matter never ends.
        """,
    "not_mapping.worker": """
        ---
        - a
        - b
        ---
        x
        """,
    "keys.worker": """
        ---
        modle: openai:gpt-4o
        attachments:
          max_cout: 3
        toolsets:
          - filesystem_project_ro: {pth: docs}
        ---
        x
        """,
    "types.worker": """
        ---
        recursive: maybe
        tools: search
        attachments: {max_count: -1}
        toolsets:
          - shell_readonly: {timeout: 0}
          - {a: 1, b: 2}
        ---
        x
        """,
    "dup_keys.worker": """
        ---
        description: one
        model: test
        description: two
        ---
        x
        """,
    "n_digit.worker": "---\nname: 2fast\n---\nx\n",
    "n_space.worker": "---\nname: has space\n---\nx\n",
    "n_dot.worker": "---\nname: dotted.name\n---\nx\n",
    "n_accent.worker": "---\nname: naïve\n---\nx\n",
    "my worker.worker": "---\ndescription: the file name is not a worker name\n---\nx\n",
}


@pytest.fixture(scope="module")
def front(tmp_path_factory: pytest.TempPathFactory) -> Lint:
    return lint(write_project(tmp_path_factory.mktemp("front"), FRONT))


def test_yaml_syntax_error_is_reported_where_the_parser_gave_up(front: Lint) -> None:
    # "description: a: b": the second ':' (column 15) is where YAML refuses the line.
    front.expect("P001", "yaml_bad.worker", line=3, column=15)


def test_missing_front_matter(front: Lint) -> None:
    front.expect("P003", "no_front.worker", line=1, column=1)


def test_unterminated_front_matter(front: Lint) -> None:
    front.expect("P004", "unclosed.worker", line=1, column=1)


def test_front_matter_that_is_not_a_mapping(front: Lint) -> None:
    front.expect("P006", "not_mapping.worker", "- a")


def test_unknown_front_matter_keys_get_a_did_you_mean(front: Lint) -> None:
    front.expect("P005", "keys.worker", "modle", suggests="model", mentions=("modle",))
    front.expect("P005", "keys.worker", "max_cout", suggests="max_count")
    front.expect("P005", "keys.worker", "pth", suggests="path")


def test_values_of_the_wrong_type_or_out_of_range(front: Lint) -> None:
    front.expect("P006", "types.worker", "maybe", mentions=("recursive",))
    front.expect("P006", "types.worker", "search", mentions=("tools",))
    front.expect("P006", "types.worker", "-1", mentions=("max_count",))
    front.expect("P006", "types.worker", "0}", mentions=("timeout",))
    front.expect("P006", "types.worker", "{a: 1, b: 2}")


def test_duplicate_key_is_reported_at_the_second_one(front: Lint) -> None:
    front.expect("P008", "dup_keys.worker", "description", nth=2, mentions=("description",))


@pytest.mark.parametrize(("file", "name"), [
    ("n_digit.worker", "2fast"),
    ("n_space.worker", "has space"),
    ("n_dot.worker", "dotted.name"),
    ("n_accent.worker", "naïve"),
])
def test_invalid_worker_name(front: Lint, file: str, name: str) -> None:
    front.expect("P007", file, name, mentions=(name,))


def test_file_stem_that_is_not_a_worker_name(front: Lint) -> None:
    d = front.expect("P007", "my worker.worker", line=1, column=1, mentions=("my worker",))
    assert "name" in d["hint"]


def test_front_matter_project_reports_exactly_these_problems(front: Lint) -> None:
    """Nothing else: no cascade (a worker that did not parse is not also 'unknown' where it is
    called, a repaired one is still a worker), no unreachable warnings."""
    assert front.exit_code == 1
    assert sorted({(code, file) for code, file, _ in front.summary()}) == sorted({
        ("P001", "yaml_bad.worker"), ("P003", "no_front.worker"), ("P004", "unclosed.worker"),
        ("P006", "not_mapping.worker"), ("P005", "keys.worker"), ("P006", "types.worker"),
        ("P008", "dup_keys.worker"), ("P007", "n_digit.worker"), ("P007", "n_space.worker"),
        ("P007", "n_dot.worker"), ("P007", "n_accent.worker"), ("P007", "my worker.worker"),
    })


# --- YAML errors in llm-do's words, where the mistake is (not where PyYAML gave up)

YAML_ERRORS = {
    # name: (front matter, needle where it is reported, message after "invalid YAML: ", hint)
    "bracket": ("description: [Answers questions\ntoolsets:\n  - filesystem_project\n", "[",
                "the '[' here opens a list that is never closed",
                "end the list with ']', or quote the value if the '[' is part of its text: "
                'description: "[Answers questions"'),
    "brace": ("description: {a: b\nmodel: test\n", "{", "the '{' here opens a mapping that is never closed",
              "end the mapping with '}', or quote the value if the '{' is part of its text: description: \"{a: b\""),
    "in-list": ("toolsets: [a, b: c: d]\n", ": d", "expected ',' or ']' here, in the list opened with '[' on line 2",
                "separate the items with ','; quote an item that holds ': ', ',' or a bracket"),
    "double-quote": ('description: "Answers questions\ntoolsets: [a]\n', '"', 'the quote " here is never closed',
                     'end the value with " (a quote inside it is written \\")'),
    "single-quote": ("description: 'Answers questions\ntoolsets: [a]\n", "'", "the quote ' here is never closed",
                     "end the value with ' (a quote inside it is written '')"),
    "escape": ('description: "a \\d b"\n', "\\d", "'\\d' is not an escape YAML knows in double quotes",
               "use single quotes, where '\\' is plain text, or write '\\\\' for a backslash"),
    "tab-item": ("description: x\ntoolsets:\n\t- filesystem_project\n", "\t", "a tab indents this line: YAML indents with spaces only",
                 "replace the tab with spaces"),
    "tab-key": ("description: x\n\ttoolsets: [a]\n", "\t", "a tab indents this line: YAML indents with spaces only",
                "replace the tab with spaces"),
    "indented-key": ("description: x\n toolsets: [a]\n", "toolsets",
                     "'toolsets' is indented 1 space, the line above 0: it lines up with no mapping",
                     "the keys of one mapping start in the same column, the front matter's own in the first"),
    "indented-item": ("toolsets:\n  - a\n - b\n", "- b", "this item is indented 1 space, the items above 2",
                      "the items of one list start in the same column"),
    "key-among-items": ("toolsets:\n  - a\n  model: x\n", "model",
                        "'model' stands in the column of the list's items above, without '- '",
                        "indent a key of the mapping as the keys above it; an item of the list starts with '- '"),
    "no-colon": ("description: x\nmodel test\ntoolsets: [a]\n", "model test",
                 "'model test' is neither `key: value` nor a list item", "did you mean `model: test`?"),
    "colon-in-value": ("description: Note: this\n", ": this", "': ' inside a value: YAML reads the text before it as a key",
                       'a value containing \': \' must be quoted: description: "Note: this"'),
    "start-character": ("description: @mention\n", "@", "a value cannot start with '@' unless it is quoted",
                        'quote the value: description: "@mention"'),
    "alias": ("toolsets: *tools\n", "*", "'*tools' refers to no anchor: nothing above is marked '&tools'",
              "quote the value if the '*' is part of its text"),
    "after-quote": ('description: "a" b\n', "b\n", "text after the closing quote", "quote the whole value, or nothing of it"),
    "anchor": ("description: &d one\nmodel: &d two\n", "&d two", "'&d' marks a second value: the first is on line 2",
               "give each anchor its own name"),
    "stray-close": ("toolsets: [a]}\n", "}", "'}' closes nothing: no '{' is open here",
                    "remove it, or quote the value if it is part of its text"),
}


@pytest.fixture(scope="module")
def yaml_errors(tmp_path_factory: pytest.TempPathFactory) -> Lint:
    files: dict[str, str | dict] = {"project.json": {"version": 1, "worker_files": ["*.worker"]},
                                    "main.worker": "---\n---\nx\n"}
    files |= {f"{name}.worker": f"---\n{front}---\nx\n" for name, (front, *_) in YAML_ERRORS.items()}
    return lint(write_project(tmp_path_factory.mktemp("yaml"), files))


@pytest.mark.parametrize("name", YAML_ERRORS)
def test_a_yaml_error_is_reported_at_the_mistake_in_our_words(yaml_errors: Lint, name: str) -> None:
    _, needle, message, hint = YAML_ERRORS[name]
    d = yaml_errors.expect("P001", f"{name}.worker", needle)
    assert (d["message"], d["hint"]) == (f"invalid YAML: {message}", hint)


def test_each_yaml_error_is_one_p001(yaml_errors: Lint) -> None:
    assert sorted(yaml_errors.codes()) == ["P001"] * len(YAML_ERRORS)


def test_a_yaml_error_no_rule_knows_keeps_the_parsers_words_and_place(tmp_path: Path) -> None:
    result = lint(write_project(tmp_path, {"project.json": {"version": 1, "worker_files": ["*.worker"]},
                                           "main.worker": "---\ndescription: >-x\n---\nx\n"}))
    d = result.expect("P001", "main.worker", "x\n")
    assert d["message"] == "invalid YAML: while scanning a block scalar did not find expected comment or line break"


def test_a_duplicate_key_relates_the_first_one(front: Lint) -> None:
    first = front.at("dup_keys.worker", "description")
    front.expect("P008", "dup_keys.worker", "description", nth=2, related=("dup_keys.worker", *first))


# --- project.json

@pytest.mark.parametrize(("text", "line", "column"), [
    # At the comma itself, where the fix is (test_hints.py checks the message and hint).
    pytest.param('{\n  "version": 1,\n  "worker_files": ["*.worker"],\n}\n', 3, 31, id="trailing-comma"),
    pytest.param("{\n  'version': 1\n}\n", 2, 3, id="single-quotes"),
    pytest.param('{\n  "version": 1\n  "name": "x"\n}\n', 3, 3, id="missing-comma"),
    pytest.param('{\n  // a comment\n  "version": 1\n}\n', 2, 3, id="comment"),
    pytest.param('{"version": 1, "name": "x"', 1, 27, id="unclosed"),
])
def test_json_syntax_error(tmp_path: Path, text: str, line: int, column: int) -> None:
    result = lint(write_project(tmp_path, {"project.json": text, "main.worker": "---\n---\nx\n"}))
    assert result.exit_code == 1
    result.expect("P002", "project.json", line=line, column=column)
    assert result.codes() == ["P002"]


def test_project_json_that_is_not_an_object(tmp_path: Path) -> None:
    result = lint(write_project(tmp_path, {"project.json": "[1, 2]\n", "main.worker": "---\n---\nx\n"}))
    result.expect("P006", "project.json", line=1, column=1)
    assert result.exit_code == 1


def test_unsupported_version(tmp_path: Path) -> None:
    root = write_project(tmp_path, {"project.json": '{\n  "version": 2,\n  "worker_files": ["main.worker"]\n}\n',
                                    "main.worker": "---\n---\nx\n"})
    result = lint(root)
    result.expect("P010", "project.json", "2,", mentions=("2",))
    assert result.exit_code == 1


def test_missing_version(tmp_path: Path) -> None:
    result = lint(write_project(tmp_path, {"project.json": {"worker_files": ["main.worker"]},
                                           "main.worker": "---\n---\nx\n"}))
    d = result.expect("P006", "project.json", line=1, column=1)
    assert "version" in d["message"]


def test_duplicate_key_in_project_json_is_reported_at_the_second_one(tmp_path: Path) -> None:
    """JSON would keep the last value silently, as YAML would: the same mistake, the same P008."""
    root = write_project(tmp_path, {
        "project.json": '{\n  "version": 1,\n  "worker_files": ["*.worker"],\n  "vars": {"a": 1},\n  "vars": {"b": 2}\n}\n',
        "main.worker": "---\n---\n{{ b }}\n",
    })
    result = lint(root)
    result.expect("P008", "project.json", '"vars"', nth=2, mentions=("vars",))
    assert result.exit_code == 1


def test_manifest_keys_and_types(tmp_path: Path) -> None:
    root = write_project(tmp_path, {
        "project.json": """
            {
              "version": 1,
              "worker_filez": ["*.worker"],
              "worker_files": ["main.worker"],
              "python_files": "tools.py",
              "entry": {"wroker": "main"},
              "runtime": {"max_dept": 3, "max_depth": 0, "approval_mode": "sometimes",
                          "usage_limits": {"request_limt": 5}},
              "defaults": {"modle": "test"},
              "vars": []
            }
            """,
        "main.worker": "---\n---\nx\n",
    })
    result = lint(root)
    assert result.exit_code == 1
    result.expect("P005", "project.json", '"worker_filez"', suggests="worker_files")
    result.expect("P006", "project.json", '"tools.py"', mentions=("python_files",))
    result.expect("P005", "project.json", '"wroker"', suggests="worker")
    result.expect("P005", "project.json", '"max_dept"', suggests="max_depth")
    result.expect("P006", "project.json", "0,", mentions=("max_depth",))
    result.expect("P006", "project.json", '"sometimes"', mentions=("approval_mode",))
    result.expect("P005", "project.json", '"request_limt"', suggests="request_limit")
    result.expect("P005", "project.json", '"modle"', suggests="model")
    result.expect("P006", "project.json", "[]", mentions=("vars",))
    assert len(result.diagnostics) == 9


# --- encodings, line endings, columns in code points

def test_project_json_not_utf8(tmp_path: Path) -> None:
    root = write_project(tmp_path, {"main.worker": "---\n---\nx\n"})
    (root / "project.json").write_bytes(b'{"version": 1, "name": "caf\xe9"}\n')
    result = lint(root)
    result.expect("P009", "project.json", line=1, column=1)
    assert result.exit_code == 1


@pytest.fixture(scope="module")
def latin(tmp_path_factory: pytest.TempPathFactory) -> Lint:
    root = write_project(tmp_path_factory.mktemp("latin"), {
        "project.json": {"version": 1, "worker_files": ["*.worker"]},
        "main.worker": "---\ntoolsets: [latin]\n---\nx\n",
    })
    (root / "latin.worker").write_bytes(b"---\ndescription: caf\xe9\n---\nx\n")
    return lint(root)


def test_worker_file_not_utf8(latin: Lint) -> None:
    latin.expect("P009", "latin.worker", line=1, column=1)
    assert latin.exit_code == 1


def test_worker_file_not_utf8_is_not_also_an_unknown_worker(latin: Lint) -> None:
    """Like a file that fails to parse: calling it is not a second problem."""
    latin.absent("N003")


def test_columns_count_code_points_across_bom_and_crlf(tmp_path: Path) -> None:
    root = write_project(tmp_path, {
        "project.json": '{"version": 1, "name": "🙂 naïve", "worker_filez": [], "worker_files": ["*.worker"]}\n',
    })
    text = '---\ntoolsets: [{filesystem_project_ro: {allowed_suffixes: [".🙂"]}}, helpr]\n---\nHéllo 🙂 {{ nope }}\n'
    (root / "main.worker").write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode("utf-8"))
    result = lint(root)
    # Expected columns are counted in code points of the text (the BOM is not a character of it).
    result.expect("P005", "project.json", '"worker_filez"', column=35)
    result.expect("N003", "main.worker", "helpr", column=text.split("\n")[1].index("helpr") + 1)
    result.expect("T002", "main.worker", "nope", line=4, column=12)

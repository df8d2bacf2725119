"""Malformed values: deep nesting, aliases, huge and odd numbers, surrogates, line breaks other than
LF, templates that recurse. Each is a diagnostic at a valid position, never an internal error."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
import yaml

from llm_do.compiler.diagnostics import Diagnostic, Related, Severity
from llm_do.compiler.syntax import yaml_positions
from llm_do.compiler.syntax.limits import (
    MAX_NESTING,
    MAX_TEMPLATE_BLOCKS,
    MAX_TEMPLATE_EXPRESSION_DEPTH,
    json_nesting_overflow,
)
from llm_do.compiler.syntax.position_bounds import within_files
from llm_do.compiler.syntax.sources import SourceFile
from tests.support.cli import run_cli, worker, write_project
from tests.support.lint import ANY, lint


def _project(tmp_path: Path, manifest: str | dict | None = None, **files: str) -> Path:
    if manifest is None:
        manifest = {"version": 1, "worker_files": ["*.worker"]}
    written: dict = {"project.json": manifest, "main.worker": worker(), **files}
    return write_project(tmp_path / "p", written)


def _manifest_with_vars(vars_text: str) -> str:
    return '{"version": 1, "worker_files": ["*.worker"],\n "vars": {"v": ' + vars_text + "}}\n"


# --- project.json


def test_json_nested_at_the_limit_is_read_and_one_deeper_is_refused(tmp_path: Path) -> None:
    # vars.v sits at depth 2; the list brackets add the rest
    ok = _project(tmp_path / "ok", _manifest_with_vars("[" * (MAX_NESTING - 2) + "]" * (MAX_NESTING - 2)))
    lint(ok).absent("P011")
    deep = _project(tmp_path / "deep", _manifest_with_vars("[" * (MAX_NESTING - 1) + "]" * (MAX_NESTING - 1)))
    line_two = ' "vars": {"v": ' + "[" * (MAX_NESTING - 2)
    lint(deep).expect("P011", "project.json", line=2, column=len(line_two) + 1, mentions=("nested",))


@pytest.mark.parametrize("depth", [10_000, 1_000_000])
def test_json_nested_a_million_deep_is_a_diagnostic(tmp_path: Path, depth: int) -> None:
    root = _project(tmp_path, _manifest_with_vars("[" * depth + "]" * depth))
    lint(root).expect("P011", "project.json", line=2, column=len(' "vars": {"v": ') + MAX_NESTING - 1)


def test_json_nesting_scan_skips_strings() -> None:
    assert json_nesting_overflow('["' + "[" * 500 + '"]') is None
    assert json_nesting_overflow('["\\"' + "[" * 500 + '"]') is None
    assert json_nesting_overflow("[" * 101, limit=100) == 100


@pytest.mark.parametrize(("value", "code", "mentions"), [
    ('"\\ud800x"', "P009", "surrogate"),
    ("NaN", "P002", "NaN"),
    ("-Infinity", "P002", "Infinity"),
    ("1e400", "P006", "inf"),
    ("9" * 5000, "P011", "digits"),
])
def test_json_values_the_bundle_cannot_hold(tmp_path: Path, value: str, code: str, mentions: str) -> None:
    root = _project(tmp_path, _manifest_with_vars(value))
    result = lint(root)
    line_two = ' "vars": {"v": '
    d = result.expect(code, "project.json", line=2, column=len(line_two) + 1)
    assert mentions in d["message"]
    build = run_cli("build", root)
    assert build.exit_code == 1 and "Traceback" not in build.stderr and not (root / "bundle.lock").exists()


@pytest.mark.parametrize(("manifest", "needle", "escape"), [
    ('{"version": 1, "worker_files": ["m\\ud800ain.worker"]}\n', '"m', "\\ud800"),
    ('{"version": 1, "worker_files": ["*.worker"], "\\udc00": 1}\n', '"\\udc00"', "\\udc00"),
])
def test_a_surrogate_in_a_key_or_path_is_printable_in_every_format(
    tmp_path: Path, manifest: str, needle: str, escape: str
) -> None:
    root = _project(tmp_path, manifest)
    d = lint(root).expect("P009", "project.json", needle)
    assert escape in d["message"]
    for fmt in ("text", "sarif", "github"):
        out = run_cli("lint", root, "--format", fmt)
        assert out.exit_code == 1 and "internal error" not in out.stderr, out.stderr


# --- front matter


@pytest.fixture(params=["libyaml", "pure-python"])
def yaml_loader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Front matter read with each loader PyYAML may give: its libyaml binding (whose own limits,
    in PyYAML 6.0.4, fire earlier than ours unless ours are checked first) and its pure-Python one."""
    if request.param == "libyaml":
        if not yaml.__with_libyaml__:
            if os.environ.get("CI") == "1":
                pytest.fail("CI (CI=1) must test the libyaml loader: this PyYAML was built without it")
            pytest.skip("this PyYAML was built without libyaml: only the pure-Python loader exists here")
        monkeypatch.setattr(yaml_positions, "_Loader", yaml.CSafeLoader)
    else:
        monkeypatch.setattr(yaml_positions, "_Loader", yaml.SafeLoader)


@pytest.mark.usefixtures("yaml_loader")
def test_yaml_nested_deeper_than_the_limit_is_refused_before_composing(tmp_path: Path) -> None:
    deep = 200_000  # the C composer recurses without a guard: this many levels crash the process
    root = _project(tmp_path, **{
        "flow.worker": worker("model_settings: {a: " + "[" * deep + "]" * deep + "}"),
        "block.worker": worker("toolsets:\n  " + "- " * deep + "x"),
        "ok.worker": worker("model_settings:\n  a: " + "[" * (MAX_NESTING - 2) + "]" * (MAX_NESTING - 2)),
    })
    started = time.monotonic()
    result = lint(root)
    assert time.monotonic() - started < 20
    result.expect("P011", "flow.worker", line=2, column=len("model_settings: {a: " + "[" * (MAX_NESTING - 2)) + 1)
    result.expect("P011", "block.worker", line=3, column=ANY)
    result.absent("P011", "ok.worker")


@pytest.mark.usefixtures("yaml_loader")
def test_an_alias_inside_itself_and_an_alias_bomb_are_diagnostics(tmp_path: Path) -> None:
    bomb = "\n".join(
        [f"  l0: &l0 [{', '.join(['x'] * 10)}]"]
        + [f"  l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 9)]
    )
    root = _project(tmp_path, **{
        "cycle.worker": worker("model_settings:\n  a: &a [1, *a]"),
        "bomb.worker": worker("model_settings:\n" + bomb),
    })
    started = time.monotonic()
    result = lint(root)
    assert time.monotonic() - started < 10
    result.expect("P001", "cycle.worker", "&a", mentions=("contains it",))
    (d,) = result.of("P011", "bomb.worker")
    assert "100000 values" in d["message"] and d["line"] >= 3, d


@pytest.mark.usefixtures("yaml_loader")
@pytest.mark.parametrize(("value", "code"), [("9" * 5000, "P011"), (".inf", "P006"), ("-.INF", "P006"), (".NaN", "P006")])
def test_yaml_numbers_the_bundle_cannot_hold(tmp_path: Path, value: str, code: str) -> None:
    root = _project(tmp_path, **{"main.worker": worker(f"model_settings:\n  temperature: {value}")})
    lint(root).expect(code, "main.worker", value)


@pytest.mark.usefixtures("yaml_loader")
@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\x85"])
def test_unicode_line_separators_are_not_line_breaks(tmp_path: Path, char: str) -> None:
    root = _project(tmp_path, **{"main.worker": worker(f"description: 'a{char}b'\nname: main\ntoolsets:\n  - nope")})
    lint(root).expect("N003", "main.worker", "nope")


def test_text_output_shows_the_lf_line_of_the_diagnostic(tmp_path: Path) -> None:
    root = _project(tmp_path, **{"main.worker": worker("description: 'a\u2028b'\ntoolsets:\n  - nope")})
    out = run_cli("lint", root)
    assert out.exit_code == 1
    assert "4 |   - nope" in out.stderr, out.stderr


@pytest.mark.usefixtures("yaml_loader")
@pytest.mark.parametrize("char", ["\u2028", "\x85"])
def test_a_yaml_error_after_a_line_separator_points_at_its_lf_line(tmp_path: Path, char: str) -> None:
    root = _project(tmp_path, **{"main.worker": worker(f"description: 'a{char}b'\nmodel: [oops")})
    result = lint(root)
    (d,) = result.of("P001")
    text = result.text("main.worker")
    lines = text.split("\n")
    assert 3 <= d["line"] <= len(lines) and 1 <= d["column"] <= len(lines[d["line"] - 1]) + 1, d


def test_positions_past_the_end_are_clamped_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "helper.py").write_text("x = 1\nyz")
    files = {"a.worker": SourceFile("a.worker", "one\ntwo", "", "worker")}
    made = within_files([
        Diagnostic(code="P001", severity=Severity.ERROR, message="m", file="a.worker", line=9, column=40,
                   related=(Related(file="a.worker", line=0, column=0, message="r"),)),
        Diagnostic(code="Y001", severity=Severity.ERROR, message="m\udcff", file="b.py", line=3, column=0),
        Diagnostic(code="Y001", severity=Severity.ERROR, message="m", file="helper.py", line=7, column=30),
    ], files, tmp_path)
    assert (made[0].line, made[0].column) == (2, 4)
    assert (made[0].related[0].line, made[0].related[0].column) == (1, 1)
    assert (made[1].line, made[1].column, made[1].message) == (3, 1, "m\\udcff")
    assert (made[2].line, made[2].column) == (2, 3)  # not a source, read for the purpose


def test_glob_patterns_longer_than_the_limit_are_refused(tmp_path: Path) -> None:
    long = "x" * 1_000_000 + "*"
    root = _project(tmp_path, {"version": 1, "worker_files": ["*.worker", long + ".worker"], "defaults": {"model": "test"}},
                    **{"main.worker": worker(f"compatible_models: ['{long}']")})
    started = time.monotonic()
    result = lint(root)
    assert time.monotonic() - started < 10
    result.expect("P011", "project.json", '"xxx', mentions=("pattern",))
    result.expect("P011", "main.worker", "'xxx", mentions=("pattern",))


# --- templates and Python


def test_a_self_including_template_is_reported_in_the_project(tmp_path: Path) -> None:
    root = _project(tmp_path, **{
        "main.worker": worker(body='{% include "loop.md" %}'),
        "loop.md": 'again\n{% include "loop.md" %}\n',
        "self.worker": worker(body='{% import "self.worker" as me %}x'),
    })
    result = lint(root)
    d = result.expect("T006", "loop.md", line=2, column=None, mentions=("without end",))
    assert "frozen" not in d["file"]
    assert all(not x["file"].startswith("<") for x in result.diagnostics), result.diagnostics


def test_what_jinjas_compiler_refuses_is_a_syntax_error(tmp_path: Path) -> None:
    root = _project(tmp_path, **{
        "main.worker": worker(body="{% block a %}{% endblock %}\n{% block a %}{% endblock %}"),
    })
    lint(root).expect("T001", "main.worker", line=4, column=None, mentions=("defined twice",))


_DEEP_TEMPLATES = {
    # each past Jinja's parser or code generator, or the Python it compiles to, at some size
    "parens": lambda n: "{{ " + "(" * n + "1" + ")" * n + " }}",
    "lists": lambda n: "{{ " + "[" * n + "]" * n + " }}",
    "not": lambda n: "{{ " + "not " * n + "x }}",
    "plus": lambda n: "{{ 1" + "+1" * n + " }}",
    "conditional": lambda n: "{{ " + "1 if x else " * n + "2 }}",
    "filters": lambda n: "{{ x" + "|string" * n + " }}",
    "attributes": lambda n: "{{ x" + ".a" * n + " }}",
    "ifs": lambda n: "{% if x %}" * n + "{% endif %}" * n,
    "fors": lambda n: "{% for i in x %}" * n + "{% endfor %}" * n,  # Python: 20 nested loops at most
    "set blocks": lambda n: "{% set a %}" * n + "{% endset %}" * n,
}


@pytest.mark.parametrize("depth", [25, 1_000, 50_000])
@pytest.mark.parametrize("shape", sorted(_DEEP_TEMPLATES))
def test_templates_nested_past_the_limits_are_refused_before_jinja_reads_them(tmp_path: Path, shape: str,
                                                                              depth: int) -> None:
    body = "line one\n" + _DEEP_TEMPLATES[shape](depth)
    root = _project(tmp_path, {"version": 1, "worker_files": ["*.worker"], "vars": {"x": [1]}},
                    **{"main.worker": worker(body=body)})
    result = lint(root)
    limit = MAX_TEMPLATE_BLOCKS if shape in ("ifs", "fors", "set blocks") else MAX_TEMPLATE_EXPRESSION_DEPTH
    if depth < limit:
        result.absent("P011")
        return
    (d,) = result.of("P011", "main.worker")
    assert d["line"] == 4 and f"more than {limit} deep" in d["message"], d
    assert [x["code"] for x in result.diagnostics if x["severity"] == "error"] == ["P011"], result.diagnostics


def test_templates_at_the_limits_render(tmp_path: Path) -> None:
    blocks = "{% for i in x %}" * MAX_TEMPLATE_BLOCKS + "{{ i }}" + "{% endfor %}" * MAX_TEMPLATE_BLOCKS
    half = MAX_TEMPLATE_EXPRESSION_DEPTH // 2
    expression = "{{ " + "(-" * half + "1" + ")" * half + " }}"  # each level: a bracket and an operator
    flat = "{{ [" + ", ".join(["x|first + 1"] * 500) + "]|sum }} {{ 'a'" + " ~ 'a'" * 500 + " }}"
    root = _project(tmp_path, {"version": 1, "worker_files": ["*.worker"], "vars": {"x": [1]}},
                    **{"main.worker": worker(body=blocks + "\n" + expression + "\n" + flat)})
    result = lint(root)
    assert not [d for d in result.diagnostics if d["severity"] == "error"], result.diagnostics


@pytest.mark.parametrize("shape", ["not", "parens", "mixed"])
def test_an_approval_condition_nested_past_the_limit_is_refused_before_lark_reads_it(tmp_path: Path,
                                                                                      shape: str) -> None:
    n = 5_000
    condition = {"not": "not " * n + "path ~ 'a'", "parens": "(" * n + "path ~ 'a'" + ")" * n,
                 "mixed": "(not " * n + "path ~ 'a'" + ")" * n}[shape]
    rule = f"ask write_file({condition})"
    root = _project(tmp_path, **{"main.worker": worker(f"toolsets: [filesystem_project]\napprovals:\n  - \"{rule}\"")})
    result = lint(root)
    (d,) = result.of("P011", "main.worker")
    assert d["line"] == 4 and f"more than {MAX_NESTING} deep" in d["message"], d
    at_limit = "not " * (MAX_NESTING - 1) + "path ~ 'a'"
    ok = _project(tmp_path / "ok", **{"main.worker": worker(
        f"toolsets: [filesystem_project]\napprovals:\n  - \"ask write_file({at_limit})\"")})
    lint(ok).absent("P011")


@pytest.mark.parametrize("expression", ["'a' * 10**9", "10 ** (10**9)", "'x'|center(10**9)", "'x'.ljust(10**9)",
                                         "range(100000)|list * 100000"])
def test_a_template_cannot_build_a_huge_value(tmp_path: Path, expression: str) -> None:
    root = _project(tmp_path, **{"main.worker": worker(body="{{ " + expression + " }}")})
    started = time.monotonic()
    lint(root).expect("T006", "main.worker", line=3, column=None)
    assert time.monotonic() - started < 10


def test_instructions_longer_than_the_limit_are_refused(tmp_path: Path) -> None:
    root = _project(tmp_path, **{"main.worker": worker(body="{% for i in range(5) %}{{ 'x' * 1000000 }}{% endfor %}")})
    lint(root).expect("P011", "main.worker", line=3, column=1, mentions=("characters",))


@pytest.mark.process
def test_a_huge_literal_in_python_has_a_column(tmp_path: Path) -> None:
    root = _project(tmp_path, {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"]},
                    **{"tools.py": "x = " + "9" * 5000 + "\n"})
    for args in ((), ("--no-import",)):
        result = lint(root, *args)
        (d,) = result.of("Y001")
        assert d["line"] == 1 and d["column"] is not None and d["column"] >= 1, d


@pytest.mark.process
def test_python_too_deeply_nested_to_parse_is_an_import_error(tmp_path: Path) -> None:
    deep = "def f():\n    retu" + "{{ (" * 99 + ") }}" * 99 + "\n"  # CPython's parser: MemoryError, not SyntaxError
    root = _project(tmp_path, {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"]},
                    **{"tools.py": deep})
    for args in ((), ("--no-import",)):
        (d,) = lint(root, *args).of("Y001")
        assert d["file"] == "tools.py" and d["line"] == 1, d


def test_json_output_is_valid_for_every_case_above(tmp_path: Path) -> None:
    root = _project(tmp_path, _manifest_with_vars('"\\udfff"'))
    out = run_cli("lint", root, "--format", "json")
    json.loads(out.stdout)


@pytest.mark.process
def test_a_schema_file_name_too_long_for_the_system_is_a_diagnostic(tmp_path: Path) -> None:
    name = "s" + "9" * 4400 + ".py"
    root = _project(tmp_path, **{"main.worker": worker(f"schema_in_ref: {name}:Input")})
    lint(root).expect("S002", "main.worker", line=2, column=16, mentions=("does not exist",))

"""Templates (T001-T006, P009 for templates): syntax errors, every undefined variable at its own
line (found statically), missing includes and file() targets, secrets baked into the bundle,
rendering errors; a problem inside an included template is reported in that template's file
with the include site as a related location. (Escaping includes: test_checks_references.py.)"""

from __future__ import annotations

import pytest

from tests.support.cli import write_project
from tests.support.lint import ANY, Lint, lint

WORKERS = ["undefined", "syntax_tag", "syntax_expr", "syntax_eof", "missing", "nested", "secrets", "render_err",
           "render_in_include", "binary", "literal"]

TEMPLATES = {
    "project.json": {"version": 1, "worker_files": ["*.worker"],
                     "vars": {"topic": "tides", "cfg": {"a": 1}}},
    "main.worker": f"---\ntoolsets: [{', '.join(WORKERS)}]\n---\nDelegate.\n",
    "undefined.worker": """
        ---
        description: every undefined variable, each with its own line
        ---
        Intro {{ topic }} and {{ topc }}.
        {{ alpha }} and {{ beta }}
        {% for x in items %}{{ x }} {{ gamma }} {{ loop.index }}{% endfor %}
        {% if false %}{{ hidden }}{% endif %}
        {% set local = 1 %}{{ local }}
        {% macro m(arg) %}{{ arg }}{% endmacro %}{{ m(topic) }}
        {{ alpha }} again.
        """,
    "syntax_tag.worker": "---\n---\nline one\n{% endfor %}\n",
    "syntax_expr.worker": "---\n---\nline one\n{{ topic | }}\n",
    "syntax_eof.worker": "---\n---\nline one\n{{ topic\n",
    "missing.worker": "---\n---\nFirst:\n{% include 'parts/missing.md' %}\nThen {{ file('nofile.txt') }}\n",
    "nested.worker": "---\n---\nStart.\n{% include 'parts/header.md' %}\n",
    "parts/header.md": "Header {{ topic }}\n{{ undefined_in_include }}\n{% include 'parts/nested.md' %}\n"
                       "{% include 'parts/gone.md' %}\n",
    "parts/nested.md": "{% if %}\n",
    "secrets.worker": "---\n---\nKeys:\n{{ file('.env') }}\n{% include 'keys/server.pem' %}\n",
    ".env": "API_KEY=1\n",
    "keys/server.pem": "-----BEGIN KEY-----\n",
    "render_err.worker": "---\n---\nok\n{{ cfg.b }}\n",
    "render_in_include.worker": "---\n---\nok\n{% include 'parts/render_bad.md' %}\n",
    "parts/render_bad.md": "fine\n{{ cfg.missing }}\n",
    "binary.worker": "---\n---\n{% include 'parts/bin.md' %}\n{{ file('data.bin') }}\n",
    "literal.worker": "---\n---\nUse {braces}, } and {x: 1} freely; 50% off. No template here.\n",
}


@pytest.fixture(scope="module")
def tpl(tmp_path_factory: pytest.TempPathFactory) -> Lint:
    root = write_project(tmp_path_factory.mktemp("templates"), TEMPLATES)
    (root / "parts" / "bin.md").write_bytes(b"\xff\xfe\x00 not text")
    (root / "data.bin").write_bytes(b"\x80\x81\x82")
    return lint(root)


def test_every_undefined_variable_at_its_first_use(tpl: Lint) -> None:
    for name in ("alpha", "beta", "items", "gamma"):
        tpl.expect("T002", "undefined.worker", name, mentions=(f"'{name}'",))


def test_undefined_variable_in_a_branch_that_never_renders(tpl: Lint) -> None:
    tpl.expect("T002", "undefined.worker", "hidden", mentions=("'hidden'",))


def test_undefined_variable_with_did_you_mean(tpl: Lint) -> None:
    tpl.expect("T002", "undefined.worker", "topc", suggests="topic")


def test_only_undefined_names_are_reported_once_each(tpl: Lint) -> None:
    """Loop variables, `loop`, set and macro names and parameters, and vars are defined; a name
    used twice is one problem."""
    names = sorted(d["message"].split("'")[1] for d in tpl.of("T002", "undefined.worker"))
    assert names == ["alpha", "beta", "gamma", "hidden", "items", "topc"]


@pytest.mark.parametrize("file", ["syntax_tag.worker", "syntax_expr.worker", "syntax_eof.worker"])
def test_template_syntax_error_at_its_line(tpl: Lint, file: str) -> None:
    # Jinja gives no column for syntax errors.
    tpl.expect("T001", file, line=4, column=ANY)


def test_missing_include_and_missing_file(tpl: Lint) -> None:
    tpl.expect("T003", "missing.worker", "parts/missing.md", mentions=("parts/missing.md",))
    tpl.expect("T003", "missing.worker", "nofile.txt", mentions=("nofile.txt",))


def test_problems_in_an_included_template_are_reported_there(tpl: Lint) -> None:
    site = ("nested.worker", *tpl.at("nested.worker", "parts/header.md"))
    tpl.expect("T002", "parts/header.md", "undefined_in_include", related=site)
    tpl.expect("T003", "parts/header.md", "parts/gone.md", related=site)


def test_problem_two_includes_deep_relates_the_inner_include_site(tpl: Lint) -> None:
    site = ("parts/header.md", *tpl.at("parts/header.md", "parts/nested.md"))
    tpl.expect("T001", "parts/nested.md", line=1, column=ANY, related=site)


def test_secrets_baked_into_the_bundle_warn(tpl: Lint) -> None:
    tpl.expect("T005", "secrets.worker", ".env", mentions=(".env",))
    tpl.expect("T005", "secrets.worker", "keys/server.pem", mentions=("server.pem",))


def test_rendering_error_at_its_line(tpl: Lint) -> None:
    tpl.expect("T006", "render_err.worker", line=4, column=ANY)


def test_rendering_error_in_an_include_is_reported_there_with_the_include_site(tpl: Lint) -> None:
    site = ("render_in_include.worker", *tpl.at("render_in_include.worker", "parts/render_bad.md"))
    tpl.expect("T006", "parts/render_bad.md", line=2, column=ANY, related=site)


def test_included_or_read_file_that_is_not_text(tpl: Lint) -> None:
    tpl.expect("P009", "binary.worker", "parts/bin.md")
    tpl.expect("P009", "binary.worker", "data.bin")


def test_templates_project_reports_exactly_these(tpl: Lint) -> None:
    """Nothing for the body without template syntax, for main, or for the defined names."""
    assert tpl.exit_code == 1
    assert sorted((d["code"], d["file"]) for d in tpl.diagnostics) == sorted(
        [("T002", "undefined.worker")] * 6
        + [("T001", "syntax_tag.worker"), ("T001", "syntax_expr.worker"), ("T001", "syntax_eof.worker"),
           ("T003", "missing.worker"), ("T003", "missing.worker"),
           ("T002", "parts/header.md"), ("T003", "parts/header.md"), ("T001", "parts/nested.md"),
           ("T005", "secrets.worker"), ("T005", "secrets.worker"),
           ("T006", "render_err.worker"), ("T006", "parts/render_bad.md"),
           ("P009", "binary.worker"), ("P009", "binary.worker")]
    )

"""Schemas and user Python (S001-S007, Y001, Y004, and the name checks that need Python: N002-N005,
N009). Each project here starts an introspection subprocess, so the cases share two projects: one
whose Python all imports (so unknown tools can be told apart) and one whose Python fails to."""

from __future__ import annotations

import pytest

from tests.support.cli import write_project
from tests.support.lint import ANY, Lint, lint

SCHEMAS = """
from pydantic import BaseModel
from llm_do.runtime import WorkerArgs


class Input(WorkerArgs):
    topic: str

    def prompt_messages(self):
        return [self.topic]


class Plain(BaseModel):
    x: int


class Abstract(WorkerArgs):
    y: str = ""


class NotModel:
    pass


class Output(BaseModel):
    answer: str
"""

TOOLS = """
from pydantic_ai import FunctionToolset


def search(query: str) -> str:
    \"\"\"Search the notes.\"\"\"
    return query


def fetch(url: str) -> str:
    \"\"\"Fetch a page.\"\"\"
    return url


def read_file(path: str) -> str:
    \"\"\"Shadows the stdlib tool of the same name.\"\"\"
    return path


TOOLS = {"search": search, "fetch": fetch, "read_file": read_file}
TOOLSETS = {"web": FunctionToolset([fetch])}
"""

MORE_TOOLS = """
from pydantic_ai import FunctionToolset


def search(q: str) -> str:
    return q


TOOLS = [search]
TOOLSETS = {"web": FunctionToolset([search])}
"""

PY = {
    "project.json": {
        "version": 1,
        "worker_files": ["*.worker"],
        "python_files": ["tools.py", "more_tools.py", "exports_a.py", "exports_b.py", "exports_c.py", "exports_d.py"],
        "entry": {"worker": "main", "args": {"topic": 3, "extra": "x"}},
    },
    "schemas.py": SCHEMAS,
    "tools.py": TOOLS,
    "more_tools.py": MORE_TOOLS,
    "exports_a.py": "TOOLS = 42\n",
    "exports_b.py": "def ok(x: int) -> int:\n    return x\n\n\nTOOLS = {'ok': ok, 'bad': 'not callable'}\n",
    "exports_c.py": "TOOLSETS = 'nope'\n",
    "exports_d.py": "TOOLSETS = {'ts': 5}\n",
    "main.worker": """
        ---
        schema_in_ref: schemas.py:Input
        schema_out_ref: schemas.py:Output
        toolsets: [s001a, s001b, s001c, s002, s003, s004, s005, s006, tool_user]
        ---
        Run.
        """,
    "s001a.worker": "---\nschema_in_ref: NoColon\n---\nx\n",
    "s001b.worker": "---\nschema_in_ref: my-schemas.py:Input\n---\nx\n",
    "s001c.worker": "---\nschema_out_ref: 'schemas.py:1bad'\n---\nx\n",
    "s002.worker": "---\nschema_in_ref: missing.py:Input\n---\nx\n",
    "s003.worker": "---\nschema_in_ref: schemas.py:Inptu\n---\nx\n",
    "s004.worker": "---\nschema_in_ref: schemas.py:Plain\n---\nx\n",
    "s005.worker": "---\nschema_in_ref: schemas.py:Abstract\n---\nx\n",
    "s006.worker": "---\nschema_out_ref: schemas.py:NotModel\n---\nx\n",
    "tool_user.worker": """
        ---
        toolsets: [web, search, filesystem_project_ro]
        tools: [serch, fetch, web, read_file, ok]
        ---
        Use tools.
        """,
    "web.worker": "---\n---\nNamed like a Python toolset.\n",
}


@pytest.fixture(scope="module")
def py(tmp_path_factory: pytest.TempPathFactory) -> Lint:
    return lint(write_project(tmp_path_factory.mktemp("py"), PY))


@pytest.mark.parametrize(("file", "ref"), [
    ("s001a.worker", "NoColon"),
    ("s001b.worker", "my-schemas.py:Input"),
    ("s001c.worker", "'schemas.py:1bad'"),  # a quoted YAML value starts at its quote
])
@pytest.mark.process
def test_invalid_schema_reference(py: Lint, file: str, ref: str) -> None:
    py.expect("S001", file, ref)


@pytest.mark.process
def test_schema_file_missing(py: Lint) -> None:
    py.expect("S002", "s002.worker", "missing.py:Input", mentions=("missing.py",))


@pytest.mark.process
def test_schema_class_missing_with_did_you_mean(py: Lint) -> None:
    py.expect("S003", "s003.worker", "schemas.py:Inptu", suggests="Input", mentions=("Inptu",))


@pytest.mark.process
def test_input_schema_not_worker_args(py: Lint) -> None:
    py.expect("S004", "s004.worker", "schemas.py:Plain", mentions=("Plain",))


@pytest.mark.process
def test_input_schema_without_prompt_messages(py: Lint) -> None:
    py.expect("S005", "s005.worker", "schemas.py:Abstract", mentions=("Abstract",))


@pytest.mark.process
def test_output_schema_not_a_model(py: Lint) -> None:
    py.expect("S006", "s006.worker", "schemas.py:NotModel", mentions=("NotModel",))


@pytest.mark.process
def test_entry_args_invalid_for_the_entry_schema(py: Lint) -> None:
    """One diagnostic per bad field, at its value in project.json."""
    py.expect("S007", "project.json", "3", mentions=("topic",))
    py.expect("S007", "project.json", '"x"', mentions=("extra",))


def test_entry_args_invalid_for_the_default_input(tmp_path) -> None:
    """Without schema_in_ref the entry takes PromptInput (input, attachments); no Python needed."""
    root = write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["*.worker"],
                         "entry": {"args": {"inptu": "x", "attachments": "a.pdf"}}},
        "main.worker": "---\n---\nx\n",
    })
    result = lint(root)
    result.expect("S007", "project.json", '"a.pdf"', mentions=("attachments",))
    result.expect("S007", "project.json", '"x"', mentions=("inptu",))
    assert {d["code"] for d in result.diagnostics} == {"S007"}
    assert any("input" in d["message"] and "inptu" not in d["message"] for d in result.diagnostics)
    assert result.exit_code == 1


@pytest.mark.process
def test_unknown_tool_with_did_you_mean(py: Lint) -> None:
    py.expect("N004", "tool_user.worker", "serch", suggests="search", mentions=("serch",))


@pytest.mark.process
def test_toolset_listed_under_tools_says_where_it_belongs(py: Lint) -> None:
    d = py.expect("N004", "tool_user.worker", "web", nth=2)
    assert "toolsets" in d["hint"]


@pytest.mark.process
def test_python_tool_listed_under_toolsets_says_where_it_belongs(py: Lint) -> None:
    d = py.expect("N003", "tool_user.worker", "search")
    assert "tools" in d["hint"]


@pytest.mark.process
def test_tool_name_conflicts_with_python_tools(py: Lint) -> None:
    at_web = py.at("tool_user.worker", "web")
    d = py.expect("N005", "tool_user.worker", "fetch", mentions=("fetch",), related=("tool_user.worker", *at_web))
    assert d["hint"].startswith("list only one of them, or rename the ")
    at_fs = py.at("tool_user.worker", "filesystem_project_ro")
    py.expect("N005", "tool_user.worker", "read_file", mentions=("read_file",),
              related=("tool_user.worker", *at_fs))


@pytest.mark.process
def test_worker_named_like_a_python_toolset(py: Lint) -> None:
    py.expect("N002", "web.worker", line=1, column=1, mentions=("web",))


@pytest.mark.process
def test_two_python_files_export_one_tool_name(py: Lint) -> None:
    line, _ = py.at("more_tools.py", "def search")
    py.expect("N009", "more_tools.py", line=line, mentions=("search", "tools.py"))


@pytest.mark.process
def test_two_python_files_export_one_toolset_name(py: Lint) -> None:
    line, _ = py.at("more_tools.py", 'TOOLSETS = {"web"')
    py.expect("N009", "more_tools.py", line=line, mentions=("web", "tools.py"))


@pytest.mark.parametrize(("file", "needle", "words"), [
    ("exports_a.py", "TOOLS = 42", ("TOOLS",)),
    ("exports_b.py", "TOOLS = {", ("bad",)),
    ("exports_c.py", "TOOLSETS = 'nope'", ("TOOLSETS",)),
    ("exports_d.py", "TOOLSETS = {", ("ts",)),
])
@pytest.mark.process
def test_malformed_exports_point_at_their_line(py: Lint, file: str, needle: str, words: tuple[str, ...]) -> None:
    line, _ = py.at(file, needle)
    py.expect("Y004", file, line=line, mentions=words)


@pytest.mark.process
def test_python_project_reports_exactly_these(py: Lint) -> None:
    """In particular: a good export next to a bad one still works (`ok` is a known tool), and the
    workers with schema problems are still workers (nothing unreachable)."""
    assert py.exit_code == 1
    assert sorted(py.codes()) == sorted([
        "S001", "S001", "S001", "S002", "S003", "S004", "S005", "S006", "S007", "S007",
        "N002", "N003", "N004", "N004", "N005", "N005", "N009", "N009", "Y004", "Y004", "Y004", "Y004",
        "Y007",  # an info: its single-file worker main uses the project's Python tools
    ])
    assert {d["severity"] for d in py.of("Y007")} == {"info"}


# --- Python that fails to import

BROKEN = {
    "project.json": {"version": 1, "worker_files": ["*.worker"],
                     "python_files": ["broken.py", "syntax_bad.py", "pkg/helper_user.py"]},
    "broken.py": """
        import os

        VALUE = os.sep
        raise RuntimeError("boom at import")
        """,
    "syntax_bad.py": "x = 1\ndef f(:\n    pass\n",
    "pkg/__init__.py": "",
    "pkg/helper_user.py": "from pkg.inner import thing\n",
    "pkg/inner.py": "a = 1\nthing = undefined_name\n",
    "bad_schema.py": "import os\nimport nonexistent_module_xyz\n",
    "main.worker": """
        ---
        schema_in_ref: bad_schema.py:Input
        toolsets: [installed, from_broken]
        tools: [anything]
        ---
        x
        """,
    "installed.worker": "---\nschema_in_ref: not_installed_pkg_xyz.schemas:Input\n---\nx\n",
    "from_broken.worker": "---\nschema_out_ref: broken.py:Output\n---\nx\n",
}


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> Lint:
    return lint(write_project(tmp_path_factory.mktemp("broken"), BROKEN))


@pytest.mark.process
def test_import_error_at_the_raising_line(broken: Lint) -> None:
    line, _ = broken.at("broken.py", "raise RuntimeError")
    broken.expect("Y001", "broken.py", line=line, mentions=("RuntimeError", "boom at import"))


@pytest.mark.process
def test_syntax_error_at_its_line_and_column(broken: Lint) -> None:
    line, column = broken.at("syntax_bad.py", "(:")
    # Python points at the ':' that cannot follow '('.
    broken.expect("Y001", "syntax_bad.py", line=line, column=column + 1, mentions=("SyntaxError",))


@pytest.mark.process
def test_import_error_in_a_helper_module_points_into_that_module(broken: Lint) -> None:
    line, _ = broken.at("pkg/inner.py", "thing = undefined_name")
    broken.expect("Y001", "pkg/inner.py", line=line, mentions=("NameError", "undefined_name"))


@pytest.mark.process
def test_schema_module_that_fails_to_import(broken: Lint) -> None:
    line, _ = broken.at("bad_schema.py", "import nonexistent_module_xyz")
    broken.expect("Y001", "bad_schema.py", line=line, mentions=("nonexistent_module_xyz",))


@pytest.mark.process
def test_installed_module_that_does_not_exist_is_reported_at_the_reference(broken: Lint) -> None:
    broken.expect("Y001", "installed.worker", "not_installed_pkg_xyz.schemas:Input", column=ANY,
                  mentions=("not_installed_pkg_xyz",))


@pytest.mark.process
def test_import_failure_is_reported_once_and_nothing_cascades(broken: Lint) -> None:
    """A schema in a module that failed is not also 'class not found'; tools cannot be known, so a
    tools entry is not called unknown; no message carries a traceback."""
    assert broken.exit_code == 1
    assert len(broken.of("Y001", "broken.py")) == 1
    for code in ("S003", "S004", "S006", "N004"):
        broken.absent(code)
    assert set(broken.codes()) == {"Y001"}

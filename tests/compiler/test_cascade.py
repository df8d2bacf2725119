"""One mistake, one diagnostic: what an earlier error causes is not reported again (the cascade
rule), in every output format; the text format lists errors first, root causes first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import PLAIN_ENV, run_cli, worker, write_project
from tests.support.lint import lint

TOOLS_PY = '''
    def shout(text: str) -> str:
        """Shout."""
        return text.upper()


    TOOLS = [shout]
    '''

MAIN_WITH_TOOL = worker("model: test\ntools: [shout]\napprovals:\n  - allow shout", "Go.")


def test_wrong_python_files_path_is_one_error_with_a_did_you_mean(tmp_path: Path) -> None:
    root = write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tool.py"]},
        "tools.py": TOOLS_PY,
        "main.worker": MAIN_WITH_TOOL,
    })
    result = lint(root)
    assert result.codes() == ["F001"]
    result.expect("F001", "project.json", '"tool.py"', column=result.at("project.json", '"tool.py"')[1])
    assert result.diagnostics[0]["hint"] == "did you mean 'tools.py'?"


@pytest.mark.process
def test_python_that_fails_to_import_is_one_error(tmp_path: Path) -> None:
    root = write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"]},
        "tools.py": TOOLS_PY + "\ndef broken(:\n",
        "main.worker": MAIN_WITH_TOOL,
    })
    result = lint(root)
    assert result.codes() == ["Y001"]


def test_unknown_key_for_toolsets_is_one_error(tmp_path: Path) -> None:
    """`toolset:` drops the worker's toolsets: "approval matches nothing" and "helper is not
    reachable" would be its follow-ons."""
    root = write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["*.worker"]},
        "main.worker": worker("model: test\ntoolset:\n  - helper\napprovals:\n  - allow helper", "Go."),
        "helper.worker": worker("model: test", "Help."),
    })
    result = lint(root)
    assert result.codes() == ["P005"]
    text = run_cli("lint", root, env=PLAIN_ENV).stderr
    assert ": P005 error: unknown key 'toolset'" in text.splitlines()[0]


def test_unknown_toolset_with_settings_is_one_error_with_a_token_aware_hint(tmp_path: Path) -> None:
    root = write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["*.worker"]},
        "main.worker": worker("model: test\ntoolsets:\n  - filesystem_readonly:\n      path: data", "Go."),
    })
    result = lint(root)
    assert result.codes() == ["N003"]
    result.expect("N003", "main.worker", "filesystem_readonly", suggests="filesystem_project_ro")


def test_settings_for_a_worker_are_still_n008(tmp_path: Path) -> None:
    root = write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["*.worker"]},
        "main.worker": worker("model: test\ntoolsets:\n  - helper:\n      path: data", "Go."),
        "helper.worker": worker("model: test", "Help."),
    })
    result = lint(root)
    assert result.codes() == ["N008"]


def test_workers_reached_only_through_an_unparsed_worker_are_not_unreachable(tmp_path: Path) -> None:
    root = write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "runtime": {"max_depth": 2}},
        "main.worker": worker("model: test\ntoolsets: [broken]", "Go."),
        "broken.worker": "---\ndescription: a: b\ntoolsets: [leaf]\n---\nx\n",
        "leaf.worker": worker("model: test", "Leaf."),
    })
    result = lint(root)
    assert result.codes() == ["P001"]


def test_the_worker_a_misspelt_reference_means_is_not_unreachable(tmp_path: Path) -> None:
    root = write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["*.worker"]},
        "main.worker": worker("model: test\ntoolsets: [helpr]\napprovals: [allow helpr]", "Go."),
        "helper.worker": worker("model: test", "Help."),
        "orphan.worker": worker("model: test", "Nobody calls me."),
    })
    result = lint(root)
    assert sorted(result.codes()) == ["G003", "N003"]
    result.expect("N003", "main.worker", "helpr", suggests="helper")
    result.expect("G003", "orphan.worker", line=1, column=1)


def test_approval_rule_unrelated_to_the_unknown_reference_is_still_reported(tmp_path: Path) -> None:
    root = write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["*.worker"]},
        "main.worker": worker("model: test\ntoolsets: [helpr, helper]\napprovals: [allow nothing_like_this]", "Go."),
        "helper.worker": worker("model: test", "Help."),
    })
    result = lint(root)
    assert sorted(result.codes()) == ["A002", "N003"]


def test_invalid_stdlib_settings_hide_that_toolsets_tools_from_approval_checks(tmp_path: Path) -> None:
    root = write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["*.worker"]},
        "main.worker": worker("model: test\ntoolsets:\n  - filesystem_project: {pth: x}\napprovals: [allow write_file]", "Go."),
    })
    result = lint(root)
    assert result.codes() == ["P005"]


# --- every format: one project with a root cause and what used to follow from it

CASCADE = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tool.py"]},
    "tools.py": TOOLS_PY,
    "main.worker": worker("model: test\ntools: [shout]\ntoolset: [helper]\napprovals:\n  - allow shout", "Go."),
    "helper.worker": worker("model: test", "Help."),
}


@pytest.fixture(scope="module")
def cascade_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cwd = tmp_path_factory.mktemp("cascade")
    write_project(cwd / "proj", CASCADE)
    return cwd


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "github"])
def test_cascade_in_every_format(cascade_dir: Path, fmt: str, snapshot) -> None:
    result = run_cli("lint", "proj", "--format", fmt, cwd_to=cascade_dir, env=PLAIN_ENV)
    assert result.exit_code == 1
    out = result.stderr if fmt == "text" else result.stdout
    if fmt == "sarif":
        doc = json.loads(out)
        doc["runs"][0]["tool"]["driver"]["version"] = "<version>"
        out = json.dumps(doc, indent=2)
    for follow_on in ("N004", "A002", "G003"):
        assert follow_on not in out
    assert out == snapshot


@pytest.mark.process
def test_text_lists_errors_before_warnings_root_causes_first(tmp_path: Path) -> None:
    write_project(tmp_path / "proj", {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py", "tools.py"]},
        "tools.py": "import not_a_module_anywhere\n",
        "a.worker": worker("model: opnai:gpt-4o", "A."),
        "main.worker": worker("model: test", "Go."),
    })
    result = run_cli("lint", "proj", cwd_to=tmp_path, env=PLAIN_ENV)
    headers = [line.split(": ")[1] for line in result.stderr.splitlines() if line.startswith("proj/")]
    # Y001 (an import) is a root cause of more than M001 (a model name); the warnings come last,
    # although by file and line they would come first (project.json) and in between (a.worker).
    assert headers == ["Y001 error", "M001 error", "F004 warning", "G003 warning"], result.stderr
    # json keeps its documented order: by file, line, column.
    rows = run_cli("lint", "proj", "--format", "json", cwd_to=tmp_path).json()["diagnostics"]
    assert [r["code"] for r in rows] == ["G003", "M001", "F004", "Y001"]


def test_invalid_vars_do_not_make_every_template_variable_undefined(tmp_path: Path) -> None:
    root = write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "vars": ["tone"]},
        "main.worker": worker("model: test", "Be {{ tone }}."),
    })
    result = lint(root)
    assert result.codes() == ["P006"]


def test_invalid_entry_is_one_error(tmp_path: Path) -> None:
    root = write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": 5}},
        "lead.worker": worker("model: test", "Lead."),
    })
    result = lint(root)
    assert result.codes() == ["P006"]


def test_an_invalid_worker_files_entry_hides_reference_errors(tmp_path: Path) -> None:
    """The dropped entry might have listed the worker `other`."""
    root = write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["main.worker", 5]},
        "main.worker": worker("model: test\ntoolsets: [other]\napprovals: [allow other]", "Go."),
    })
    result = lint(root)
    assert result.codes() == ["P006"]


def test_an_invalid_python_files_entry_hides_tool_errors(tmp_path: Path) -> None:
    root = write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": [{"path": "tools.py"}]},
        "tools.py": TOOLS_PY,
        "main.worker": MAIN_WITH_TOOL,
    })
    result = lint(root)
    assert result.codes() == ["P006"]


def test_an_unknown_key_beside_the_key_it_resembles_hides_nothing(tmp_path: Path) -> None:
    root = write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["*.worker"]},
        "main.worker": worker("model: test\ntoolsets: [helpr]\ntoolset: [x]", "Go."),
        "helper.worker": worker("model: test", "Help."),
    })
    result = lint(root)
    assert sorted(result.codes()) == ["N003", "P005"]

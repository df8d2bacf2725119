"""Files and references (F001-F005, N001-N008 without Python): listed files missing or outside the
root, every kind of path escape, duplicate and shadowing names, unknown references with
did-you-mean hints."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.cli import write_project
from tests.support.lint import Lint, lint

# --- files listed in project.json


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Lint:
    root = write_project(tmp_path_factory.mktemp("files"), {
        "project.json": """
            {
              "version": 1,
              "worker_files": ["main.worker", "nope.worker", "notes.md", "main.worker", "sub/*.worker", "**/*.wrker"],
              "python_files": ["missing.py", "helpers.py", "helpers.py"]
            }
            """,
        "main.worker": "---\n---\nx\n",
        "notes.md": "not a worker\n",
        "helpers.py": "VALUE = 1\n",
    })
    return lint(root)


@pytest.mark.process
def test_listed_worker_file_missing(files: Lint) -> None:
    files.expect("F001", "project.json", '"nope.worker"', mentions=("nope.worker",))


@pytest.mark.process
def test_listed_python_file_missing(files: Lint) -> None:
    files.expect("F001", "project.json", '"missing.py"', mentions=("missing.py",))


@pytest.mark.process
def test_worker_files_entry_that_is_not_a_worker_file(files: Lint) -> None:
    files.expect("F005", "project.json", '"notes.md"', mentions=("notes.md",))


@pytest.mark.process
def test_file_listed_twice_warns_at_the_repetition(files: Lint) -> None:
    files.expect("F004", "project.json", '"main.worker"', nth=2)
    files.expect("F004", "project.json", '"helpers.py"', nth=2)


@pytest.mark.process
def test_pattern_matching_nothing_warns(files: Lint) -> None:
    files.expect("F003", "project.json", '"sub/*.worker"')
    files.expect("F003", "project.json", '"**/*.wrker"')


@pytest.mark.process
def test_files_project_reports_exactly_these(files: Lint) -> None:
    assert files.exit_code == 1
    assert sorted(files.codes()) == ["F001", "F001", "F003", "F003", "F004", "F004", "F005"]


# --- every kind of path escape, in every place a project names a path

def _escape_case(tmp_path: Path, place: str, kind: str) -> tuple[Path, str, str, str]:
    """A project whose `place` names a file outside the root in the way `kind` says.

    Returns (root, expected code, file, needle of the expected position)."""
    outside = tmp_path / "outside"
    write_project(outside, {
        "evil.worker": "---\nname: evil\n---\nOutside.\n",
        "evil.py": "VALUE = 1\n",
        "schemas.py": """
            from llm_do.runtime import WorkerArgs

            class Input(WorkerArgs):
                text: str = ""

                def prompt_messages(self):
                    return [self.text]
            """,
        "secret.txt": "s3cret\n",
    })
    root = tmp_path / "proj"
    root.mkdir()
    target = {"worker_files": "evil.worker", "python_files": "evil.py", "schema_in_ref": "schemas.py",
              "include": "secret.txt", "file()": "secret.txt", "toolset path": ""}[place]
    if kind == "absolute":
        path = (outside / target).as_posix()
    elif kind == "dotdot":
        path = f"../outside/{target}".rstrip("/")
    elif kind == "symlink":
        link = f"link{Path(target).suffix}"
        os.symlink(outside / target, root / link)
        path = link
    else:  # a path through a symlinked directory
        os.symlink(outside, root / "linkdir")
        path = f"linkdir/{target}"
    manifest: dict = {"version": 1, "worker_files": ["main.worker"]}
    front, body = "", "Do it."
    if place == "worker_files":
        manifest["worker_files"].append(path)
        code, file, needle = "F002", "project.json", json.dumps(path)
    elif place == "python_files":
        manifest["python_files"] = [path]
        code, file, needle = "F002", "project.json", json.dumps(path)
    elif place == "schema_in_ref":
        front = f"schema_in_ref: {path}:Input"
        code, file, needle = "F002", "main.worker", path
    elif place == "include":
        body = f"Read this:\n{{% include '{path}' %}}"
        code, file, needle = "T004", "main.worker", path
    elif place == "file()":
        body = f"Read this:\n{{{{ file('{path}') }}}}"
        code, file, needle = "T004", "main.worker", path
    else:
        front = f"toolsets:\n  - filesystem_project: {{path: {path}}}"
        code, file, needle = "F002", "main.worker", path
    write_project(root, {"project.json": manifest, "main.worker": f"---\n{front}\n---\n{body}\n"})
    return root, code, file, needle


ESCAPES = [
    (place, kind)
    for place in ("worker_files", "python_files", "schema_in_ref", "include", "file()")
    for kind in ("absolute", "dotdot", "symlink")
] + [("python_files", "symlinked-dir"), ("include", "symlinked-dir"), ("toolset path", "absolute"),
     ("toolset path", "dotdot"), ("toolset path", "symlink"), ("toolset path", "symlinked-dir")]


@pytest.mark.parametrize(("place", "kind"), ESCAPES, ids=[f"{p}-{k}" for p, k in ESCAPES])
@pytest.mark.process
def test_every_path_escape_is_refused(tmp_path: Path, place: str, kind: str) -> None:
    root, code, file, needle = _escape_case(tmp_path, place, kind)
    result = lint(root)
    assert result.exit_code == 1
    result.expect(code, file, needle)


def test_symlink_escape_after_a_glob_points_at_its_own_entry(tmp_path: Path) -> None:
    """The glob expands to several files; the position must still be the entry that names the link."""
    write_project(tmp_path / "outside", {"evil.worker": "---\n---\nOutside.\n"})
    root = write_project(tmp_path / "proj", {
        "project.json": {"version": 1, "worker_files": ["*.worker", "link.worker"]},
        "main.worker": "---\ntoolsets: [helper]\n---\nx\n",
        "helper.worker": "---\n---\nx\n",
    })
    os.symlink(tmp_path / "outside" / "evil.worker", root / "link.worker")
    result = lint(root)
    assert result.exit_code == 1
    result.expect("F002", "project.json", '"link.worker"')
    assert result.codes() == ["F002"]


# --- names and references

NAMES = {
    "project.json": {"version": 1, "worker_files": [
        "main.worker", "z/helper.worker", "a/helper.worker", "shell_readonly.worker", "callee.worker"]},
    "main.worker": """
        ---
        toolsets:
          - helper
          - helpr
          - filesystem_projekt
          - filesystem_project
          - filesystem_project_ro
          - helper
          - callee: {retries: 2}
          - shell_readonly
        tools: [search]
        ---
        Delegate.
        """,
    "z/helper.worker": "---\nname: helper\n---\nFirst.\n",
    "a/helper.worker": "---\ndescription: the second one\nname: helper\n---\nSecond.\n",
    "shell_readonly.worker": "---\nname: shell_readonly\n---\nShadows the stdlib toolset.\n",
    "callee.worker": "---\n---\nCalled.\n",
}


@pytest.fixture(scope="module")
def names(tmp_path_factory: pytest.TempPathFactory) -> Lint:
    return lint(write_project(tmp_path_factory.mktemp("names"), NAMES))


def test_duplicate_worker_name_at_the_second_name(names: Lint) -> None:
    first = names.at("z/helper.worker", "helper")
    names.expect("N001", "a/helper.worker", "helper", mentions=("helper",),
                 related=("z/helper.worker", *first))


def test_worker_named_like_a_stdlib_toolset(names: Lint) -> None:
    names.expect("N002", "shell_readonly.worker", "shell_readonly", mentions=("shell_readonly",))


def test_unknown_toolset_or_worker_with_did_you_mean(names: Lint) -> None:
    names.expect("N003", "main.worker", "helpr", suggests="helper", mentions=("helpr",))
    names.expect("N003", "main.worker", "filesystem_projekt", suggests="filesystem_project")


def test_two_toolsets_exposing_one_tool_name(names: Lint) -> None:
    first = names.at("main.worker", "filesystem_project\n")
    for tool in ("read_file", "list_files"):
        d = names.expect("N005", "main.worker", "filesystem_project_ro", mentions=(tool,),
                         related=("main.worker", *first))
        # both are stdlib toolsets, whose tools cannot be renamed
        assert d["hint"] == "list only one of 'filesystem_project' and 'filesystem_project_ro' (stdlib tools cannot be renamed)"


def test_toolset_listed_twice_warns(names: Lint) -> None:
    names.expect("N007", "main.worker", "- helper\n", nth=2, column=5)


def test_settings_for_a_worker(names: Lint) -> None:
    names.expect("N008", "main.worker", "{retries: 2}", mentions=("callee",))


def test_unknown_tool_without_python_files(names: Lint) -> None:
    d = names.expect("N004", "main.worker", "search", mentions=("search",))
    assert "python_files" in d["hint"]


def test_names_project_reports_exactly_these(names: Lint) -> None:
    """The worker shadowing a stdlib toolset is dropped, so `- shell_readonly` is the stdlib toolset;
    the duplicate helper is dropped, so nothing is unreachable."""
    assert names.exit_code == 1
    assert sorted(names.codes()) == ["N001", "N002", "N003", "N003", "N004", "N005", "N005", "N007", "N008"]


@pytest.mark.parametrize(("manifest", "needle", "suggests"), [
    ({"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "mian"}}, '"mian"', "main"),
    ({"version": 1, "worker_files": ["*.worker"]}, None, None),
], ids=["misspelt", "default-main-missing"])
def test_unknown_entry(tmp_path: Path, manifest: dict, needle: str | None, suggests: str | None) -> None:
    files = {"project.json": manifest, "helper.worker": "---\n---\nx\n"}
    if suggests:
        files["main.worker"] = "---\ntoolsets: [helper]\n---\nx\n"
    result = lint(write_project(tmp_path, files))
    assert result.exit_code == 1
    if needle:
        result.expect("N006", "project.json", needle, suggests=suggests, mentions=("mian",))
    else:
        result.expect("N006", "project.json", line=1, column=1, mentions=("main",))


@pytest.mark.parametrize("manifest", [{"version": 1}, {"version": 1, "worker_files": []}],
                         ids=["no-worker_files", "empty-worker_files"])
def test_project_without_any_worker_has_no_entry(tmp_path: Path, manifest: dict) -> None:
    """Nothing is listed, so the entry names no worker: an error, not a clean lint of an empty project."""
    result = lint(write_project(tmp_path, {"project.json": manifest, "main.worker": "---\n---\nx\n"}))
    d = result.expect("N006", "project.json", line=1, column=1, mentions=("main",))
    assert d["hint"] == 'worker_files lists no worker file: add them, e.g. "worker_files": ["**/*.worker"]'
    assert result.exit_code == 1


def test_an_entry_missing_because_no_pattern_matched_names_the_root_cause(tmp_path: Path) -> None:
    """F003 is a warning, so it is listed after the error it causes: N006 says where to look."""
    manifest = {"version": 1, "worker_files": ["worker/*.worker"], "entry": {"worker": "main"}}
    result = lint(write_project(tmp_path, {"project.json": manifest, "main.worker": "---\n---\nx\n"}))
    d = result.expect("N006", "project.json", '"main"')
    assert d["hint"] == "no worker_files entry matches a worker file (F003 says which), so there is no worker at all"
    result.expect("F003", "project.json", '"worker/*.worker"')


def test_a_schema_file_that_does_not_exist_suggests_the_one_beside_it(tmp_path: Path) -> None:
    result = lint(write_project(tmp_path, {"project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
                                           "main.worker": "---\nschema_out_ref: schema.py:Out\n---\nx\n",
                                           "schemas.py": "X = 1\n"}), "--no-import")
    result.expect("S002", "main.worker", "schema.py:Out", suggests="schemas.py")


# --- N003's hint: the toolsets a tool's name or a family's name means

HINTS = {
    "project.json": {"version": 1, "worker_files": ["*.worker"]},
    "main.worker": """\
        ---
        toolsets:
          - shell
          - read_file
          - filesystem
          - filesystem_readonly
          - reed_file
          - researchr
        ---
        Delegate.
        """,
    "researcher.worker": "---\n---\nResearch.\n",
}


@pytest.fixture(scope="module")
def hints(tmp_path_factory: pytest.TempPathFactory) -> Lint:
    return lint(write_project(tmp_path_factory.mktemp("hints"), HINTS))


@pytest.mark.parametrize(("needle", "hint"), [
    ("shell", "'shell' is a tool, not a toolset: list the toolset that has it, 'shell_readonly' or 'shell_file_ops'"),
    ("read_file", "'read_file' is a tool, not a toolset: list the toolset that has it, 'filesystem_project', "
                  "'filesystem_project_ro', 'filesystem_cwd' or 'filesystem_cwd_ro'"),
    ("filesystem\n", "did you mean 'filesystem_project', 'filesystem_project_ro', 'filesystem_cwd' or 'filesystem_cwd_ro'?"),
    ("filesystem_readonly", "did you mean 'filesystem_project_ro' or 'filesystem_cwd_ro'?"),
    ("reed_file", "did you mean the tool 'read_file'? list the toolset that has it, 'filesystem_project', "
                  "'filesystem_project_ro', 'filesystem_cwd' or 'filesystem_cwd_ro'"),
    ("researchr", "did you mean 'researcher'?"),
], ids=["tool-of-two", "tool-of-four", "family", "two-tie", "near-a-tool", "worker"])
def test_unknown_toolset_names_the_toolsets_and_workers_it_may_mean(hints: Lint, needle: str, hint: str) -> None:
    d = hints.expect("N003", "main.worker", needle)
    assert d["hint"] == hint


def test_a_misspelt_worker_is_not_unreachable(hints: Lint) -> None:
    hints.absent("G003")


@pytest.mark.process
def test_the_tools_of_a_python_toolset_point_at_it(tmp_path: Path) -> None:
    root = write_project(tmp_path, {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"]},
        "main.worker": "---\ntoolsets: [lookup]\n---\nGo.\n",
        "tools.py": "from pydantic_ai import FunctionToolset\n\n\ndef lookup(q: str) -> str:\n    return q\n\n\n"
                    "TOOLSETS = {'catalog': FunctionToolset([lookup])}\n",
    })
    d = lint(root).expect("N003", "main.worker", "lookup")
    assert d["hint"] == "'lookup' is a tool, not a toolset: list the toolset that has it, 'catalog'"

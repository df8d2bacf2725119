"""What every approver is shown of a stdlib call: paths and commands as the rules judge them,
whole, with the toolset's root beside them (newcomer F4)."""

from __future__ import annotations

from pathlib import Path

from llm_do.toolkit.hooks import Decisive


def test_a_path_is_shown_as_the_rule_sees_it_with_the_root_beside_it(fs, tmp_path: Path) -> None:
    """Under `path: docs` a rule sees `a.txt`, so that is what is shown, with `in docs/`."""
    (tmp_path / "root" / "docs").mkdir()
    toolset = fs("filesystem_project", path="docs")
    assert toolset.shown_args("write_file", {"path": "notes/../a.txt", "content": "x"}) == {
        "path": Decisive("a.txt", "in docs/"), "content": "x"}
    assert toolset.normalize_args("write_file", {"path": "notes/../a.txt", "content": "x"})["path"] == "a.txt"


def test_a_toolset_at_the_project_root_says_so(fs) -> None:
    assert fs("filesystem_project").shown_args("read_file", {"path": "./a.txt"})["path"] == Decisive("a.txt", "in the project")
    assert fs("filesystem_cwd", path="sub").shown_args("read_file", {"path": "a.txt"})["path"] == Decisive(
        "a.txt", "in sub/ of the working directory")


def test_a_path_the_tool_will_refuse_is_shown_as_written_saying_so(fs) -> None:
    toolset = fs("filesystem_project")
    assert toolset.shown_args("write_file", {"path": "../out.txt", "content": "x"})["path"] == Decisive(
        "../out.txt", "outside the project: the tool will refuse it")


def test_a_shell_command_is_shown_normalized_where_it_runs(shell, tmp_path: Path) -> None:
    (tmp_path / "root" / "src" / "d").mkdir(parents=True)
    assert shell("shell_file_ops", path="src").shown_args("shell", {"command": "mv -t d ./a"}) == {
        "command": Decisive("mv a d", "in src/")}
    assert shell("shell_file_ops").shown_args("shell", {"command": "rm a"}) == {
        "command": Decisive("rm a", "in the project; the toolset will refuse it")}

"""What the approval question shows of a stdlib call: paths as the person knows them."""

from __future__ import annotations

from pathlib import Path


def test_a_path_is_shown_relative_to_the_project_with_the_sub_directory(fs, tmp_path: Path) -> None:
    (tmp_path / "root" / "docs").mkdir()
    toolset = fs("filesystem_project", path="docs")
    assert toolset.shown_args("write_file", {"path": "notes/../a.txt", "content": "x"}) == {
        "path": "docs/a.txt", "content": "x"}


def test_a_path_the_tool_will_refuse_is_shown_as_written(fs) -> None:
    toolset = fs("filesystem_project")
    assert toolset.shown_args("write_file", {"path": "../out.txt", "content": "x"})["path"] == "../out.txt"


def test_a_shell_in_a_sub_directory_says_where_it_runs(shell, tmp_path: Path) -> None:
    (tmp_path / "root" / "src").mkdir()
    assert shell("shell_file_ops", path="src").shown_args("shell", {"command": "mv a b"}) == {
        "in": "src/", "command": "mv a b"}
    assert shell("shell_file_ops").shown_args("shell", {"command": "mv a b"}) == {"command": "mv a b"}

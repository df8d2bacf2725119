"""`normalize_args`: the arguments approval rules judge. A path is the one the tool will touch,
relative to the toolset's root after `..`, `.` and symlinks are resolved; shell adds the parsed
`argv`. What a rule cannot judge (a path out of the root, a refused command) is left out."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from llm_do.stdlib.filesystem.descriptor import FilesystemSettings
from llm_do.stdlib.filesystem.toolset import FilesystemToolset
from llm_do.stdlib.registry import STDLIB_TOOLSETS
from llm_do.stdlib.shell.descriptor import ShellSettings
from llm_do.stdlib.shell.toolset import ShellToolset


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "output").mkdir()
    (tmp_path / "src").mkdir()
    os.symlink("../src", tmp_path / "output" / "link")
    os.symlink("/", tmp_path / "output" / "out")
    return tmp_path


def fs(root: Path, path: str = ".") -> FilesystemToolset:
    return FilesystemToolset(STDLIB_TOOLSETS["filesystem_project"], FilesystemSettings(path=path), root)


@pytest.mark.parametrize(("given", "normalized"), [
    ("output/a.txt", "output/a.txt"),
    ("output/../src/x.py", "src/x.py"),
    ("./output/../x", "x"),
    ("output/./a/../b", "output/b"),
    ("output/link/x", "src/x"),  # through a symlink: where the tool will write
    ("output/link", "src"),
    (".", "."),
])
def test_paths_are_resolved_below_the_root(root: Path, given: str, normalized: str) -> None:
    args = fs(root).normalize_args("write_file", {"path": given, "content": "c"})
    assert args == {"path": normalized, "content": "c"}


@pytest.mark.parametrize("given", ["../x", "output/out/etc/passwd", "/etc/passwd", "", "~/x"])
def test_a_path_the_tool_refuses_is_left_out(root: Path, given: str) -> None:
    assert fs(root).normalize_args("read_file", {"path": given}) == {"offset": 0, "max_chars": 20000}


def test_paths_are_relative_to_the_toolsets_own_root(root: Path) -> None:
    """With `path: output` the toolset's root is output/, and `link/x` is `../src/x`: outside it."""
    assert fs(root, "output").normalize_args("write_file", {"path": "a/../b", "content": ""})["path"] == "b"
    assert "path" not in fs(root, "output").normalize_args("write_file", {"path": "link/x", "content": ""})


def test_defaults_are_filled_in(root: Path) -> None:
    assert fs(root).normalize_args("list_files", {}) == {"path": ".", "pattern": "**/*"}


def test_arguments_that_do_not_validate_are_kept_as_given(root: Path) -> None:
    """The call fails validation before it could run; the rule still sees what it can."""
    assert fs(root).normalize_args("read_file", {"path": "a/../b", "offset": "x"}) == {"path": "b", "offset": "x"}


def test_an_unknown_tool_keeps_its_arguments(root: Path) -> None:
    assert fs(root).normalize_args("nope", {"path": "../x"}) == {"path": "../x"}


def shell(root: Path, name: str = "shell_file_ops") -> ShellToolset:
    return ShellToolset(STDLIB_TOOLSETS[name], ShellSettings(), root)


def test_shell_adds_the_parsed_argv(root: Path) -> None:
    args = shell(root).normalize_args("shell", {"command": "mv  'output/a b'  src/c"})
    assert args == {"command": "mv  'output/a b'  src/c", "timeout": None, "argv": ["mv", "output/a b", "src/c"]}


@pytest.mark.parametrize("command", ["mv keep.txt d/", "mv ./keep.txt d", "mv d/../keep.txt d/", "mv -t d keep.txt",
                                     "mv -td keep.txt", "mv --target-directory d keep.txt", "mv keep.txt output/../d"])
def test_every_spelling_of_one_move_normalizes_alike(root: Path, command: str) -> None:
    """Operands resolved like paths and the destination flag folded in as the last operand."""
    (root / "d").mkdir()
    assert shell(root).normalize_args("shell", {"command": command})["argv"] == ["mv", "keep.txt", "d"]


@pytest.mark.parametrize(("command", "argv", "shown"), [
    ("mv -fv -- ./-b d/", ["mv", "-b", "d", "-f", "-v"], "mv -f -v -- -b d"),
    ("mv -t output/link a", ["mv", "a", "src"], "mv a src"),
    ("ls -la output/./link", ["ls", "src", "-l", "-a"], "ls -l -a src"),
    ("ls --sort=size .", ["ls", ".", "--sort", "size"], "ls --sort size ."),
])
def test_operands_first_then_flags_one_per_word(root: Path, command: str, argv: list[str], shown: str) -> None:
    """Rules see the operands first (`argv[1]` is the first operand whatever the flags); the
    approver is shown the same call as a command line, flags first."""
    assert shell(root).normalize_args("shell", {"command": command})["argv"] == argv
    assert shell(root).shown_args("shell", {"command": command})["command"].text == shown


@pytest.mark.parametrize(("command", "argv"), [
    ("grep -n ./x output/../src", ["grep", "./x", "src", "-n"]),  # the pattern is not a path
    ("grep -f ./output/p.txt x", ["grep", "x", "-f", "output/p.txt"]),
    ("head -5 ./src/keep.txt", ["head", "src/keep.txt", "-5"]),
    ("find ./output/.. -name '*.py' -newer ./src", ["find", ".", "-name", "*.py", "-newer", "src"]),
    ("git --no-pager log -n 3 -- ./src", ["git", "log", "./src", "-n", "3"]),  # pathspecs as given
])
def test_readonly_commands_normalize_by_their_tables(root: Path, command: str, argv: list[str]) -> None:
    assert shell(root, "shell_readonly").normalize_args("shell", {"command": command})["argv"] == argv


@pytest.mark.parametrize("command", ["rm -rf x", "ls | cat", "mv ../a b", ""])
def test_a_command_line_the_toolset_refuses_has_no_argv(root: Path, command: str) -> None:
    assert "argv" not in shell(root).normalize_args("shell", {"command": command})


def test_the_derived_argv_is_declared_with_the_toolsets_commands() -> None:
    [tool] = STDLIB_TOOLSETS["shell_file_ops"].tools
    assert tool.derived["argv"]["prefixItems"][0]["enum"] == ["ls", "mv"]
    assert STDLIB_TOOLSETS["filesystem_project"].tool("read_file").derived == {}
    assert STDLIB_TOOLSETS["filesystem_project"].tool("write_file").path_params == ("path",)


@pytest.mark.parametrize(("command", "moved"), [
    ("mv -fv -- -b src/", (["-b"], "src/-b")),
    ("mv --update=older a output/link", (["a"], "src/a")),  # through the link: where the file lands
    ("mv -t output/link a", (["a"], "src/a")),
    ("mv a b d/", None),  # one source a call: the toolset refuses the line
    ("ls -la output", None),
])
def test_a_move_says_what_it_moves_and_where(root: Path, command: str, moved: tuple[list[str], str] | None) -> None:
    """What the taint guard judges a move on (red team M1): the source and where it lands, absolute."""
    toolset = shell(root)
    found = toolset.moves("shell", toolset.normalize_args("shell", {"command": command}))
    real = os.path.realpath(root)
    assert found == (None if moved is None else ([os.path.join(real, s) for s in moved[0]], os.path.join(real, moved[1])))

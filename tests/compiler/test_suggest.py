"""Did-you-mean hints: multi-part names matched part by part, file names by name and suffix."""

from __future__ import annotations

import pytest

from llm_do.compiler.suggest import closest_name, closest_names, did_you_mean_file
from llm_do.stdlib.registry import STDLIB_TOOLSETS

TOOLSETS = [*STDLIB_TOOLSETS, "helper", "researcher"]


@pytest.mark.parametrize("word, expected", [
    ("filesystem_readonly", "filesystem_project_ro"),  # character similarity alone says filesystem_cwd
    ("filesystem_ro", "filesystem_project_ro"),
    ("fs_project_ro", "filesystem_project_ro"),
    ("filesystem_cwd_readonly", "filesystem_cwd_ro"),
    ("shell_read_only", "shell_readonly"),
    ("shell-readonly", "shell_readonly"),
    ("filesytem_project", "filesystem_project"),
    ("helpr", "helper"),
    ("nothing_like_this", None),
])
def test_closest_name(word: str, expected: str | None) -> None:
    assert closest_name(word, TOOLSETS) == expected


@pytest.mark.parametrize("path, existing, expected", [
    ("tool.py", ["tools.py", "main.worker"], "did you mean 'tools.py'?"),
    ("lib/tool.py", ["lib/tools.py"], "did you mean 'lib/tools.py'?"),
    ("tools.pyi", ["tools.py"], "did you mean 'tools.py'?"),
    ("missing.worker", ["main.worker", "notes.txt"], None),  # `.worker` in common is no likeness
    ("tool.py", [], None),
])
def test_did_you_mean_file(path: str, existing: list[str], expected: str | None) -> None:
    assert did_you_mean_file(path, existing) == expected


@pytest.mark.parametrize("word, expected", [
    ("shell", ["shell_readonly", "shell_file_ops"]),  # a family: every toolset it begins
    ("filesystem", ["filesystem_project", "filesystem_project_ro", "filesystem_cwd", "filesystem_cwd_ro"]),
    ("filesystem_readonly", ["filesystem_project_ro", "filesystem_cwd_ro"]),  # a tie: both
    ("filesystem_projekt", ["filesystem_project"]),  # one fits best
    ("shell-readonly", ["shell_readonly"]),
    ("helpr", ["helper"]),
    ("nothing_like_this", []),
])
def test_closest_names(word: str, expected: list[str]) -> None:
    assert closest_names(word, TOOLSETS) == expected

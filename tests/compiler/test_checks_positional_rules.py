"""A012 (red team M4): a rule that tests one position of shell's `argv` against an operand misses
the calls that put the operand elsewhere (`cat a secret.txt`); `argv[*]` (any element) tests every
word. Positions a pinned command fixes (mv's source and destination, git's subcommand) pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import worker, write_project
from tests.support.lint import lint


def project(tmp_path: Path, rule: str) -> Path:
    """mv is shell_file_ops' command, the rest shell_readonly's."""
    toolset = "shell_file_ops" if "'mv'" in rule and "'cat'" not in rule else "shell_readonly"
    front = f"toolsets: [{toolset}]\napprovals:\n  - allow shell\n  - \"{rule}\""
    return write_project(tmp_path, {"main.worker": worker(front)})


@pytest.mark.parametrize("rule", [
    "deny shell(argv[1] == 'secret.txt')",
    "deny shell(argv[0] == 'cat' and argv[1] == 'secret.txt')",
    "deny shell(argv[2] ~ 'secrets/**')",
    "deny shell(argv[0] == 'mv' and argv[3] == 'x')",  # past mv's source and destination: a flag's place
    "deny shell(argv[0] in ['mv', 'cat'] and argv[1] == 'keep.txt')",  # cat's argv[1] is not fixed
    "deny shell(argv[1] in ['a.txt', 'b.txt'])",
])
def test_a_test_of_one_operand_position_warns_at_the_parameter(tmp_path: Path, rule: str) -> None:
    result = lint(project(tmp_path, rule))
    param = rule[rule.index("argv[", rule.index("argv[0]") + 1 if "argv[0]" in rule else 0):][:7]
    d = result.expect("A012", "main.worker", param, mentions=("tests one position of the command line",))
    assert d["severity"] == "warning" and "argv[*]" in d["hint"], d
    assert result.exit_code == 0


@pytest.mark.parametrize("rule", [
    "deny shell(argv[0] == 'mv' and argv[1] == 'keep.txt')",  # spec/stdlib.md's own examples
    "deny shell(argv[0] == 'mv' and argv[2] == 'protected')",
    "ask shell(argv[0] in ['mv'] and not argv[2] ~ 'output/**')",
    "deny shell(argv[0] == 'git' and argv[1] == 'show')",
    "deny shell(argv[*] == 'secret.txt')",
    "ask shell(argv[*] == '-r')",
    "ask shell(argv[2] == '-r')",  # a flag, not an operand
    "deny shell(argv[0] == 'cat')",
])
def test_fixed_positions_flags_and_any_element_do_not_warn(tmp_path: Path, rule: str) -> None:
    result = lint(project(tmp_path, rule))
    result.absent("A012")
    assert result.codes() == [], result.diagnostics


def test_any_element_is_type_checked_like_an_index(tmp_path: Path) -> None:
    result = lint(project(tmp_path, "deny shell(argv[*] > 3)"))
    result.expect("A004", "main.worker", "argv[*]", mentions=("is a string; `>` compares numbers",))
    result = lint(project(tmp_path, "deny shell(command[*] == 'x')"))
    result.expect("A003", "main.worker", "command[*]")

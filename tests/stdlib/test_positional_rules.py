"""Rules on shell's `argv` positions hold whatever the spelling (red team M4): operands come first
in the normalized argv, mv takes one source, and `argv[*]` tests every word. The worked examples
of spec/stdlib.md#normalized-command are read from the spec and checked here, so they stay true."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from llm_do.bundle.approval import decide
from llm_do.compiler.approvals.grammar import parse_rule
from llm_do.compiler.approvals.lower import rule_entry
from llm_do.stdlib.registry import STDLIB_TOOLSETS
from llm_do.stdlib.shell.commands import CommandRefused, parse_command
from llm_do.stdlib.shell.descriptor import ShellSettings
from llm_do.stdlib.shell.toolset import ShellToolset

SPEC = Path(__file__).resolve().parents[2] / "spec" / "stdlib.md"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for folder in ("d", "protected", "src"):
        (tmp_path / folder).mkdir()
    for name in ("keep.txt", "a.txt", "b.txt", "notes.md", "secret.txt"):
        (tmp_path / name).write_text("x")
    return tmp_path


def argv(root: Path, command: str, toolset: str | None = None) -> list[str]:
    name = toolset or ("shell_file_ops" if command.startswith(("mv", "ls")) else "shell_readonly")
    return list(ShellToolset(STDLIB_TOOLSETS[name], ShellSettings(), root).normalize_args("shell", {"command": command})["argv"])


def spec_examples() -> list[tuple[str, list[str], bool]]:
    """(spelling, argv, whether argv is only a prefix: `...`) of every row of the spec's table."""
    text = SPEC.read_text(encoding="utf-8")
    table = text[text.index("| Spellings | `argv` |"):].split("\n\n", 1)[0].splitlines()[2:]
    rows = []
    for line in table:
        spellings, shown = (cell.strip() for cell in line.strip("|").split("|"))
        prefix = shown.endswith("...]`")
        expected = json.loads(shown.strip("`").replace(", ...]", "]"))
        rows += [(s, expected, prefix) for s in re.findall(r"`([^`]+)`", spellings)]
    return rows


@pytest.mark.parametrize(("command", "expected", "prefix"), spec_examples())
def test_the_specs_worked_examples_hold(root: Path, command: str, expected: list[str], prefix: bool) -> None:
    found = argv(root, command)
    assert (found[:len(expected)] if prefix else found) == expected


def test_the_spec_has_its_worked_examples() -> None:
    assert len(spec_examples()) >= 15


RULES = ["deny shell(argv[0] == 'mv' and argv[1] == 'keep.txt')", "deny shell(argv[0] == 'mv' and argv[2] == 'protected')",
         "allow shell"]


def _decision(root: Path, command: str, rules: list[str]) -> str:
    lowered = [rule_entry(parse_rule(text, i)) for i, text in enumerate(rules)]
    return decide(lowered, {"command": command, "argv": argv(root, command)}, "auto")


@pytest.mark.parametrize("command", ["mv keep.txt d/", "mv -v keep.txt d/", "mv keep.txt -v d", "mv -fv -- keep.txt d",
                                     "mv -t d keep.txt", "mv -t d -v ./keep.txt", "mv --target-directory=d -f keep.txt",
                                     "mv -f -u keep.txt d/../d", "mv -T ./keep.txt d2",
                                     "mv a.txt protected/", "mv -v a.txt protected", "mv -t protected -f a.txt",
                                     "mv -fv a.txt ./protected/", "mv -- a.txt protected", "mv --verbose a.txt protected"])
def test_the_red_teams_positional_denies_hold_for_every_respelling(root: Path, command: str) -> None:
    assert _decision(root, command, RULES) == "deny"


def test_a_move_the_rules_do_not_name_is_allowed(root: Path) -> None:
    assert _decision(root, "mv -v a.txt d", RULES) == "allow"


@pytest.mark.parametrize("command", ["mv a.txt b.txt protected/", "mv -t protected a.txt b.txt", "mv a.txt keep.txt d"])
def test_mv_moves_one_source_per_call(root: Path, command: str) -> None:
    with pytest.raises(CommandRefused, match="move one file or folder per call"):
        parse_command("shell_file_ops", command, root)


@pytest.mark.parametrize(("command", "held"), [("cat secret.txt", True), ("cat -n notes.md secret.txt", True),
                                               ("cat notes.md ./secret.txt -A", True), ("head -n 2 secret.txt notes.md", True),
                                               ("cat notes.md", False), ("grep secret.txt notes.md", True)])
def test_any_element_tests_every_word(root: Path, command: str, held: bool) -> None:
    """`argv[*] == 'secret.txt'` holds wherever the word is (grep's pattern is a word too)."""
    assert _decision(root, command, ["deny shell(argv[*] == 'secret.txt')", "allow shell"]) == ("deny" if held else "allow")
    assert _decision(root, command, ["ask shell(not argv[*] == 'secret.txt')", "allow shell(argv[0] == 'cat')"]) == (
        "allow" if command.startswith("cat") else ("auto" if held else "ask"))


def test_a_lone_dash_operand_is_judged_as_it_runs(root: Path) -> None:
    """Mutation survivor 10: `-` is an operand (stdin, or a file named `-`), never an empty flag
    cluster: the argv the rules and the approver see has every operand the command runs with."""
    (root / "-").write_text("a file named -\n")
    for command, toolset in (("cat a.txt -", "shell_readonly"), ("grep x -", "shell_readonly"), ("mv - d", "shell_file_ops")):
        planned = parse_command(toolset, command, root)
        assert "-" in planned.argv and "-" in planned.normalized, (command, planned)
        assert [w for w in planned.normalized if not w.startswith("-") or w == "-"] == \
            [w for w in planned.argv if not w.startswith("-") or w == "-"], planned


def test_a_rule_on_a_lone_dash_operand_holds(root: Path) -> None:
    assert _decision(root, "cat a.txt -", ["deny shell(argv[*] == '-')", "allow shell"]) == "deny"

"""The shell policy's confinement, flag by flag: every pattern-taking and path-taking flag of every
command, every flag's effect on the word after it, every refused flag, each with an operand outside
the root. The cases are generated from the tables, and the tables themselves are pinned by a
snapshot, so a flag moved, dropped or loosened shows up in review as a snapshot change.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from llm_do.stdlib.shell.commands import (
    ALLOWLISTS,
    FIND,
    GIT,
    SHELL_SYNTAX,
    CommandRefused,
    CommandSpec,
    FindSpec,
    GitSpec,
    Option,
    parse_command,
)

OUTSIDE = "/etc/passwd"
ABSOLUTE = f"'{OUTSIDE}' is absolute"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("a\n")
    return root


def refused(root: Path, line: str, toolset: str) -> str:
    with pytest.raises(CommandRefused) as info:
        parse_command(toolset, line, root)
    return str(info.value)


def commands() -> list[tuple[str, str, CommandSpec]]:
    """(toolset, the words that name the command, its spec) for every getopt-style command."""
    out = []
    for toolset, table in ALLOWLISTS.items():
        for name, spec in table.items():
            if isinstance(spec, GitSpec):
                out.extend((toolset, f"git {sub}", s) for sub, s in spec.subcommands.items())
            elif isinstance(spec, CommandSpec):
                out.append((toolset, name, spec))
    return out


def flag_cases(select) -> list[tuple[str, str, CommandSpec, str, Option]]:
    cases = [(toolset, name, spec, flag, option)
             for toolset, name, spec in commands() for flag, option in spec.options.items()
             if select(spec, flag, option)]
    assert cases
    return cases


def ids(cases: list[tuple]) -> list[str]:
    return [f"{c[0]}:{c[1]}:{c[3]}" for c in cases]


def needs_pattern(spec: CommandSpec, flag: str) -> str:
    """The pattern operand a command wants before its paths, unless `flag` gives the pattern."""
    return "x " if spec.operands == "pattern then paths" and flag not in spec.pattern_flags else ""


def value_for(option: Option) -> str:
    return "a.txt" if option.path else "1"


# --- the word after a flag ------------------------------------------------------------------------

PLAIN = flag_cases(lambda spec, flag, option: option.arity in ("none", "attached"))


@pytest.mark.parametrize(("toolset", "name", "spec", "flag", "option"), PLAIN, ids=ids(PLAIN))
def test_a_flag_without_a_separate_value_leaves_the_next_word_an_operand(root: Path, toolset: str, name: str,
                                                                         spec: CommandSpec, flag: str,
                                                                         option: Option) -> None:
    """Were the flag read as taking a value, the path after it would never be confined."""
    line = f"{name} {flag} {needs_pattern(spec, flag)}{OUTSIDE}"
    assert ABSOLUTE in refused(root, line, toolset)


REQUIRED = flag_cases(lambda spec, flag, option: option.arity == "required")


@pytest.mark.parametrize(("toolset", "name", "spec", "flag", "option"), REQUIRED, ids=ids(REQUIRED))
def test_a_flag_with_a_value_still_leaves_the_operands_after_it_confined(root: Path, toolset: str, name: str,
                                                                         spec: CommandSpec, flag: str,
                                                                         option: Option) -> None:
    """`-f p.txt /etc/passwd`, `-m 1 x /etc/passwd`: the value is one word, then operands again."""
    line = f"{name} {flag} {value_for(option)} {needs_pattern(spec, flag)}{OUTSIDE}"
    assert ABSOLUTE in refused(root, line, toolset)
    if flag.startswith("--"):
        line = f"{name} {flag}={value_for(option)} {needs_pattern(spec, flag)}{OUTSIDE}"
        assert ABSOLUTE in refused(root, line, toolset)


PATTERN_FLAGS = flag_cases(lambda spec, flag, option: flag in spec.pattern_flags)


def test_the_pattern_flags_are_greps_e_and_f() -> None:
    assert sorted(c[3] for c in PATTERN_FLAGS) == ["--file", "--regexp", "-e", "-f"]


@pytest.mark.parametrize(("toolset", "name", "spec", "flag", "option"), PATTERN_FLAGS, ids=ids(PATTERN_FLAGS))
def test_with_a_pattern_flag_every_operand_is_a_path(root: Path, toolset: str, name: str, spec: CommandSpec,
                                                     flag: str, option: Option) -> None:
    """`grep -f p.txt /etc/passwd`: the pattern came from the flag, so the first operand is a file."""
    value = value_for(option)
    forms = [f"{flag} {value}", f"{flag}={value}" if flag.startswith("--") else f"{flag}{value}"]
    for form in forms:
        assert ABSOLUTE in refused(root, f"{name} {form} {OUTSIDE}", toolset), form
        assert parse_command(toolset, f"{name} {form} sub", root).argv[-1] == "sub"
    # Both flags together, and a flag after the operand (getopt permutes): still every operand a path.
    assert ABSOLUTE in refused(root, f"{name} {OUTSIDE} {flag} {value}", toolset)


@pytest.mark.parametrize(
    "line",
    [
        "grep -f a.txt /etc/passwd",
        "grep -fa.txt /etc/passwd",
        "grep --file a.txt /etc/passwd",
        "grep --file=a.txt /etc/passwd",
        "grep -e x /etc/passwd",
        "grep -ex /etc/passwd",
        "grep --regexp x /etc/passwd",
        "grep --regexp=x /etc/passwd",
        "grep -i -f a.txt -n /etc/passwd",
        "grep -r -e x -e y sub /etc/passwd",
        "find -P /etc -name passwd",
        "find -P -P /etc -name passwd",
    ],
)
def test_operands_after_a_pattern_flag_or_find_P_are_confined(root: Path, line: str) -> None:
    """Written out, not generated from the tables: dropping `-f` from grep's pattern flags, or
    mis-skipping find's `-P`, once left the real file operand unconfined."""
    message = refused(root, line, "shell_readonly")
    assert "'/etc" in message and "is absolute" in message, message


def test_without_a_pattern_flag_the_first_operand_is_the_pattern(root: Path) -> None:
    assert parse_command("shell_readonly", f"grep {OUTSIDE} a.txt", root).argv == ("grep", OUTSIDE, "a.txt")
    assert ABSOLUTE in refused(root, f"grep -i x {OUTSIDE}", "shell_readonly")


PATH_VALUED = flag_cases(lambda spec, flag, option: option.path)


@pytest.mark.parametrize(("toolset", "name", "spec", "flag", "option"), PATH_VALUED, ids=ids(PATH_VALUED))
def test_a_path_valued_flag_is_confined_in_every_form(root: Path, toolset: str, name: str, spec: CommandSpec,
                                                      flag: str, option: Option) -> None:
    rest = f"{needs_pattern(spec, flag)}a.txt"
    forms = [f"{flag} {OUTSIDE}", f"{flag}={OUTSIDE}" if flag.startswith("--") else f"{flag}{OUTSIDE}"]
    for form in forms:
        assert ABSOLUTE in refused(root, f"{name} {form} {rest}", toolset), form
        assert "points outside" in refused(root, f"{name} {form.replace(OUTSIDE, '../x')} {rest}", toolset), form


def test_the_path_valued_flags_are_the_expected_ones() -> None:
    assert sorted(c[1] + " " + c[3] for c in PATH_VALUED) == [
        "grep --exclude-from", "grep --file", "grep -f", "mv --target-directory", "mv -t", "sort --random-source",
    ]


# --- refused flags --------------------------------------------------------------------------------

REFUSED = [(toolset, name, spec, flag, reason)
           for toolset, name, spec in commands() for flag, reason in spec.refused.items()]


@pytest.mark.parametrize(("toolset", "name", "spec", "flag", "reason"), REFUSED, ids=ids(REFUSED))
def test_every_refused_flag_is_refused_with_its_reason(root: Path, toolset: str, name: str, spec: CommandSpec,
                                                       flag: str, reason: str) -> None:
    pattern = needs_pattern(spec, flag)
    expected = f"{name}: {flag} is not allowed: {reason}"
    assert expected in refused(root, f"{name} {flag} {pattern}a.txt", toolset)
    if flag.startswith("--"):
        assert expected in refused(root, f"{name} {flag}=a.txt {pattern}a.txt", toolset)
    elif spec.clustered and len(flag) == 2:
        assert expected in refused(root, f"{name} -{_some_plain_short_flag(spec)}{flag[1]} {pattern}a.txt", toolset)


def _some_plain_short_flag(spec: CommandSpec) -> str:
    return next(f[1] for f, o in spec.options.items() if len(f) == 2 and f[1].isalpha() and o.arity == "none")


# --- find -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("option", ["-P", ""])
def test_find_confines_its_starting_points_after_P(root: Path, option: str) -> None:
    for start in ("/etc", "..", "sub/../.."):
        message = refused(root, f"find {option} {start} -name passwd", "shell_readonly")
        assert "find: " in message and ("absolute" in message or "points outside" in message), message
    assert parse_command("shell_readonly", f"find {option} sub -name x", root).argv[-3:] == ("sub", "-name", "x")


@pytest.mark.parametrize("operator", ["(", ")", "!", ",", "-a"])
def test_finds_operators_are_never_taken_for_starting_points(root: Path, tmp_path: Path, operator: str) -> None:
    """Even where a file of that name is a link out of the root: find reads the word as an operator
    (or, starting with `-`, as a primary)."""
    (tmp_path / "elsewhere").mkdir()
    (root / operator).symlink_to(tmp_path / "elsewhere")
    assert parse_command("shell_readonly", f"find {operator} -name x", root).argv == ("find", operator, "-name", "x")
    assert "symbolic link" in refused(root, f"find ./{operator} -name x", "shell_readonly")


def test_find_confines_every_starting_point(root: Path) -> None:
    assert ABSOLUTE in refused(root, f"find -P . sub {OUTSIDE} -name x", "shell_readonly")


@pytest.mark.parametrize("primary", sorted(p for p, kind in FIND.primaries.items() if kind == "path"))
def test_find_confines_path_valued_primaries(root: Path, primary: str) -> None:
    assert ABSOLUTE in refused(root, f"find . {primary} {OUTSIDE}", "shell_readonly")
    assert parse_command("shell_readonly", f"find . {primary} a.txt", root).argv[-1] == "a.txt"


@pytest.mark.parametrize("primary", sorted(p for p, kind in FIND.primaries.items() if kind == "text"))
def test_find_takes_one_text_value_then_the_expression_goes_on(root: Path, primary: str) -> None:
    argv = parse_command("shell_readonly", f"find . {primary} {OUTSIDE} -print", root).argv
    assert argv[-3:] == (primary, OUTSIDE, "-print")
    assert "find: unexpected 'stray'" in refused(root, f"find . {primary} v stray", "shell_readonly")


@pytest.mark.parametrize("primary", sorted(p for p, kind in FIND.primaries.items() if kind == "none"))
def test_find_primaries_without_a_value_take_none(root: Path, primary: str) -> None:
    assert parse_command("shell_readonly", f"find . {primary} -newer a.txt", root).argv[-2:] == ("-newer", "a.txt")
    assert ABSOLUTE in refused(root, f"find . {primary} -newer {OUTSIDE}", "shell_readonly")


@pytest.mark.parametrize("primary", sorted(FIND.refused))
def test_find_refuses_each_refused_primary_anywhere(root: Path, primary: str) -> None:
    expected = f"find: {primary} is not allowed: {FIND.refused[primary]}"
    if primary in ("-H", "-L"):
        assert expected in refused(root, f"find {primary} .", "shell_readonly")
        assert expected in refused(root, f"find -P {primary} .", "shell_readonly")
    else:
        assert expected in refused(root, f"find . {primary} x", "shell_readonly")
        assert expected in refused(root, f"find . -name a -o {primary} x", "shell_readonly")


# --- git ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sub", sorted(GIT.subcommands))
def test_git_confines_operands_after_its_global_flags(root: Path, sub: str) -> None:
    assert ABSOLUTE in refused(root, f"git --no-pager {sub} {OUTSIDE}", "shell_readonly")
    assert ABSOLUTE in refused(root, f"git --no-pager {sub} -- {OUTSIDE}", "shell_readonly")


@pytest.mark.parametrize("flag", sorted(GIT.refused_global))
def test_git_refuses_each_refused_global_flag(root: Path, flag: str) -> None:
    expected = f"git: {flag} is not allowed: {GIT.refused_global[flag]}"
    assert expected in refused(root, f"git {flag} x log", "shell_readonly")
    assert expected in refused(root, f"git --no-pager {flag}=x log", "shell_readonly")


# --- the tables, pinned -----------------------------------------------------------------------------


def _option(option: Option) -> str:
    words = [option.arity]
    if option.path:
        words.append("path")
    if option.check is not None:
        words.append(f"check={option.check.__name__}")
    return " ".join(words)


def render_policy() -> str:
    """Every table of the shell policy as text, one fact a line."""
    lines = [f"shell syntax refused: {op!r} ({what})" for op, what in SHELL_SYNTAX]

    def command(prefix: str, spec: CommandSpec) -> None:
        lines.append(f"{prefix}: approval={spec.approval} operands={spec.operands} numeric={spec.numeric_flag} "
                     f"clustered={spec.clustered} pattern_flags={sorted(spec.pattern_flags)} "
                     f"check={spec.check.__name__ if spec.check else None}")
        lines.extend(f"{prefix} {flag}: {_option(o)}" for flag, o in sorted(spec.options.items()))
        lines.extend(f"{prefix} {flag}: refused: {why}" for flag, why in sorted(spec.refused.items()))

    for toolset, table in ALLOWLISTS.items():
        lines.append(f"[{toolset}] {', '.join(table)}")
        for name, spec in table.items():
            prefix = f"{toolset} {name}"
            if isinstance(spec, FindSpec):
                lines.append(f"{prefix}: approval={spec.approval}")
                lines.extend(f"{prefix} {p}: {kind}" for p, kind in sorted(spec.primaries.items()))
                lines.extend(f"{prefix} {p}: refused: {why}" for p, why in sorted(spec.refused.items()))
            elif isinstance(spec, GitSpec):
                lines.append(f"{prefix}: approval={spec.approval} prefix={list(spec.prefix)} "
                             f"global={sorted(spec.global_flags)}")
                lines.extend(f"{prefix} {f}: refused: {why}" for f, why in sorted(spec.refused_global.items()))
                for sub, sub_spec in spec.subcommands.items():
                    lines.append(f"{prefix} {sub}: inserted={list(spec.subcommand_prefix.get(sub, ()))}")
                    command(f"{prefix} {sub}", sub_spec)
            else:
                command(prefix, spec)
    return "\n".join(lines) + "\n"


def test_the_policy_tables_are_pinned(snapshot) -> None:
    """Any change to what the shell toolsets run is a snapshot change a reviewer sees
    (`pytest --snapshot-update` after checking it is meant)."""
    assert render_policy() == snapshot

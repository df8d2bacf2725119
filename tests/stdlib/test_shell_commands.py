from __future__ import annotations

from pathlib import Path

import pytest

from llm_do.stdlib.registry import STDLIB_TOOLSETS
from llm_do.stdlib.shell.commands import (
    ALLOWLISTS,
    GIT,
    SHELL_SYNTAX,
    CommandRefused,
    CommandSpec,
    FindSpec,
    GitSpec,
    parse_command,
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("a\n")
    (tmp_path / "outside").mkdir()
    return root


def ok(root: Path, line: str, toolset: str = "shell_readonly") -> tuple[str, ...]:
    return parse_command(toolset, line, root).argv


def refused(root: Path, line: str, toolset: str = "shell_readonly") -> str:
    with pytest.raises(CommandRefused) as info:
        parse_command(toolset, line, root)
    message = str(info.value)
    assert message and "\n" not in message
    return message


# --- shell syntax ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "operator"),
    [
        ("cat a.txt | grep a", "'|'"),
        ("grep -E 'a|b' a.txt", "'|'"),
        ("ls || ls", "'||'"),
        ("ls && ls", "'&&'"),
        ("ls; ls", "';'"),
        ("ls & ", "'&'"),
        ("ls > out.txt", "'>'"),
        ("ls >> out.txt", "'>>'"),
        ("cat < a.txt", "'<'"),
        ("cat `echo a.txt`", "'`'"),
        ("cat $(echo a.txt)", "'$('"),
        ("cat ${HOME}", "'${'"),
        ("cat a.txt\nls", "'\\n'"),
        ("cat a.txt\rls", "'\\r'"),
        ("cat 'a.txt;'", "';'"),
        ("cat a.txt\\;", "';'"),
    ],
)
def test_shell_syntax_is_refused_anywhere(root: Path, line: str, operator: str) -> None:
    message = refused(root, line)
    assert message.startswith(f"{operator} (")
    assert "without a shell" in message


def test_every_listed_operator_is_tested() -> None:
    assert {op for op, _ in SHELL_SYNTAX} == {"\n", "\r", "`", "$(", "${", "||", "&&", "|", ";", "&", ">>", ">", "<"}


def test_pipe_message_suggests_grep_e(root: Path) -> None:
    assert "grep -e A -e B" in refused(root, "grep 'a|b' a.txt")


def test_shell_syntax_messages_in_full(root: Path) -> None:
    reason = "commands run without a shell, so there are no pipes, redirections, command lists or substitutions"
    assert refused(root, "ls; ls") == f"';' (a command list) is not allowed: {reason}"
    assert refused(root, "ls | wc") == f"'|' (a pipe) is not allowed: {reason}; to match several patterns use grep -e A -e B"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("cat 'a.txt", "unbalanced quote"),
        ('cat "a.txt', "unbalanced quote"),
        ("cat a.txt\\", "trailing backslash"),
        ("", "empty"),
        ("   ", "empty"),
        ("cat a\x00b", "the command contains a NUL byte"),
        ("grep a\x00b a.txt", "the command contains a NUL byte"),  # a pattern is never confined as a path
        ("grep \ud800 a.txt", "lone surrogate"),
    ],
)
def test_unparseable(root: Path, line: str, expected: str) -> None:
    assert expected in refused(root, line)


def test_quotes_and_dollar_words_are_plain_words(root: Path) -> None:
    assert ok(root, "grep -n 'a b' a.txt") == ("grep", "-n", "a b", "a.txt")
    assert ok(root, 'grep "#x" a.txt') == ("grep", "#x", "a.txt")
    assert ok(root, "grep 'x$' a.txt") == ("grep", "x$", "a.txt")


# --- commands -------------------------------------------------------------------------------------


@pytest.mark.parametrize("line", ["rm a.txt", "/bin/ls", "./ls", "bash -c ls", "sh", "python -c 1", "xargs ls", "env ls"])
def test_unknown_commands(root: Path, line: str) -> None:
    assert "is not allowed here (allowed: ls, cat, wc, grep, head, tail, sort, uniq, find, git)" in refused(root, line)


def test_file_ops_allowlist(root: Path) -> None:
    assert "(allowed: ls, mv)" in refused(root, "cat a.txt", "shell_file_ops")
    assert "(allowed: ls, cat" in refused(root, "mv a.txt b.txt", "shell_readonly")
    with pytest.raises(CommandRefused, match="unknown shell toolset"):
        parse_command("shell_anything", "ls", root)


def test_approvals(root: Path) -> None:
    assert parse_command("shell_readonly", "ls", root).approval == "allow"
    assert parse_command("shell_file_ops", "ls -la", root).approval == "allow"
    assert parse_command("shell_file_ops", "mv a.txt b.txt", root).approval == "ask"
    assert all(spec.approval == "allow" for spec in ALLOWLISTS["shell_readonly"].values())


@pytest.mark.parametrize(
    "line",
    [
        "ls",
        "ls -la",
        "ls -la sub",
        "ls -lhS --sort=size --color=never -- sub",
        "ls --sort size -R",
        "ls -I '*.pyc' sub",
        "cat -n a.txt sub/x.txt",
        "cat -",
        "wc -l a.txt",
        "wc --lines --words a.txt",
        "grep -rn TODO",
        "grep -rn TODO sub",
        "grep -e a -e b a.txt",
        "grep --regexp=a a.txt",
        "grep -f a.txt sub/x.txt",
        "grep -C2 -i x a.txt",
        "grep -3 x a.txt",
        "grep -r --include=*.py --exclude-dir=.git x .",
        "grep -r --include '*.py' x",
        "grep -m 1 x a.txt",
        "grep /etc/passwd a.txt",
        "grep -- -x a.txt",
        "grep --color=never x a.txt",
        "head -n 5 a.txt",
        "head -n5 a.txt",
        "head -5 a.txt",
        "head --lines=-2 a.txt",
        "head --lines 2 a.txt",
        "head -c 100 a.txt",
        "tail -n +3 a.txt",
        "tail -3 a.txt",
        "sort -rn a.txt",
        "sort -k 2,2 -t, a.txt",
        "sort -t ',' -k2n a.txt",
        "sort -u --check a.txt",
        "uniq -c a.txt",
        "uniq -f 1 a.txt",
        "find",
        "find . -name '*.py' -type f",
        "find sub -maxdepth 2 -iname 'x*' -print",
        "find . ( -name a -o -name b ) -newer a.txt",
        "find . ! -path './.git/*' -printf '%p %s\\n'",
        "find -P . -empty",
        "find . -name /etc/passwd",
    ],
)
def test_allowed_readonly(root: Path, line: str) -> None:
    argv = ok(root, line)
    assert argv[0] == line.split()[0]


# --- flags ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "flag"),
    [
        ("sort -o out.txt a.txt", "sort: -o is not allowed: it writes its output to a file"),
        ("sort -ro out.txt a.txt", "sort: -o is not allowed"),
        ("sort --output=out.txt a.txt", "sort: --output is not allowed"),
        ("sort --output out.txt a.txt", "sort: --output is not allowed"),
        ("sort --out=x a.txt", "sort: --out (short for --output) is not allowed"),
        ("sort -T /tmp a.txt", "sort: -T is not allowed"),
        ("sort --temporary-directory=/tmp a.txt", "sort: --temporary-directory is not allowed"),
        ("sort --compress-program=gzip a.txt", "sort: --compress-program is not allowed: it runs a program"),
        ("sort --files0-from=list", "sort: --files0-from is not allowed"),
        ("wc --files0-from=list", "wc: --files0-from is not allowed"),
        ("tail -f a.txt", "tail: -f is not allowed"),
        ("tail -F a.txt", "tail: -F is not allowed"),
        ("tail --follow=name a.txt", "tail: --follow is not allowed"),
        ("grep -R x .", "grep: -R is not allowed: it follows symbolic links"),
        ("grep -rR x .", "grep: -R is not allowed"),
        ("grep --dereference-recursive x .", "grep: --dereference-recursive is not allowed"),
        ("ls -L sub", "ls: -L is not allowed"),
        ("ls -lL", "ls: -L is not allowed"),
        ("ls --dereference", "ls: --dereference is not allowed"),
        ("find . -exec rm {} +", "find: -exec is not allowed: it runs a program"),
        ("find . -execdir rm {} +", "find: -execdir is not allowed"),
        ("find . -ok rm {} +", "find: -ok is not allowed"),
        ("find . -okdir rm {} +", "find: -okdir is not allowed"),
        ("find . -delete", "find: -delete is not allowed: it deletes files"),
        ("find . -fprint out", "find: -fprint is not allowed: it writes files"),
        ("find . -fprint0 out", "find: -fprint0 is not allowed"),
        ("find . -fprintf out %p", "find: -fprintf is not allowed"),
        ("find . -fls out", "find: -fls is not allowed"),
        ("find -L .", "find: -L is not allowed"),
        ("find -H .", "find: -H is not allowed"),
        ("find . -follow", "find: -follow is not allowed"),
        ("find -D tree .", "find: -D is not allowed"),
        ("find -O3 .", "find: -O3 is not allowed"),
        ("find . -files0-from list", "find: -files0-from is not allowed"),
        ("git -c core.pager=less log", "git: -c is not allowed"),
        ("git --config-env=a=b log", "git: --config-env is not allowed"),
        ("git -C /tmp log", "git: -C is not allowed"),
        ("git --git-dir=/tmp/x/.git log", "git: --git-dir is not allowed"),
        ("git --work-tree=/tmp log", "git: --work-tree is not allowed"),
        ("git --exec-path=/tmp log", "git: --exec-path is not allowed"),
        ("git -p log", "git: option -p is not allowed before the subcommand"),
        ("git log --output=x", "git log: --output is not allowed: it writes its output to a file"),
        ("git log --out=x", "git log: --out (short for --output) is not allowed"),
        ("git show --output=x", "git show: --output is not allowed"),
        ("git diff --output=x", "git diff: --output is not allowed"),
        ("git diff --ext-diff", "git diff: --ext-diff is not allowed: it runs an external diff program"),
        ("git log -p --ext-diff", "git log: --ext-diff is not allowed"),
        ("git diff --textconv", "git diff: --textconv is not allowed"),
        ("git diff -Oorder.txt", "git diff: -O is not allowed"),
        ("git log --show-signature", "git log: --show-signature is not allowed: it runs gpg"),
        ("git log --format=%G?", "%G placeholders"),
        ("git log --pretty=format:%GS", "%G placeholders"),
        ("mv -i a.txt b.txt", "mv: -i is not allowed"),
        ("mv --interactive a.txt b.txt", "mv: --interactive is not allowed"),
        ("mv -b a.txt b.txt", "mv: -b is not allowed: it makes backup files"),
        ("mv --backup=numbered a.txt b.txt", "mv: --backup is not allowed"),
        ("mv -S .bak a.txt b.txt", "mv: -S is not allowed"),
        ("mv --suffix=.bak a.txt b.txt", "mv: --suffix is not allowed"),
    ],
)
def test_dangerous_flags_are_refused_by_name(root: Path, line: str, flag: str) -> None:
    toolset = "shell_file_ops" if line.startswith("mv") else "shell_readonly"
    assert flag in refused(root, line, toolset)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("ls -Y", "ls: flag -Y is not allowed"),
        ("ls --frobnicate", "ls: flag --frobnicate is not allowed"),
        ("ls --all=yes", "ls: --all takes no value"),
        ("grep --line x a.txt", "grep: write the flag in full (--line-buffered, --line-number, --line-regexp), not --line"),
        ("head -n", "head: -n needs a value"),
        ("head --lines", "head: --lines needs a value"),
        ("grep", "grep: no pattern given"),
        ("grep -r", "grep: no pattern given"),
        ("sort -5 a.txt", "sort: flag -5 is not allowed"),
        ("find . -name", "find: -name needs a value"),
        ("find . -frobnicate", "find: -frobnicate is not allowed"),
        ("find . -name x stray", "find: unexpected 'stray'"),
    ],
)
def test_flag_grammar(root: Path, line: str, expected: str) -> None:
    assert expected in refused(root, line)


# --- paths ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("cat /etc/passwd", "cat: '/etc/passwd' is absolute"),
        ("cat ../x", "cat: '../x' points outside"),
        ("cat sub/../../x", "points outside"),
        ("ls ~", "'~' is not expanded"),
        ("ls -la -- ..", "points outside"),
        ("wc -l link/secret", "through a symbolic link"),
        ("grep x /etc/passwd", "grep: '/etc/passwd' is absolute"),
        ("grep -e x ../a", "points outside"),
        ("grep -f /etc/passwd a.txt", "grep: '/etc/passwd' is absolute"),
        ("grep -f../x a.txt", "points outside"),
        ("grep -r --exclude-from=../x y", "points outside"),
        ("head -n 3 ../x", "points outside"),
        ("sort --random-source=/dev/urandom a.txt", "is absolute"),
        ("uniq ../x", "points outside"),
        ("find /", "find: '/' is absolute"),
        ("find .. -name x", "points outside"),
        ("find . -newer ../x", "points outside"),
        ("find . -samefile /etc/passwd", "is absolute"),
        ("find link", "through a symbolic link"),
        ("git log -- ../x", "git log: '../x' points outside"),
        ("git diff /etc/passwd a.txt", "git diff: '/etc/passwd' is absolute"),
        ("git diff --no-index a.txt ../x", "points outside"),
        ("git status ..", "points outside"),
    ],
)
def test_paths_are_confined(root: Path, tmp_path: Path, line: str, expected: str) -> None:
    (root / "link").symlink_to(tmp_path / "outside")
    assert expected in refused(root, line)


@pytest.mark.parametrize("line", ["ls *.txt", "cat a.tx?", "wc -l [ab].txt", "find sub* -name x"])
def test_wildcards_in_paths_are_explained(root: Path, line: str) -> None:
    assert "has a wildcard, which nothing expands" in refused(root, line)


# --- git ------------------------------------------------------------------------------------------


def test_git_runs_hardened(root: Path) -> None:
    assert ok(root, "git log -n 3 --oneline") == (
        "git", *GIT.prefix, "log", "--no-ext-diff", "--no-textconv", "-n", "3", "--oneline",
    )
    assert ok(root, "git --no-pager status -sb") == ("git", *GIT.prefix, "status", "-sb")
    assert "core.fsmonitor=false" in GIT.prefix and "log.showSignature=false" in GIT.prefix


@pytest.mark.parametrize(
    "line",
    [
        "git log",
        "git log -5 --stat",
        "git log -n5 -p -- sub",
        "git log --author 'A B' --since 2024-01-01 --grep fix",
        "git log --format=%h%x09%s --date=short",
        "git log --pretty=oneline HEAD~3..HEAD",
        "git log -S needle -G 'a.*b'",
        "git log -- '*.py'",
        "git diff",
        "git diff --cached --stat",
        "git diff -U5 -w HEAD~1 -- a.txt",
        "git diff --name-only main...HEAD",
        "git diff --no-index a.txt sub",
        "git show HEAD:a.txt",
        "git show --stat HEAD",
        "git status",
        "git status --porcelain=v1 -uno",
        "git status --short sub",
    ],
)
def test_git_allowed(root: Path, line: str) -> None:
    assert ok(root, line)[0] == "git"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("git", "git: no subcommand given (allowed: log, diff, show, status)"),
        ("git --no-pager", "git: no subcommand given"),
        ("git push", "git push is not allowed (allowed: log, diff, show, status)"),
        ("git commit -m x", "git commit is not allowed"),
        ("git config core.pager less", "git config is not allowed"),
        ("git log -pw", "git log: write short flags separately (-p -w, not -pw)"),
        ("git log -L1,2:a.txt", "git log: flag -L is not allowed"),
        ("git diff --cached=x", "git diff: --cached takes no value"),
        ("git status --column", "git status: flag --column is not allowed"),
    ],
)
def test_git_refused(root: Path, line: str, expected: str) -> None:
    assert expected in refused(root, line)


def test_git_attached_values_never_take_the_next_word(root: Path) -> None:
    # `--stat 10` is `--stat` and a revision `10`, as git reads it: the word is confined.
    assert ok(root, "git log --stat 10")
    assert "points outside" in refused(root, "git log --format ../x")


# --- mv and uniq ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line",
    [
        "mv a.txt b.txt",
        "mv -f -n -v a.txt sub",
        "mv -fv a.txt sub/",
        "mv -t sub a.txt",
        "mv --target-directory=sub a.txt",
        "mv -T a.txt b.txt",
        "mv a.txt .",
    ],
)
def test_mv_allowed(root: Path, line: str) -> None:
    command = parse_command("shell_file_ops", line, root)
    assert command.argv == tuple(line.split())
    assert command.approval == "ask"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("mv a.txt", "mv: give a source and a destination"),
        ("mv -t sub", "mv: give a source and a destination"),
        ("mv a.txt ../b.txt", "points outside"),
        ("mv ../x a.txt", "points outside"),
        ("mv a.txt /tmp", "is absolute"),
        ("mv -t ../ a.txt", "points outside"),
        ("mv --target-directory=/tmp a.txt", "is absolute"),
        ("mv a.txt link", "through a symbolic link"),
        ("mv a.txt .git/hooks/pre-commit", "inside a .git directory"),
        ("mv .git/config a.txt", "inside a .git directory"),
        ("mv -t .git a.txt", "inside a .git directory"),
        ("mv . elsewhere", "the toolset's directory itself cannot be moved"),
        ("mv *.txt sub", "has a wildcard"),
    ],
)
def test_mv_refused(root: Path, tmp_path: Path, line: str, expected: str) -> None:
    (root / "link").symlink_to(tmp_path / "outside")
    assert expected in refused(root, line, "shell_file_ops")


def test_mv_refusals_in_full(root: Path) -> None:
    assert refused(root, "mv .git/config a.txt", "shell_file_ops") == (
        "mv: '.git/config' is inside a .git directory, which this toolset does not change")
    assert refused(root, "mv . elsewhere", "shell_file_ops") == "mv: the toolset's directory itself cannot be moved"


def test_uniq_output_operand(root: Path) -> None:
    assert "second operand is an output file" in refused(root, "uniq a.txt b.txt")


# --- the tables -----------------------------------------------------------------------------------


def _specs() -> list[CommandSpec]:
    specs: list[CommandSpec] = []
    for table in ALLOWLISTS.values():
        for spec in table.values():
            if isinstance(spec, GitSpec):
                specs.extend(spec.subcommands.values())
            elif isinstance(spec, CommandSpec):
                specs.append(spec)
    return specs


def test_tables_are_consistent() -> None:
    for spec in _specs():
        assert not set(spec.options) & set(spec.refused), spec.name
        assert all(flag.startswith("-") for flag in [*spec.options, *spec.refused]), spec.name
        assert spec.pattern_flags <= set(spec.options), spec.name
    for table in ALLOWLISTS.values():
        for spec in table.values():
            if isinstance(spec, FindSpec):
                assert not set(spec.primaries) & set(spec.refused)


def test_descriptors_name_every_command() -> None:
    for toolset, table in ALLOWLISTS.items():
        description = STDLIB_TOOLSETS[toolset].tools[0].description
        for name in table:
            assert name in description, (toolset, name)
    for sub in GIT.subcommands:
        assert sub in STDLIB_TOOLSETS["shell_readonly"].tools[0].description


def test_what_a_command_touches_is_judged_where_it_lands(root: Path) -> None:
    """The paths a rule, the protected paths and the flow labels judge (issue 36's mutants of
    commands.py): mv into a folder replaces the file inside it, onto a new name that name; a
    path-valued flag is read like an operand; the normalized argv starts with the command."""
    def touches(line: str, toolset: str = "shell_file_ops") -> tuple[tuple[str, str], ...]:
        return parse_command(toolset, line, root).touches

    assert touches("mv a.txt sub") == (("a.txt", "replace"), ("sub/a.txt", "replace"))
    assert touches("mv -t sub a.txt") == (("a.txt", "replace"), ("sub/a.txt", "replace"))
    assert touches("mv a.txt new.txt") == (("a.txt", "replace"), ("new.txt", "replace"))
    assert touches("grep -f a.txt sub", "shell_readonly") == (("sub", "read"), ("a.txt", "read"))
    assert parse_command("shell_file_ops", "mv a.txt sub", root).normalized == ("mv", "a.txt", "sub")


def test_grep_confines_every_path_after_its_pattern(root: Path) -> None:
    assert "outside" in refused(root, "grep pat ../outside/x")
    assert "outside" in refused(root, "grep pat a.txt ../outside/x")
    judged = parse_command("shell_readonly", "grep pat a.txt sub", root)
    assert judged.normalized == judged.shown == ("grep", "pat", "a.txt", "sub")  # the pattern once, each path once

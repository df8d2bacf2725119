"""Which command lines the shell toolsets run: parsing and policy only, no subprocess.

A command line is split like a POSIX shell would split words (quotes, backslashes) and then judged
against tables kept here as data, so the reference (spec/stdlib.md) can be checked against them:

- no shell syntax at all: control operators, redirections and substitutions are refused anywhere
  in the line, even quoted, since nothing would interpret them;
- the command must be allowlisted for the toolset, every flag allowlisted for the command (GNU
  getopt rules: `-la`, `-n5`, `-n 5`, `--lines=5`, `--lines 5`, `--`);
- flags that write files, run programs or follow symlinks are refused with the reason;
- operands and path-valued flags are confined to the root (`paths.confine`), except the ones a
  command reads as patterns (grep's pattern, find's `-name` and the like).

Approval rules judge each accepted line's **normalized** argv, not its spelling: the command, its
operands in order (every path resolved below the root like a filesystem tool's `path`: `./a`,
`d/../a` are `a`; a flag that names the destination, `mv -t D`, folded in as the last operand), then
its flags one per word (`-la` is `-l -a`, `--lines=5` is `--lines 5`). Operands come first so that
`argv[1]` is the first operand whatever flags are given; `mv` takes one source, so `argv[1]` is
what moves and `argv[2]` where to. Approvers are shown the same call as a command line (`shown`:
flags first, `--` before an operand that starts with `-`).

Each accepted line also says what it touches (`touches`: each path and whether it is read, or
moved, removed or replaced), which the toolset checks against what no tool may touch
(`toolkit.protected`), and whether it reads folders recursively (grep `-r`).

A flag is declared as taking a separate value (`-n 5`) only where the real program does so;
otherwise the next word is judged as an operand, which is always the safer mistake.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from llm_do.bundle.approval import Action
from llm_do.bundle.errors import Refused
from llm_do.toolkit.files import PathRefused, confine, encodable, relative, touches_git_dir
from llm_do.toolkit.protected import READ, READ_TREE, REPLACE, Access

Arity = Literal["none", "required", "attached"]
"""`none`: a plain flag; `required`: `-k V`, `-kV`, `--key V` or `--key=V`; `attached`: an optional
value only as `-kV` or `--key=V`, so the next word is never taken as the value."""


class CommandRefused(Refused, ValueError):
    """A command line the toolset will not run; the message is shown to the model as is."""


Touch = tuple[str, Access]
"""A path the command touches, as the model wrote it (relative to the root), and how."""


@dataclass(frozen=True)
class Command:
    """A command line that passed the policy: what to execute and the approval it needs."""

    argv: tuple[str, ...]
    approval: Action
    normalized: tuple[str, ...] = ()
    """The line as approval rules judge it: one spelling per call, operands first (module docstring)."""
    shown: tuple[str, ...] = ()
    """The same call as a command line, flags first, as approvers are shown it."""
    touches: tuple[Touch, ...] = ()
    recursive: bool = False
    """It reads the folders it is given, and every folder below them (grep -r)."""


@dataclass(frozen=True)
class Judged:
    """What a spec makes of a command's arguments: the words to run, the words a rule judges, the
    words an approver is shown, and the paths it touches."""

    run: list[str]
    normalized: list[str]
    shown: list[str]
    touches: list[Touch] = field(default_factory=list)
    recursive: bool = False


@dataclass(frozen=True)
class Option:
    arity: Arity = "none"
    path: bool = False
    """The value names a file, so it is confined like an operand."""
    check: Callable[[str], None] | None = None
    """Extra test of the value; raises `CommandRefused`."""


@dataclass
class Parsed:
    """Flags (with their values) and operands of one command line, in order."""

    options: list[tuple[str, str | None]] = field(default_factory=list)
    operands: list[str] = field(default_factory=list)

    def has(self, *flags: str) -> bool:
        return any(name in flags for name, _ in self.options)


@dataclass(frozen=True)
class CommandSpec:
    """An allowlisted command whose flags follow GNU getopt conventions."""

    name: str
    approval: Action
    options: Mapping[str, Option]
    refused: Mapping[str, str] = field(default_factory=dict)
    """Flags refused with the reason shown to the model."""
    operands: Literal["paths", "pattern then paths", "git"] = "paths"
    """`pattern then paths`: the first operand is a pattern unless one of `pattern_flags` is given;
    `git`: revisions and pathspecs, confined like paths but wildcards allowed."""
    pattern_flags: frozenset[str] = frozenset()
    numeric_flag: bool = False
    """Accepts `-NUM` (`head -5`, `grep -3`, `git log -5`)."""
    clustered: bool = True
    """Short flags may be combined (`-la`); git's revision parser does not allow it."""
    check: Callable[[CommandSpec, Parsed, Path], None] | None = None
    """Command-specific rules run after the generic ones."""
    target_options: frozenset[str] = frozenset()
    """Flags whose value is the destination (`mv -t D`): in the normalized argv the value is the
    last operand, so `mv -t d a` and `mv a d` are one call."""
    effects: Callable[[CommandSpec, Parsed, Path], list[Touch]] | None = None
    """What the command touches, when it does more than read its path operands and path values."""
    recursive: Callable[[Parsed], bool] | None = None
    """Whether the flags make it read folders recursively."""

    def parse(self, args: Sequence[str], root: Path) -> Judged:
        parsed = _parse_options(self, args, root)
        paths = parsed.operands
        pattern: list[str] = []
        if self.operands == "pattern then paths" and not parsed.has(*self.pattern_flags):
            if not paths:
                raise CommandRefused(f"{self.name}: no pattern given")
            pattern, paths = paths[:1], paths[1:]
        for operand in paths:
            confine_arg(self.name, operand, root, wildcards=self.operands == "git")
        if self.check:
            self.check(self, parsed, root)
        words, operands = self._normalized(parsed, pattern, paths, root)
        return Judged(list(args), [*operands, *words],
                      [*words, *(["--"] if any(o.startswith("-") for o in operands) else []), *operands],
                      self.effects(self, parsed, root) if self.effects else self._reads(parsed, paths),
                      bool(self.recursive and self.recursive(parsed)))

    def _normalized(self, parsed: Parsed, pattern: list[str], paths: list[str], root: Path) -> tuple[list[str], list[str]]:
        """The flags one per word (values resolved where they name files), and the operands resolved
        like paths (git's revisions and pathspecs as given), the destination flag's value last."""
        words: list[str] = []
        target: list[str] = []
        for name, value in parsed.options:
            if name == "-NUM":
                words.append(f"-{value}")
                continue
            resolved = value if value is None or not self.options[name].path else resolve_arg(value, root)
            if name in self.target_options and resolved is not None:
                target = [resolved]
                continue
            words += [name] if resolved is None else [name, resolved]
        if self.operands != "git":
            paths = [resolve_arg(p, root) for p in paths]
        return words, [*pattern, *paths, *target]

    def _reads(self, parsed: Parsed, paths: list[str]) -> list[Touch]:
        """Every path operand and path value is read (git: its pathspecs; `--no-index` compares
        whole folders)."""
        values = [v for n, v in parsed.options if v is not None and n in self.options and self.options[n].path]
        if self.operands != "git":
            return [(p, READ) for p in [*paths, *values]]
        files = [p for p in paths if ":" not in p and not any(c in p for c in "*?[")]
        return [(p, READ_TREE if parsed.has("--no-index") else READ) for p in files]


@dataclass(frozen=True)
class FindSpec:
    """find: starting points (confined) then an expression of allowlisted primaries."""

    name: str
    approval: Action
    primaries: Mapping[str, Literal["none", "text", "path"]]
    """Each primary and what its one argument is, if it takes one."""
    refused: Mapping[str, str]

    def parse(self, args: Sequence[str], root: Path) -> Judged:
        """The normalized argv: starting points and path-valued primaries resolved, `-P` (the
        default) left out, the expression otherwise as given."""
        i = 0
        while i < len(args) and (args[i] in ("-P", "-H", "-L", "-D") or args[i].startswith("-O")):
            if args[i] != "-P":  # -H and -L follow symlinks; -D and -O tune debugging and optimisation
                self._refuse_primary(args[i])
            i += 1
        normalized: list[str] = []
        touches: list[Touch] = []
        while i < len(args) and not _starts_expression(args[i]):
            confine_arg(self.name, args[i], root)
            normalized.append(resolve_arg(args[i], root))
            touches.append((args[i], READ))
            i += 1
        while i < len(args):
            token = args[i]
            i += 1
            normalized.append(token)
            if token in ("(", ")", "!", ","):
                continue
            if not token.startswith("-"):
                raise CommandRefused(f"find: unexpected {token!r}: starting points come before the expression")
            kind = self.primaries.get(token)
            if kind is None:
                self._refuse_primary(token)
            if kind == "none":
                continue
            if i >= len(args):
                raise CommandRefused(f"find: {token} needs a value")
            if kind == "path":
                confine_arg(self.name, args[i], root)
            normalized.append(resolve_arg(args[i], root) if kind == "path" else args[i])
            if kind == "path":
                touches.append((args[i], READ))
            i += 1
        return Judged(list(args), normalized, normalized, touches)

    def _refuse_primary(self, token: str) -> None:
        if token in self.refused:
            raise CommandRefused(f"find: {token} is not allowed: {self.refused[token]}")
        raise CommandRefused(f"find: {token} is not allowed")


@dataclass(frozen=True)
class GitSpec:
    """git: one allowlisted subcommand, run with options that keep it from executing programs."""

    name: str
    approval: Action
    subcommands: Mapping[str, CommandSpec]
    global_flags: frozenset[str]
    refused_global: Mapping[str, str]
    prefix: tuple[str, ...]
    """Inserted after `git`: no pager, no fsmonitor hook, no signature verification (gpg)."""
    subcommand_prefix: Mapping[str, tuple[str, ...]]
    """Inserted after the subcommand: no external diff programs, no textconv filters."""

    def parse(self, args: Sequence[str], root: Path) -> Judged:
        """Runs with the safety prefixes; the normalized argv is the subcommand and its own
        normalized words (the global flags allowed change nothing, so they are left out)."""
        i = 0
        while i < len(args) and args[i].startswith("-"):
            flag = args[i].partition("=")[0]
            if flag in self.refused_global:
                raise CommandRefused(f"git: {flag} is not allowed: {self.refused_global[flag]}")
            if flag not in self.global_flags:
                raise CommandRefused(f"git: option {flag} is not allowed before the subcommand")
            i += 1
        allowed = ", ".join(self.subcommands)
        if i == len(args):
            raise CommandRefused(f"git: no subcommand given (allowed: {allowed})")
        sub = self.subcommands.get(args[i])
        if sub is None:
            raise CommandRefused(f"git {args[i]} is not allowed (allowed: {allowed})")
        rest = sub.parse(args[i + 1 :], root)
        return Judged([*self.prefix, args[i], *self.subcommand_prefix.get(args[i], ()), *rest.run],
                      [args[i], *rest.normalized], [args[i], *rest.shown], rest.touches)


Spec = CommandSpec | FindSpec | GitSpec


def parse_command(toolset: str, command_line: str, root: Path) -> Command:
    """Judge one command line for a shell toolset; `CommandRefused` says why it cannot run.

    `root` is the directory the command runs in; every path in the line must stay inside it.
    """
    commands = ALLOWLISTS.get(toolset)
    if commands is None:
        raise CommandRefused(f"unknown shell toolset {toolset!r}")
    check_no_shell_syntax(command_line)
    argv = split(command_line)
    spec = commands.get(argv[0])
    if spec is None:
        raise CommandRefused(f"{argv[0]!r} is not allowed here (allowed: {', '.join(commands)})")
    judged = spec.parse(argv[1:], root)
    return Command(argv=(spec.name, *judged.run), approval=spec.approval, normalized=(spec.name, *judged.normalized),
                   shown=(spec.name, *judged.shown), touches=tuple(judged.touches), recursive=judged.recursive)


# --- the shell syntax nothing here interprets --------------------------------------------------

SHELL_SYNTAX: tuple[tuple[str, str], ...] = (
    ("\n", "a newline"),
    ("\r", "a carriage return"),
    ("`", "a backtick substitution"),
    ("$(", "a command substitution"),
    ("${", "a parameter expansion"),
    ("||", "a command list"),
    ("&&", "a command list"),
    ("|", "a pipe"),
    (";", "a command list"),
    ("&", "a background job"),
    (">>", "a redirection"),
    (">", "a redirection"),
    ("<", "a redirection"),
)
"""Refused anywhere in the line, even quoted; longer operators first so the message names them."""

_NO_SHELL = "commands run without a shell, so there are no pipes, redirections, command lists or substitutions"


def check_no_shell_syntax(command_line: str) -> None:
    if "\x00" in command_line:
        raise CommandRefused("the command contains a NUL byte")
    if not encodable(command_line):
        raise CommandRefused("the command is not valid text (it has a lone surrogate)")
    for operator, what in SHELL_SYNTAX:
        if operator in command_line:
            hint = "; to match several patterns use grep -e A -e B" if operator == "|" else ""
            raise CommandRefused(f"{operator!r} ({what}) is not allowed: {_NO_SHELL}{hint}")


def split(command_line: str) -> list[str]:
    """Words as a POSIX shell splits them; `#` is an ordinary character, not a comment."""
    try:
        argv = shlex.split(command_line, comments=False, posix=True)
    except ValueError:
        raise CommandRefused("the command has an unbalanced quote or a trailing backslash") from None
    if not argv:
        raise CommandRefused("the command is empty")
    return argv


# --- flags and operands ------------------------------------------------------------------------


def confine_arg(command: str, arg: str, root: Path, wildcards: bool = False) -> Path:
    """An operand or flag value that names a file, confined to `root`."""
    if not wildcards and any(c in arg for c in "*?["):
        raise CommandRefused(
            f"{command}: {arg!r} has a wildcard, which nothing expands (commands run without a shell); "
            "name the files explicitly"
        )
    try:
        return confine(root, arg)
    except PathRefused as e:
        raise CommandRefused(f"{command}: {e}") from None


def resolve_arg(arg: str, root: Path) -> str:
    """A confined operand as a rule sees it: relative to `root`, `..`, `.` and links resolved."""
    return relative(root, confine(root, arg))


def _parse_options(spec: CommandSpec, args: Sequence[str], root: Path) -> Parsed:
    """Walk the words the way GNU getopt_long does (flags may follow operands; `--` ends them)."""
    parsed = Parsed()
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if word == "--":
            parsed.operands.extend(args[i:])
            break
        if word.startswith("--"):
            name, eq, value = word.partition("=")
            option = _lookup(spec, name)
            if option.arity == "none" and eq:
                raise CommandRefused(f"{spec.name}: {name} takes no value")
            if option.arity == "required" and not eq:
                value, i = _next_value(spec, name, args, i)
            _add(spec, parsed, name, option, value if (eq or option.arity == "required") else None, root)
        elif word.startswith("-") and len(word) > 1:
            if spec.numeric_flag and word[1:].isdigit():
                parsed.options.append(("-NUM", word[1:]))
                continue
            i = _parse_short(spec, parsed, word, args, i, root)
        else:
            parsed.operands.append(word)
    return parsed


def _parse_short(spec: CommandSpec, parsed: Parsed, word: str, args: Sequence[str], i: int, root: Path) -> int:
    """One word of short flags (`-la`, `-n5`, `-n`); returns the index of the next word."""
    j = 1
    while j < len(word):
        name = f"-{word[j]}"
        option = _lookup(spec, name)
        rest = word[j + 1 :]
        if option.arity == "none":
            if rest and not spec.clustered:
                raise CommandRefused(f"{spec.name}: write short flags separately ({name} {'-' + rest}, not {word})")
            parsed.options.append((name, None))
            j += 1
            continue
        value: str | None = rest or None
        if value is None and option.arity == "required":
            value, i = _next_value(spec, name, args, i)
        _add(spec, parsed, name, option, value, root)
        break
    return i


def _next_value(spec: CommandSpec, name: str, args: Sequence[str], i: int) -> tuple[str, int]:
    if i >= len(args):
        raise CommandRefused(f"{spec.name}: {name} needs a value")
    return args[i], i + 1


def _add(spec: CommandSpec, parsed: Parsed, name: str, option: Option, value: str | None, root: Path) -> None:
    if value is not None:
        if option.path:
            confine_arg(spec.name, value, root)
        if option.check:
            option.check(value)
    parsed.options.append((name, value))


def _lookup(spec: CommandSpec, name: str) -> Option:
    if name in spec.refused:
        raise CommandRefused(f"{spec.name}: {name} is not allowed: {spec.refused[name]}")
    option = spec.options.get(name)
    if option is not None:
        return option
    if name.startswith("--"):
        # getopt_long accepts abbreviations, so `--out` would be `--output`: say which flag it is.
        for refused, why in spec.refused.items():
            if refused.startswith(name):
                raise CommandRefused(f"{spec.name}: {name} (short for {refused}) is not allowed: {why}")
        longer = sorted(o for o in spec.options if o.startswith(name))
        if longer:
            raise CommandRefused(f"{spec.name}: write the flag in full ({', '.join(longer)}), not {name}")
    raise CommandRefused(f"{spec.name}: flag {name} is not allowed")


def _starts_expression(word: str) -> bool:
    return word in ("(", ")", "!", ",") or (word.startswith("-") and len(word) > 1)


# --- command-specific rules --------------------------------------------------------------------


def _check_uniq(spec: CommandSpec, parsed: Parsed, root: Path) -> None:
    if len(parsed.operands) > 1:
        raise CommandRefused("uniq: a second operand is an output file uniq would write; give one input file")


def _check_mv(spec: CommandSpec, parsed: Parsed, root: Path) -> None:
    target = _mv_target(parsed)
    sources = _mv_sources(parsed)
    if not sources or (target is None and len(parsed.operands) < 2):
        raise CommandRefused("mv: give a source and a destination")
    if len(sources) > 1:
        raise CommandRefused(f"mv: move one file or folder per call (`mv SOURCE DEST` or `mv -t DIR SOURCE`), not {len(sources)}: "
                             "each move is judged and approved on its own")
    real_root = confine(root, ".")
    for arg in [*parsed.operands, *([target] if target is not None else [])]:
        path = confine_arg("mv", arg, root)
        if touches_git_dir(root, path):
            raise CommandRefused(f"mv: {arg!r} is inside a .git directory, which this toolset does not change")
        if arg in sources and path == real_root:
            raise CommandRefused("mv: the toolset's directory itself cannot be moved")


def _mv_target(parsed: Parsed) -> str | None:
    return next((v for n, v in parsed.options if n in ("-t", "--target-directory")), None)


def _mv_sources(parsed: Parsed) -> list[str]:
    return parsed.operands if _mv_target(parsed) is not None else parsed.operands[:-1]


def _mv_effects(spec: CommandSpec, parsed: Parsed, root: Path) -> list[Touch]:
    """The source leaves its place, and what it lands on is replaced: the destination itself, or
    the entry of the source's name in it when it is a folder (`-t`, or an existing folder without
    `-T`)."""
    [source] = _mv_sources(parsed)
    target = _mv_target(parsed)
    destination = target if target is not None else parsed.operands[-1]
    into = target is not None or (not parsed.has("-T", "--no-target-directory") and confine(root, destination).is_dir())
    name = os.path.basename(os.path.normpath(source))
    return [(source, REPLACE), (os.path.join(destination, name) if into else destination, REPLACE)]


def _greps_recursively(parsed: Parsed) -> bool:
    return parsed.has("-r", "--recursive") or any(n in ("-d", "--directories") and v == "recurse" for n, v in parsed.options)


def _check_git_format(value: str) -> None:
    if "%G" in value:
        raise CommandRefused("git: %G placeholders verify signatures, which runs gpg; leave them out")


# --- the tables --------------------------------------------------------------------------------

FLAG = Option()


def _flags(*names: str) -> dict[str, Option]:
    return {name: FLAG for name in names}


def _required(*names: str, path: bool = False) -> dict[str, Option]:
    return {name: Option("required", path=path) for name in names}


def _attached(*names: str) -> dict[str, Option]:
    return {name: Option("attached") for name in names}


FOLLOWS_SYMLINKS = "it follows symbolic links, which may lead outside the root"
FILE_LIST = "it reads file names from a file, which would escape the root check"

LS = CommandSpec(
    name="ls",
    approval="allow",
    options={
        **_flags(
            "-a", "--all", "-A", "--almost-all", "-b", "--escape", "-B", "--ignore-backups", "-c", "-C",
            "-d", "--directory", "-f", "-F", "--file-type", "--full-time", "-g", "--group-directories-first",
            "-G", "--no-group", "-h", "--human-readable", "--si", "-i", "--inode", "-k", "--kibibytes", "-l",
            "-m", "-n", "--numeric-uid-gid", "-N", "--literal", "-o", "-p", "-q", "--hide-control-chars",
            "--show-control-chars", "-Q", "--quote-name", "-r", "--reverse", "-R", "--recursive", "-s",
            "--size", "-S", "-t", "-u", "-U", "-v", "-x", "-X", "-1", "--zero", "--help", "--version",
        ),
        **_required(
            "--block-size", "--format", "--hide", "-I", "--ignore", "--indicator-style", "--quoting-style",
            "--sort", "--time", "--time-style", "-T", "--tabsize", "-w", "--width",
        ),
        **_attached("--color", "--classify"),
    },
    refused={"-L": FOLLOWS_SYMLINKS, "--dereference": FOLLOWS_SYMLINKS},
)

CAT = CommandSpec(
    name="cat",
    approval="allow",
    options=_flags(
        "-A", "--show-all", "-b", "--number-nonblank", "-e", "-E", "--show-ends", "-n", "--number", "-s",
        "--squeeze-blank", "-t", "-T", "--show-tabs", "-u", "-v", "--show-nonprinting", "--help", "--version",
    ),
)

WC = CommandSpec(
    name="wc",
    approval="allow",
    options=_flags(
        "-c", "--bytes", "-m", "--chars", "-l", "--lines", "-L", "--max-line-length", "-w", "--words",
        "--help", "--version",
    ),
    refused={"--files0-from": FILE_LIST},
)

GREP = CommandSpec(
    name="grep",
    approval="allow",
    options={
        **_flags(
            "-E", "--extended-regexp", "-F", "--fixed-strings", "-G", "--basic-regexp", "-P", "--perl-regexp",
            "-i", "--ignore-case", "--no-ignore-case", "-w", "--word-regexp", "-x", "--line-regexp", "-z",
            "--null-data", "-s", "--no-messages", "-v", "--invert-match", "-V", "--version", "--help", "-b",
            "--byte-offset", "-n", "--line-number", "--line-buffered", "-H", "--with-filename", "-h",
            "--no-filename", "-o", "--only-matching", "-q", "--quiet", "--silent", "-a", "--text", "-I",
            "-r", "--recursive", "-L", "--files-without-match", "-l", "--files-with-matches", "-c", "--count",
            "-T", "--initial-tab", "-Z", "--null", "--no-group-separator", "-U", "--binary",
        ),
        **_required(
            "-e", "--regexp", "-m", "--max-count", "--label", "--binary-files", "-d", "--directories",
            "--include", "--exclude", "--exclude-dir", "-A", "--after-context", "-B", "--before-context",
            "-C", "--context", "--group-separator",
        ),
        **_required("-f", "--file", "--exclude-from", path=True),
        **_attached("--color", "--colour"),
    },
    refused={"-R": FOLLOWS_SYMLINKS, "--dereference-recursive": FOLLOWS_SYMLINKS},
    operands="pattern then paths",
    pattern_flags=frozenset({"-e", "--regexp", "-f", "--file"}),
    numeric_flag=True,
    recursive=_greps_recursively,
)

_HEAD_TAIL_FLAGS = {
    **_flags("-q", "--quiet", "--silent", "-v", "--verbose", "-z", "--zero-terminated", "--help", "--version"),
    **_required("-n", "--lines", "-c", "--bytes"),
}

HEAD = CommandSpec(name="head", approval="allow", options=_HEAD_TAIL_FLAGS, numeric_flag=True)

NEVER_ENDS = "it waits for the file to grow and never ends"
TAIL = CommandSpec(
    name="tail",
    approval="allow",
    options=_HEAD_TAIL_FLAGS,
    refused={"-f": NEVER_ENDS, "-F": NEVER_ENDS, "--follow": NEVER_ENDS, "--retry": NEVER_ENDS},
    numeric_flag=True,
)

SORT = CommandSpec(
    name="sort",
    approval="allow",
    options={
        **_flags(
            "-b", "--ignore-leading-blanks", "-d", "--dictionary-order", "-f", "--ignore-case", "-g",
            "--general-numeric-sort", "-i", "--ignore-nonprinting", "-M", "--month-sort", "-h",
            "--human-numeric-sort", "-n", "--numeric-sort", "-R", "--random-sort", "-r", "--reverse", "-V",
            "--version-sort", "-c", "-C", "--debug", "-m", "--merge", "-s", "--stable", "-u", "--unique", "-z",
            "--zero-terminated", "--help", "--version",
        ),
        **_required("--sort", "-k", "--key", "-t", "--field-separator", "-S", "--buffer-size", "--parallel",
                    "--batch-size"),
        **_required("--random-source", path=True),
        **_attached("--check"),
    },
    refused={
        "-o": "it writes its output to a file",
        "--output": "it writes its output to a file",
        "-T": "it writes temporary files outside the root",
        "--temporary-directory": "it writes temporary files outside the root",
        "--compress-program": "it runs a program",
        "--files0-from": FILE_LIST,
    },
)

UNIQ = CommandSpec(
    name="uniq",
    approval="allow",
    options={
        **_flags("-c", "--count", "-d", "--repeated", "-D", "-i", "--ignore-case", "-u", "--unique", "-z",
                 "--zero-terminated", "--help", "--version"),
        **_required("-f", "--skip-fields", "-s", "--skip-chars", "-w", "--check-chars"),
        **_attached("--all-repeated", "--group"),
    },
    check=_check_uniq,
)

RUNS_PROGRAMS = "it runs a program"
WRITES_FILES = "it writes files"
FIND = FindSpec(
    name="find",
    approval="allow",
    primaries={
        **dict.fromkeys(
            (
                "-print", "-print0", "-ls", "-prune", "-quit", "-true", "-false", "-not", "-a", "-and", "-o",
                "-or", "-empty", "-executable", "-readable", "-writable", "-nouser", "-nogroup", "-depth",
                "-xdev", "-mount", "-noleaf", "-daystart", "-ignore_readdir_race", "-noignore_readdir_race",
            ),
            "none",
        ),
        **dict.fromkeys(
            (
                "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-lname",
                "-ilname", "-regextype", "-type", "-xtype", "-maxdepth", "-mindepth", "-size", "-mtime", "-mmin",
                "-atime", "-amin", "-ctime", "-cmin", "-used", "-newermt", "-perm", "-user", "-group", "-uid",
                "-gid", "-links", "-inum", "-fstype", "-printf",
            ),
            "text",
        ),
        **dict.fromkeys(("-newer", "-anewer", "-cnewer", "-samefile"), "path"),
    },
    refused={
        "-exec": RUNS_PROGRAMS,
        "-execdir": RUNS_PROGRAMS,
        "-ok": RUNS_PROGRAMS,
        "-okdir": RUNS_PROGRAMS,
        "-delete": "it deletes files",
        "-fprint": WRITES_FILES,
        "-fprint0": WRITES_FILES,
        "-fprintf": WRITES_FILES,
        "-fls": WRITES_FILES,
        "-follow": FOLLOWS_SYMLINKS,
        "-H": FOLLOWS_SYMLINKS,
        "-L": FOLLOWS_SYMLINKS,
        "-files0-from": FILE_LIST,
    },
)

_GIT_DIFF_OUTPUT = {
    **_flags(
        "-p", "-u", "--patch", "-s", "--no-patch", "--raw", "--patch-with-raw", "--patch-with-stat",
        "--shortstat", "--numstat", "--name-only", "--name-status", "--summary", "--compact-summary", "-z",
        "--full-index", "--binary", "--no-renames", "-R", "-a", "--text", "-w", "--ignore-all-space", "-b",
        "--ignore-space-change", "--ignore-space-at-eol", "--ignore-blank-lines", "--ignore-cr-at-eol",
        "--minimal", "--patience", "--histogram", "--no-color", "--check", "--exit-code", "--quiet",
        "--pickaxe-all", "--pickaxe-regex", "-W", "--function-context", "--no-prefix", "--no-ext-diff",
        "--no-textconv",
    ),
    **_required("--diff-filter", "-S", "-G"),
    **_attached(
        "--stat", "-U", "--unified", "--color", "--word-diff", "--color-words", "-M", "--find-renames", "--abbrev",
        "--relative", "--inter-hunk-context",
    ),
}
_GIT_DIFF_REFUSED = {
    "--output": "it writes its output to a file",
    "--ext-diff": "it runs an external diff program",
    "--textconv": "it runs textconv filter programs",
    "-O": "it reads an order file",
}
_GIT_LOG = {
    **_flags(
        "--oneline", "--graph", "--all", "--reverse", "--first-parent", "--no-merges", "--merges",
        "--abbrev-commit", "--no-abbrev-commit", "--no-decorate", "--follow", "--full-diff", "--date-order",
        "--topo-order", "--author-date-order", "--relative-date", "--left-right", "--cherry-pick", "--cherry-mark",
        "--boundary", "--source", "-i", "--regexp-ignore-case", "-E", "--extended-regexp", "-F", "--fixed-strings",
        "--all-match", "--invert-grep", "--parents", "--children", "--cc", "-m",
    ),
    **_required(
        "-n", "--max-count", "--skip", "--since", "--after", "--until", "--before", "--author", "--committer",
        "--grep", "--date",
    ),
    **_attached("--decorate", "--no-walk", "--branches", "--tags", "--remotes"),
    "--format": Option("attached", check=_check_git_format),
    "--pretty": Option("attached", check=_check_git_format),
}
_GIT_LOG_REFUSED = {"--show-signature": "it runs gpg to verify signatures"}

GIT_LOG = CommandSpec(
    name="git log",
    approval="allow",
    options={**_GIT_DIFF_OUTPUT, **_GIT_LOG},
    refused={**_GIT_DIFF_REFUSED, **_GIT_LOG_REFUSED},
    operands="git",
    numeric_flag=True,
    clustered=False,
)
GIT_SHOW = replace(GIT_LOG, name="git show")
GIT_DIFF = CommandSpec(
    name="git diff",
    approval="allow",
    options={**_GIT_DIFF_OUTPUT, **_flags("--cached", "--staged", "--merge-base", "--no-index")},
    refused=_GIT_DIFF_REFUSED,
    operands="git",
    clustered=False,
)
GIT_STATUS = CommandSpec(
    name="git status",
    approval="allow",
    options={
        **_flags(
            "-s", "--short", "-b", "--branch", "--long", "-v", "--verbose", "-z", "--null", "--no-renames",
            "--renames", "--show-stash", "--ahead-behind", "--no-ahead-behind",
        ),
        **_attached("--porcelain", "-u", "--untracked-files", "--ignored", "--ignore-submodules",
                    "--find-renames"),
    },
    operands="git",
)

GIT = GitSpec(
    name="git",
    approval="allow",
    subcommands={"log": GIT_LOG, "diff": GIT_DIFF, "show": GIT_SHOW, "status": GIT_STATUS},
    global_flags=frozenset({"--no-pager"}),
    refused_global={
        "-c": "it sets configuration, which can run programs",
        "--config-env": "it sets configuration, which can run programs",
        "-C": "it changes to another directory",
        "--git-dir": "it points git at another repository",
        "--work-tree": "it points git at another directory",
        "--exec-path": "it runs git programs from another directory",
        "--namespace": "it changes the repository's namespace",
    },
    prefix=("--no-pager", "-c", "core.fsmonitor=false", "-c", "log.showSignature=false"),
    subcommand_prefix={
        "log": ("--no-ext-diff", "--no-textconv"),
        "show": ("--no-ext-diff", "--no-textconv"),
        "diff": ("--no-ext-diff", "--no-textconv"),
    },
)

MV = CommandSpec(
    name="mv",
    approval="ask",
    options={
        **_flags("-f", "--force", "-n", "--no-clobber", "-v", "--verbose", "-T", "--no-target-directory", "-u",
                 "--strip-trailing-slashes", "--help", "--version"),
        **_required("-t", "--target-directory", path=True),
        **_attached("--update"),
    },
    target_options=frozenset({"-t", "--target-directory"}),
    effects=_mv_effects,
    refused={
        "-i": "it asks questions on a terminal, and there is none",
        "--interactive": "it asks questions on a terminal, and there is none",
        "-b": "it makes backup files",
        "--backup": "it makes backup files",
        "-S": "it makes backup files",
        "--suffix": "it makes backup files",
    },
    check=_check_mv,
)

SHELL_READONLY: dict[str, Spec] = {
    spec.name: spec for spec in (LS, CAT, WC, GREP, HEAD, TAIL, SORT, UNIQ, FIND, GIT)
}
SHELL_FILE_OPS: dict[str, Spec] = {"ls": LS, "mv": MV}

ALLOWLISTS: dict[str, dict[str, Spec]] = {"shell_readonly": SHELL_READONLY, "shell_file_ops": SHELL_FILE_OPS}
"""The commands each shell toolset runs, by toolset name."""

FIXED_POSITIONS: dict[str, tuple[int, ...]] = {"mv": (1, 2), "git": (1,)}
"""The `argv` positions that hold the same thing in every accepted spelling of a command: mv's one
source and its destination, git's subcommand. Every other position after `argv[0]` depends on how
many operands and flags a call has (`cat a b`), which rules that test one position miss (A012)."""

"""The shell toolsets at run time: one allowlisted command line, run without a shell, confined.

`commands.parse_command` decides what may run (and the approval it needs); this module only runs
it: no shell, stdin closed, its own process group killed on timeout, output capped.
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from pydantic_ai.exceptions import ToolFailed

from llm_do.bundle.approval import Action
from llm_do.toolkit.files import PathRefused, confine
from llm_do.toolkit.hooks import Decisive, HookHost
from llm_do.toolkit.protected import STATE_FOLDER

from ..base import StdlibToolset
from .commands import Command, CommandRefused, parse_command
from .descriptor import ShellSettings

ENV_SET = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
"""No pager or prompt waits for a terminal; `git status` does not rewrite the index."""
ENV_REMOVED = ("POSIXLY_CORRECT", "GIT_DIR", "GIT_WORK_TREE", "GIT_EXTERNAL_DIFF")
"""POSIXLY_CORRECT stops GNU tools reading flags after operands, which the policy assumes they do;
the git variables would point git away from the root or at a diff program."""

MOVES = frozenset({"mv"})
"""Commands that carry their sources' data to where they land (the last of their `touches`)."""

KILL_GRACE = 2.0
"""Seconds to wait for the output pipes to close once the process group has been killed."""
_CHUNK = 65536


class ShellToolset(StdlibToolset):
    """The `shell` tool of `shell_readonly` and `shell_file_ops`; the toolset's name picks the allowlist."""

    settings: ShellSettings

    def plan(self, command: str) -> Command:
        """The command line judged: the policy (`commands.parse_command`), then what it touches
        against what no tool may touch (`toolkit.protected`); `CommandRefused` says why not. A
        recursive grep is told to skip the protected folders below the directory."""
        plan = parse_command(self.descriptor.name, command, self.root)
        for path, access in plan.touches:
            why = self.protected.refusal(self.root, path, access)
            if why is not None:
                raise CommandRefused(f"{plan.argv[0]}: {why}")
        if plan.recursive:
            skipped = [os.path.basename(p) for p in self.protected.folders_below(os.path.realpath(self.root))]
            names = sorted({STATE_FOLDER, *skipped})
            plan = replace(plan, argv=(plan.argv[0], *(f"--exclude-dir={n}" for n in names), *plan.argv[1:]))
        return plan

    def approval_for(self, name: str, args: Mapping[str, object]) -> Action:
        """The command's own approval (`ls` allowed, `mv` asked). A command that will be refused
        is 'allow': asking a person about a call that cannot run would be pointless."""
        if name != "shell":
            return super().approval_for(name, args)
        try:
            return self.plan(str(args.get("command", ""))).approval
        except CommandRefused:
            return "allow"

    def refusal(self, name: str, args: Mapping[str, object], host: HookHost) -> str | None:
        """A line the toolset will refuse fails unasked, saying why."""
        if name != "shell":
            return super().refusal(name, args, host)
        try:
            self.plan(str(args.get("command", "")))
        except CommandRefused as e:
            return str(e)
        return None

    def normalize_args(self, name: str, args: Mapping[str, object]) -> dict[str, object]:
        """Adds `argv`, the command line normalized (`commands`: one spelling per call, operands
        first, paths resolved below the root), left out when the line will be refused."""
        normalized = super().normalize_args(name, args)
        if name == "shell":
            try:
                normalized["argv"] = list(self.plan(str(args.get("command", ""))).normalized)
            except CommandRefused:
                pass
        return normalized

    def moves(self, name: str, normalized: Mapping[str, object]) -> tuple[list[str], str] | None:
        """`mv`'s source and where it lands (the last of `Command.touches`), absolute below the
        toolset's root: what the taint guard judges the move on. The source with links resolved
        (the data it names); where it lands with its folder's links resolved but not its own name,
        which the rename replaces (a link there is not followed)."""
        if name != "shell" or "argv" not in normalized:
            return None  # another tool, or a line the toolset refuses
        try:
            command = parse_command(self.descriptor.name, str(normalized.get("command", "")), self.root)
            if command.argv[0] not in MOVES:
                return None
            *sources, (landing, _) = command.touches
            moved = [str(confine(self.root, path)) for path, _ in sources]
            folder, entry = os.path.split(os.path.normpath(landing))
            target = str(confine(self.root, os.path.join(folder or ".", entry))) if entry in ("", ".", "..") \
                else os.path.join(confine(self.root, folder or "."), entry)
        except (CommandRefused, PathRefused):  # the tree changed since it was normalized: the tool refuses it in its turn
            return None
        return moved, target

    def shown_args(self, name: str, args: Mapping[str, object]) -> dict[str, object]:
        """The command line as the rules judge it (normalized, written flags first), whole, with
        the directory it runs in beside it; a line the toolset will refuse as written, saying so."""
        shown = super().shown_args(name, args)
        command = args.get("command")
        if name == "shell" and isinstance(command, str):
            try:
                shown["command"] = Decisive(shlex.join(self.plan(command).shown), f"in {self.root_label}")
            except CommandRefused:
                shown["command"] = Decisive(command, f"in {self.root_label}; the toolset will refuse it")
        return shown

    async def shell(self, command: str, timeout: float | None = None) -> str:
        try:
            plan = self.plan(command)
        except CommandRefused as e:
            raise ToolFailed(str(e)) from None
        name = plan.argv[0]
        executable = find_executable(name, exclude=self.root)
        if executable is None:
            raise ToolFailed(f"{name} is not installed on this machine")
        if not os.path.isdir(self.root):
            raise ToolFailed(f"the directory {self.settings.path!r} commands run in does not exist")
        limit = self.settings.timeout if timeout is None else min(timeout, self.settings.timeout)
        try:
            result = await run_argv(
                plan.argv,
                executable=executable,
                cwd=self.root,
                timeout=limit,
                env=command_env(os.environ),
                keep_bytes=self.settings.max_output_chars * 4,
            )
        except OSError as e:
            raise ToolFailed(f"cannot run {name}: {e.strerror or e}") from None
        return format_result(result, self.settings.max_output_chars)


@dataclass(frozen=True)
class CommandResult:
    exit_code: int | None
    """None when the process could not be reaped after the kill."""
    stdout: bytes
    stderr: bytes
    stdout_bytes: int
    """How much the command wrote in all; `stdout` keeps only the first `keep_bytes`."""
    stderr_bytes: int
    timed_out: bool
    timeout: float


class _Capture:
    """Reads a pipe to its end, keeping the first `keep` bytes, so a chatty command cannot fill memory."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.data = bytearray()
        self.total = 0

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(_CHUNK):
            self.total += len(chunk)
            room = self.keep - len(self.data)
            if room > 0:
                self.data += chunk[:room]


async def run_argv(
    argv: Sequence[str],
    *,
    cwd: Path,
    timeout: float,
    env: Mapping[str, str] | None = None,
    keep_bytes: int = 1_000_000,
    executable: str | None = None,
) -> CommandResult:
    """Run `argv` without a shell in its own process group; kill the whole group on timeout.

    Output written before the timeout is kept. Cancelling the caller kills the group too.
    """
    spawn = asyncio.ensure_future(asyncio.create_subprocess_exec(
        *argv,
        executable=executable,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    ))
    try:
        proc = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        # Cancelled while asyncio was still connecting the pipes: the process may be running
        # already. Cancelling the spawn itself would wait for its pipes to close, i.e. for the
        # command to end; kill its group instead.
        try:
            started = await asyncio.wait_for(asyncio.shield(spawn), KILL_GRACE)
        except (OSError, TimeoutError):
            raise asyncio.CancelledError from None
        _kill_group(started.pid)
        await asyncio.wait_for(started.wait(), KILL_GRACE)
        raise
    assert proc.stdout is not None and proc.stderr is not None
    out, err = _Capture(keep_bytes), _Capture(keep_bytes)
    tasks = [
        asyncio.ensure_future(out.drain(proc.stdout)),
        asyncio.ensure_future(err.drain(proc.stderr)),
        asyncio.ensure_future(proc.wait()),
    ]
    timed_out = False
    try:
        _, pending = await asyncio.wait(tasks, timeout=timeout)
        timed_out = bool(pending)
    finally:
        if timed_out or proc.returncode is None:  # timed out, or the caller was cancelled
            _kill_group(proc.pid)
            await asyncio.wait(tasks, timeout=KILL_GRACE)  # reap it and let its pipes close
        for task in tasks:
            task.cancel()
    return CommandResult(
        exit_code=proc.returncode,
        stdout=bytes(out.data),
        stderr=bytes(err.data),
        stdout_bytes=out.total,
        stderr_bytes=err.total,
        timed_out=timed_out,
        timeout=timeout,
    )


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def format_result(result: CommandResult, max_chars: int) -> str:
    """What the model reads: the exit status, then stdout and stderr (each cut at `max_chars`)."""
    if result.timed_out:
        parts = [f"timed out after {result.timeout:g} s; the command was killed"]
    elif result.exit_code is not None and result.exit_code < 0:
        parts = [f"exit code: {result.exit_code} (killed by {_signal_name(-result.exit_code)})"]
    else:
        parts = [f"exit code: {result.exit_code}"]
    for label, data, total in (
        ("stdout", result.stdout, result.stdout_bytes),
        ("stderr", result.stderr, result.stderr_bytes),
    ):
        if not total:
            continue
        text = data.decode("utf-8", errors="replace")
        cut = len(text) > max_chars or total > len(data)
        text = text[:max_chars]
        parts.append(f"{label}:\n{text[:-1] if text.endswith(chr(10)) else text}")
        if cut:
            parts.append(
                f"[{label} cut: showing the first {len(text)} characters of {total} bytes; "
                "narrow the command, e.g. with head -n or grep -m]"
            )
    return "\n".join(parts)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def command_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The environment commands run with: the caller's, minus what would defeat the policy."""
    env = {k: v for k, v in environ.items() if k not in ENV_REMOVED}
    env.update(ENV_SET)
    return env


def find_executable(name: str, exclude: Path) -> str | None:
    """`name` looked up on PATH, skipping relative entries and directories below `exclude`,
    so a file placed in the project cannot stand in for an allowlisted command."""
    real_exclude = Path(os.path.realpath(exclude))
    entries = [
        entry
        for entry in os.environ.get("PATH", os.defpath).split(os.pathsep)
        if os.path.isabs(entry) and not Path(os.path.realpath(entry)).is_relative_to(real_exclude)
    ]
    return shutil.which(name, path=os.pathsep.join(entries))

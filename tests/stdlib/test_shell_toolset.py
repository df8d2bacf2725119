from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from pydantic_ai import Agent
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from llm_do.stdlib.filesystem.descriptor import FilesystemSettings
from llm_do.stdlib.filesystem.toolset import FilesystemToolset
from llm_do.stdlib.registry import STDLIB_TOOLSETS
from llm_do.stdlib.shell.descriptor import ShellSettings
from llm_do.stdlib.shell.toolset import (
    ENV_SET,
    CommandResult,
    ShellToolset,
    command_env,
    find_executable,
    format_result,
    run_argv,
)
from tests.support.toolsets import run_context


def failure(call, toolset, **args) -> str:
    with pytest.raises(ToolFailed) as info:
        call(toolset, "shell", **args)
    assert "\n" not in info.value.message
    return info.value.message


# --- the runner -----------------------------------------------------------------------------------


def test_run_argv_captures_both_streams(tmp_path: Path) -> None:
    result = asyncio.run(run_argv(["ls", "missing", "."], cwd=tmp_path, timeout=5))
    assert result.exit_code == 2 and not result.timed_out
    assert b"missing" in result.stderr


def test_run_argv_timeout_kills_the_process_group(tmp_path: Path) -> None:
    started = time.monotonic()
    script = "sleep 30 & echo $!; wait"
    result = asyncio.run(run_argv(["sh", "-c", script], cwd=tmp_path, timeout=0.3))
    assert time.monotonic() - started < 5
    assert result.timed_out
    grandchild = int(result.stdout.decode().strip())
    deadline = time.monotonic() + 5  # the kill is sent; the kernel may take a moment to finish it
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not _alive(grandchild)


def test_run_argv_timeout_keeps_earlier_output(tmp_path: Path) -> None:
    result = asyncio.run(run_argv(["sh", "-c", "echo started; sleep 5"], cwd=tmp_path, timeout=0.3))
    assert result.timed_out and result.stdout == b"started\n"
    assert format_result(result, 100) == "timed out after 0.3 s; the command was killed\nstdout:\nstarted"


def test_run_argv_keeps_only_the_first_bytes(tmp_path: Path) -> None:
    result = asyncio.run(run_argv(["head", "-c", "300000", "/dev/zero"], cwd=tmp_path, timeout=5, keep_bytes=10))
    assert result.stdout == b"\0" * 10 and result.stdout_bytes == 300000


def test_run_argv_stdin_is_closed(tmp_path: Path) -> None:
    result = asyncio.run(run_argv(["cat"], cwd=tmp_path, timeout=5))
    assert result.exit_code == 0 and result.stdout == b""


def test_run_argv_cancelled_kills(tmp_path: Path) -> None:
    async def scenario() -> None:
        task = asyncio.ensure_future(run_argv(["sh", "-c", "echo $$ > pid; sleep 30"], cwd=tmp_path, timeout=30))
        while not (tmp_path / "pid").exists() or not (tmp_path / "pid").read_text().strip():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    started = time.monotonic()
    asyncio.run(scenario())
    assert time.monotonic() - started < 5
    assert not _alive(int((tmp_path / "pid").read_text()))


def _alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie nobody reaped (containers may lack an init)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _result(**fields) -> CommandResult:
    base = dict(exit_code=0, stdout=b"", stderr=b"", stdout_bytes=0, stderr_bytes=0, timed_out=False, timeout=30.0)
    return CommandResult(**{**base, **fields})


def test_format_result() -> None:
    assert format_result(_result(), 100) == "exit code: 0"
    assert format_result(_result(exit_code=1, stderr=b"bad\n", stderr_bytes=4), 100) == "exit code: 1\nstderr:\nbad"
    assert format_result(_result(stdout=b"a\nb\n", stdout_bytes=4, stderr=b"w", stderr_bytes=1), 100) == (
        "exit code: 0\nstdout:\na\nb\nstderr:\nw"
    )
    assert format_result(_result(exit_code=-9), 100) == "exit code: -9 (killed by SIGKILL)"


def test_format_result_cuts_output() -> None:
    text = format_result(_result(stdout=b"x" * 50, stdout_bytes=50), 10)
    assert text == (
        "exit code: 0\nstdout:\n" + "x" * 10 + "\n[stdout cut: showing the first 10 characters of 50 bytes; "
        "narrow the command, e.g. with head -n or grep -m]"
    )
    # bytes dropped while reading count as cut too
    assert "[stdout cut" in format_result(_result(stdout=b"x" * 4, stdout_bytes=9000), 10)


def test_command_env() -> None:
    env = command_env({"PATH": "/usr/bin", "POSIXLY_CORRECT": "1", "GIT_DIR": "/x", "PAGER": "less"})
    assert env == {"PATH": "/usr/bin", **ENV_SET}
    assert env["GIT_PAGER"] == "cat" and env["GIT_OPTIONAL_LOCKS"] == "0"


def test_find_executable_ignores_the_root_and_relative_path_entries(tmp_path: Path, monkeypatch) -> None:
    fake = tmp_path / "bin" / "ls"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho fake\n")
    fake.chmod(0o755)
    real = shutil.which("ls")
    monkeypatch.setenv("PATH", os.pathsep.join(["bin", str(tmp_path / "bin"), str(Path(real).parent)]))
    monkeypatch.chdir(tmp_path)
    assert find_executable("ls", exclude=tmp_path) == real
    assert find_executable("ls", exclude=tmp_path / "elsewhere") == str(fake)


# --- the tool -------------------------------------------------------------------------------------


@pytest.fixture
def files(shell):
    toolset = shell()
    (toolset.root / "a.txt").write_text("alpha\nbeta\n")
    (toolset.root / "sub").mkdir()
    (toolset.root / "sub" / "b.txt").write_text("beta\n")
    return toolset


def test_shell_runs_allowlisted_commands(files, call) -> None:
    assert call(files, "shell", command="ls") == "exit code: 0\nstdout:\na.txt\nsub"
    text = call(files, "shell", command="grep -rn beta")
    assert sorted(text.splitlines()) == ["a.txt:2:beta", "exit code: 0", "stdout:", "sub/b.txt:1:beta"]
    assert call(files, "shell", command="wc -l a.txt") == "exit code: 0\nstdout:\n2 a.txt"


def test_non_zero_exit_is_a_result_not_a_failure(files, call) -> None:
    assert call(files, "shell", command="grep nothing a.txt") == "exit code: 1"
    text = call(files, "shell", command="ls missing")
    assert text.startswith("exit code: 2\nstderr:\nls: cannot access 'missing'")


def test_refusals_are_tool_failures(files, call) -> None:
    assert failure(call, files, command="cat a.txt | wc").startswith("'|' (a pipe) is not allowed")
    assert failure(call, files, command="cat ../x") == "cat: '../x' points outside the toolset's directory"
    assert failure(call, files, command="rm a.txt").startswith("'rm' is not allowed here")


def test_cwd_is_base_plus_settings_path(files, shell, call) -> None:
    assert call(shell(path="sub"), "shell", command="ls") == "exit code: 0\nstdout:\nb.txt"
    assert "does not exist" in failure(call, shell(path="missing"), command="ls")


def test_output_is_cut(files, shell, call) -> None:
    (files.root / "big.txt").write_text("y" * 5000)
    text = call(shell(max_output_chars=100), "shell", command="cat big.txt")
    expected = "exit code: 0\nstdout:\n" + "y" * 100 + "\n[stdout cut: showing the first 100 characters of 5000 bytes"
    assert text.startswith(expected)


def test_timeout_is_the_smaller_of_argument_and_setting(files, shell, call) -> None:
    os.mkfifo(files.root / "fifo")  # cat blocks opening a FIFO nobody writes
    assert call(shell(timeout=0.2), "shell", command="cat fifo", timeout=100) == "timed out after 0.2 s; the command was killed"
    assert call(shell(timeout=100), "shell", command="cat fifo", timeout=0.2) == "timed out after 0.2 s; the command was killed"


def test_file_ops_moves(shell, call) -> None:
    toolset = shell("shell_file_ops")
    (toolset.root / "a.txt").write_text("a")
    assert call(toolset, "shell", command="mv a.txt b.txt") == "exit code: 0"
    assert (toolset.root / "b.txt").read_text() == "a"
    assert "'cat' is not allowed here (allowed: ls, mv)" in failure(call, toolset, command="cat b.txt")


def test_approval_per_command(shell) -> None:
    readonly, file_ops = shell(), shell("shell_file_ops")
    assert readonly.approval_for("shell", {"command": "grep -rn x"}) == "allow"
    assert file_ops.approval_for("shell", {"command": "ls -la"}) == "allow"
    assert file_ops.approval_for("shell", {"command": "mv a.txt b.txt"}) == "ask"
    # refused or unparseable: no prompt, the call fails on its own
    assert file_ops.approval_for("shell", {"command": "mv a.txt ../b.txt"}) == "allow"
    assert file_ops.approval_for("shell", {"command": "mv 'a.txt"}) == "allow"
    assert file_ops.approval_for("shell", {}) == "allow"


def test_program_name_is_plain(files, call) -> None:
    # executed by absolute path, but argv[0] stays the name the model wrote
    assert "\nls: cannot access" in call(files, "shell", command="ls missing")


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_in_a_repository(files, call, monkeypatch) -> None:
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)  # the machine's git configuration stays out
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    git = ["git", "-c", "user.name=T", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], cwd=files.root, check=True)
    subprocess.run([*git, "add", "a.txt"], cwd=files.root, check=True)
    subprocess.run([*git, "commit", "-qm", "first"], cwd=files.root, check=True)
    (files.root / "a.txt").write_text("changed\n")
    assert call(files, "shell", command="git log --format=%s") == "exit code: 0\nstdout:\nfirst"
    assert call(files, "shell", command="git status --short") == "exit code: 0\nstdout:\n M a.txt\n?? sub/"
    assert "+changed" in call(files, "shell", command="git diff -U0 a.txt")
    assert call(files, "shell", command="git show HEAD:a.txt") == "exit code: 0\nstdout:\nalpha\nbeta"


# --- through a real agent -------------------------------------------------------------------------


def test_agent_writes_then_runs_a_command(tmp_path: Path) -> None:
    fs = FilesystemToolset(STDLIB_TOOLSETS["filesystem_project"], FilesystemSettings(), tmp_path)
    sh = ShellToolset(STDLIB_TOOLSETS["shell_readonly"], ShellSettings(), tmp_path)
    seen: list[ToolReturnPart] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        if isinstance(last, ModelRequest):
            seen.extend(p for p in last.parts if isinstance(p, ToolReturnPart))
        if len(messages) == 1:
            assert {t.name for t in info.function_tools} == {"read_file", "write_file", "list_files", "shell"}
            write = ToolCallPart("write_file", {"path": "out/a.txt", "content": "one\ntwo\n"}, tool_call_id="w")
            return ModelResponse(parts=[write])
        if len(messages) == 3:
            return ModelResponse(
                parts=[
                    ToolCallPart("shell", {"command": "wc -l out/a.txt"}, tool_call_id="ok"),
                    ToolCallPart("shell", {"command": "cat /etc/passwd"}, tool_call_id="bad"),
                ]
            )
        return ModelResponse(parts=[TextPart("done")])

    result = Agent(FunctionModel(model), toolsets=[fs, sh]).run_sync("go")
    assert result.output == "done"
    assert (tmp_path / "out" / "a.txt").read_text() == "one\ntwo\n"
    by_id = {p.tool_call_id: p for p in seen}
    assert by_id["w"].content == "wrote 8 bytes to out/a.txt"
    assert by_id["ok"].content == "exit code: 0\nstdout:\n2 out/a.txt"
    assert by_id["bad"].content == "cat: '/etc/passwd' is absolute; paths must be relative to the toolset's directory"
    assert by_id["bad"].outcome == "failed"


# --- parallel calls -------------------------------------------------------------------------------


def test_parallel_mv_cannot_move_a_checked_path_out_from_under_ls(shell, tmp_path: Path, monkeypatch) -> None:
    """The tool calls of one response run concurrently. `ls b/link/` is checked while `b` does not
    exist (inside); `mv a/b b` then makes `b/link -> ../..` point above the root. Were the calls
    interleaved (ls waits here until mv is done), ls would list the directory outside; calls are
    serialized, so ls runs before mv starts or after, checked again."""
    from llm_do.stdlib.shell import toolset as shell_module

    (tmp_path / "secret-outside.txt").write_text("s")
    toolset = shell("shell_file_ops")
    (toolset.root / "a" / "b").mkdir(parents=True)
    (toolset.root / "a" / "b" / "link").symlink_to("../..")
    real_run = shell_module.run_argv

    async def scenario() -> list[str]:
        moved = asyncio.Event()

        async def run_argv(argv, **kwargs):
            if argv[0] == "ls":
                try:
                    await asyncio.wait_for(moved.wait(), 1.0)
                except TimeoutError:
                    pass
            result = await real_run(argv, **kwargs)
            if argv[0] == "mv":
                moved.set()
            return result

        monkeypatch.setattr(shell_module, "run_argv", run_argv)
        ctx = run_context()
        tools = await toolset.get_tools(ctx)
        calls = [("ls b/link/", "shell"), ("mv a/b b", "shell")]
        outs = await asyncio.gather(*(toolset.call_tool(tool, {"command": command}, ctx, tools[tool])
                                      for command, tool in calls), return_exceptions=True)
        return [str(o) for o in outs]

    ls_out, mv_out = asyncio.run(scenario())
    assert "exit code: 0" in mv_out
    assert "secret-outside" not in ls_out, ls_out


def test_stdlib_calls_of_one_run_do_not_interleave(shell) -> None:
    """While one built-in tool call runs, another of the same run waits (whatever its root)."""
    from llm_do.stdlib.base import StdlibToolset

    log: list[str] = []

    class Probe(StdlibToolset):
        async def shell(self, command: str, timeout: float | None = None) -> str:
            log.append(f"start {command}")
            await asyncio.sleep(0.05)
            log.append(f"end {command}")
            return command

    first, second = Probe(STDLIB_TOOLSETS["shell_readonly"], ShellSettings(), shell().base), \
        Probe(STDLIB_TOOLSETS["shell_file_ops"], ShellSettings(path="sub"), shell().base)

    async def scenario() -> None:
        ctx = run_context()
        a, b = (await first.get_tools(ctx))["shell"], (await second.get_tools(ctx))["shell"]
        await asyncio.gather(first.call_tool("shell", {"command": "one"}, ctx, a),
                             second.call_tool("shell", {"command": "two"}, ctx, b))

    asyncio.run(scenario())
    assert log == ["start one", "end one", "start two", "end two"]


def test_run_argv_cancelled_while_starting_kills_without_waiting(tmp_path: Path) -> None:
    """Cancelled before asyncio has finished connecting the pipes: the command already runs, and
    waiting for its pipes would mean waiting for it to end; its process group is killed instead."""

    async def scenario() -> None:
        task = asyncio.ensure_future(run_argv(["sh", "-c", "echo $$ > pid; sleep 30"], cwd=tmp_path, timeout=30))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    started = time.monotonic()
    asyncio.run(scenario())
    assert time.monotonic() - started < 5
    pid_file = tmp_path / "pid"
    deadline = time.monotonic() + 2
    while pid_file.exists() and not pid_file.read_text().strip() and time.monotonic() < deadline:
        time.sleep(0.01)
    if pid_file.exists() and pid_file.read_text().strip():
        assert not _alive(int(pid_file.read_text()))

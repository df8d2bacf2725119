"""Stopping a run: `--timeout` and Ctrl-C end the whole process within a moment, whatever a tool
does; a blocking sync tool is abandoned, and the processes tools started are gone afterwards.

These run the real `llm-do exec` as a subprocess: what is tested is that the process ends.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.cli import worker
from tests.support.processes import alive
from tests.support.projects import build_project, copy_project

pytestmark = [pytest.mark.process, pytest.mark.skipif(sys.platform != "linux", reason="process checks read /proc")]

TOOLS_PY = '''
    import subprocess
    import time


    def block(seconds: float) -> str:
        """Block the thread (no await) for a while."""
        open("started", "w").close()
        time.sleep(seconds)
        return "woke up"


    def spawn() -> str:
        """Start `sleep 60` and wait for it."""
        child = subprocess.Popen(["sleep", "60"])
        with open("child.pid", "w") as f:
            f.write(str(child.pid))
        child.wait()
        return "slept"


    TOOLS = [block, spawn]
'''

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"],
                     "entry": {"worker": "main"}},
    "tools.py": TOOLS_PY,
    "main.worker": worker("tools: [block, spawn]\ntoolsets: [shell_readonly]\napprovals:\n  - allow *", "Go."),
}

LIMIT = 8.0
"""Seconds a stopped run may take to end on a busy machine (the tools would take 40 or 60)."""


@pytest.fixture(scope="module")
def _template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_project(tmp_path_factory.mktemp("stopping") / "proj", PROJECT)


@pytest.fixture
def bundle(_template: Path, tmp_path: Path) -> Path:
    return copy_project(_template, tmp_path / "proj")


def call(tool: str, **args: object) -> str:
    return json.dumps({"workers": {"main": [{"tool_calls": [{"tool": tool, "args": args}]}, {"text": "finished"}]}})


def start(bundle: Path, script: str, *flags: str) -> subprocess.Popen[bytes]:
    path = bundle.parent / "script.json"
    path.write_text(script, encoding="utf-8")
    command = [sys.executable, "-m", "llm_do.cli.main", "exec", str(bundle), "go", "--script", str(path), *flags]
    return subprocess.Popen(command, cwd=bundle.parent, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def wait_for(predicate: Callable[[], bool], what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"{what} did not happen"
        time.sleep(0.05)


def finish(proc: subprocess.Popen[bytes]) -> tuple[int, str, str, float]:
    started = time.monotonic()
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    return proc.returncode, out.decode(), err.decode(), time.monotonic() - started


def interrupt_when(proc: subprocess.Popen[bytes], ready: Callable[[], bool]) -> tuple[int, str, str, float]:
    wait_for(ready, "the tool start")
    proc.send_signal(signal.SIGINT)
    return finish(proc)


def test_a_timeout_abandons_a_blocking_sync_tool(bundle: Path) -> None:
    """Timed from the tool's start, not the process's: an interpreter slow to start on a loaded
    machine is not what is judged (the tool blocks 40 s; abandoned, the run ends at once)."""
    proc = start(bundle, call("block", seconds=40), "--timeout", "1")
    wait_for((bundle.parent / "started").exists, "the tool start")
    code, out, err, took = finish(proc)
    assert took < 1 + LIMIT
    assert code == 1
    assert out == ""
    [line] = err.splitlines()
    assert line == "llm-do: run failed: the run took longer than 1 s and was stopped"


def test_ctrl_c_during_a_blocking_sync_tool_ends_the_run_quietly(bundle: Path) -> None:
    proc = start(bundle, call("block", seconds=40))
    code, out, err, took = interrupt_when(proc, (bundle.parent / "started").exists)
    assert took < LIMIT
    assert code == 130
    assert out == ""
    assert err.strip() == "", err


@pytest.mark.parametrize("how", ["timeout", "ctrl-c"])
def test_a_process_a_python_tool_started_does_not_outlive_a_stopped_run(bundle: Path, how: str) -> None:
    pid_file = bundle.parent / "child.pid"
    if how == "timeout":
        proc = start(bundle, call("spawn"), "--timeout", "2")
        wait_for(pid_file.exists, "the spawn")
        code, _, _, took = finish(proc)
        assert code == 1
    else:
        proc = start(bundle, call("spawn"))
        code, _, _, took = interrupt_when(proc, pid_file.exists)
        assert code == 130
    assert took < 2 + LIMIT
    child = int(pid_file.read_text())
    assert not alive(child), f"sleep 60 (pid {child}) outlived the run"


def processes_reading(name: str) -> list[int]:
    """Pids of live processes whose command line mentions `name`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if name.encode() in cmdline and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


@pytest.mark.parametrize("how", ["timeout", "ctrl-c"])
def test_a_shell_command_does_not_outlive_a_stopped_run(bundle: Path, how: str) -> None:
    fifo = f"fifo-{os.getpid()}-{how}"
    os.mkfifo(bundle.parent / fifo)  # `cat` of a FIFO nobody writes blocks until killed
    script = call("shell", command=f"cat {fifo}")
    if how == "timeout":
        proc = start(bundle, script, "--timeout", "2")
        wait_for(lambda: bool(processes_reading(fifo)), "cat's start")
        code, _, err, took = finish(proc)
        assert code == 1, err
    else:
        proc = start(bundle, script)
        code, _, err, took = interrupt_when(proc, lambda: bool(processes_reading(fifo)))
        assert code == 130, err
    assert took < 2 + LIMIT
    assert processes_reading(fifo) == []

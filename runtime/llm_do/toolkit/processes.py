"""Processes: whether one is alive (`pid_alive`), and those a stopped run leaves behind, and their end.

A run that times out or is interrupted abandons its sync tools' threads (`toolkit.tool_threads`); a
process such a tool started (`subprocess.run(["sleep", "60"])`) would outlive llm-do as an orphan.
The CLI notes this process's children before a run and, when the run does not finish, kills every
process that descends from one it did not have before. The shell toolset kills its own process
groups when cancelled; this is the net for everything else.

The children are found on Linux only (it reads `/proc/PID/task/TID/children`); elsewhere `children`
and `kill_new_descendants` do nothing.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path


def children(pid: int) -> set[int]:
    """The live children of process `pid` (of any of its threads)."""
    found: set[int] = set()
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return found
    for task in tasks:
        try:
            found.update(int(p) for p in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue
    return found


def descendants(pid: int) -> set[int]:
    found: set[int] = set()
    todo = list(children(pid))
    while todo:
        child = todo.pop()
        if child not in found:
            found.add(child)
            todo.extend(children(child))
    return found


def kill_new_descendants(before: set[int]) -> list[int]:
    """SIGKILL every descendant of this process that is not below a child in `before`; return
    their pids."""
    new = [c for c in children(os.getpid()) if c not in before]
    doomed: set[int] = set(new)
    for child in new:
        doomed |= descendants(child)
    for pid in doomed:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    for pid in new:  # reap our own children: a killed one must not linger as a zombie
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:  # reaped already (by the abandoned tool's Popen.wait, say)
            pass
    return sorted(doomed)


def pid_alive(pid: int) -> bool:
    """Whether process `pid` may still run: False only when it is certainly gone. (On Windows
    `os.kill` would end the process, not probe it: there every process counts as alive.)"""
    if os.name == "nt":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True

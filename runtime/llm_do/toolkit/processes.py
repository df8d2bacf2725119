"""Processes: whether one is alive (`pid_alive`), and those a stopped run leaves behind, and their end.

A run that times out or is interrupted abandons its sync tools' threads (`toolkit.tool_threads`); a
process such a tool started (`subprocess.run(["sleep", "60"])`) would outlive llm-do as an orphan.
The CLI notes this process's children before a run and, when the run does not finish, kills every
process that descends from one it did not have before. The shell toolset kills its own process
groups when cancelled; this is the net for everything else.

A process whose parent ends is given to the nearest ancestor that is a subreaper (else to init,
out of reach): whoever starts a program that may leave daemons behind (an MCP server, which may
double-fork or start a new session where process groups cannot follow) calls `become_subreaper`
first, so those orphans stay this process's descendants and the nets above, and `end_marked`, find
them.

The children are found on Linux only (it reads `/proc/PID/task/TID/children`, and the subreaper is
`prctl(PR_SET_CHILD_SUBREAPER)`); elsewhere `children`, `kill_new_descendants`, `end_marked` and
`become_subreaper` do nothing.
"""

from __future__ import annotations

import os
import signal
import sys
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


PR_SET_CHILD_SUBREAPER = 36
"""prctl(2) option: orphans below this process are re-parented to it, not to init (Linux >= 3.4)."""
_subreaper = False


def become_subreaper() -> bool:
    """Make this process the subreaper of everything it starts from now on (once; Linux only, a
    no-op elsewhere): whether it is one."""
    global _subreaper
    if _subreaper or not sys.platform.startswith("linux"):
        return _subreaper
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        _subreaper = libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        _subreaper = False
    return _subreaper


def carries(pid: int, mark: str) -> bool:
    """Whether process `pid` was started with `mark` (`NAME=VALUE`) in its environment: inherited by
    everything a marked program starts, whatever session or process group it moves to."""
    try:
        environ = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    return mark.encode() in environ.split(b"\0")


def end_marked(mark: str, known: set[int] | frozenset[int] = frozenset()) -> list[int]:
    """SIGKILL every descendant of this process that carries `mark` or is one of `known` (the trees
    of the marked programs, taken while they ran, for a process that dropped its environment); reap
    those that are, or become once their parents are killed, this process's children. Their pids."""
    me = os.getpid()
    doomed: set[int] = set()
    for _ in range(100):  # each round reaches the orphans the previous round's kills left
        below = descendants(me)
        targets = {pid for pid in below - doomed if pid in known or carries(pid, mark)}
        for pid in targets:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        doomed |= targets
        ours = doomed & children(me)
        for pid in ours:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:  # reaped already (by the transport that started it)
                pass
        if not targets and not ours:
            break
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

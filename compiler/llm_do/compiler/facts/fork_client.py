"""The llm-do side of the introspection fork server (`fork_server`): start it at the first
introspection that needs a child, ask it for one child per request, stop it at exit.

One server per llm-do process, started lazily (a build answered from the cache starts nothing) and
stopped by `atexit`; it also ends by itself when this process dies (end of file on its control
socket). It is started again when an environment variable its preloading depends on changed (the
`PYTHON*` and locale variables, and those the preloaded imports read) or a `sys.path` folder
changed (a package installed or removed, a `.pth` file added), and abandoned for the rest
of the process if it cannot start. Where it is not available (no `fork`, no descriptor passing:
Windows), when `LLM_DO_NO_FORK_SERVER` is set, or when a request needs a fresh process (a project
module shadowing a preloaded one, a preloaded module's file changed: the server is then replaced),
`run_child` returns None and the caller starts the plain subprocess.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .fork_server import SHADOWED, STALE, START, frame

NO_FORK_SERVER_VARIABLE = "LLM_DO_NO_FORK_SERVER"
CHILD_ENVIRONMENT = {"PYTHONDONTWRITEBYTECODE": "1"}
"""What the introspection child's environment adds to the parent's, forked or fresh."""
KILL_GRACE = 5.0
TRACEBACK_GRACE = 1.0
"""How long a child past its time limit has to write where it is, before it is killed."""
TRACEBACK_MARK = b"(most recent call first):"
"""What begins the traceback `faulthandler` writes (the child registers it for SIGUSR1)."""


@dataclass(frozen=True)
class ChildRun:
    """How a forked child ended: what it wrote on stdout and stderr, its returncode (negative: the
    signal that ended it), and whether the time limit passed (it was then killed)."""

    stdout: str
    stderr: str
    returncode: int | None
    timed_out: bool = False


def available() -> bool:
    return (hasattr(os, "fork") and hasattr(socket, "send_fds") and hasattr(socket, "AF_UNIX")
            and os.environ.get(NO_FORK_SERVER_VARIABLE, "") in ("", "0"))


def run_child(request: str, root: Path, timeout: float, *, preload: bool = False) -> ChildRun | None:
    """Answer `request` (the child's stdin) in a child forked from this process's server, in
    `root`, within `timeout` seconds; None when only a fresh subprocess can. `preload`: the child
    will import pydantic-ai (the server then has it imported first, once)."""
    if not available():
        return None
    server = _running_server(timeout)
    if server is None:
        return None
    try:
        run = server.run(request, root, timeout, preload)
    finally:
        server.done()
    if run is not None and run.returncode == STALE and not run.stdout:
        _retire(server)
        return None
    if run is None or (run.returncode == SHADOWED and not run.stdout):
        return None
    return run


_lock = threading.Lock()
_server: _ForkServer | None = None
_broken = False


def _running_server(start_limit: float) -> _ForkServer | None:
    """The server to ask, counted as in use (`done` when the request ended)."""
    global _server, _broken
    with _lock:
        if _server is not None and (not _server.alive() or _server.environment_changed() or _server.path_changed()):
            _server.retire()
            _server = None
        if _server is None and not _broken:
            _server = _ForkServer.start(max(start_limit, 30.0))
            _broken = _server is None
        if _server is not None:
            _server.requests += 1
        return _server


def _retire(server: _ForkServer) -> None:
    """`server`'s preloaded modules are out of date: the next request starts another."""
    global _server
    with _lock:
        if _server is server:
            _server = None
        server.retire()


def stop() -> None:
    """Stop this process's fork server, if one runs (at exit; a later request starts another)."""
    global _server
    with _lock:
        if _server is not None:
            _server.stop()
            _server = None
        for server in list(_retired):
            server.stop()
        _retired.clear()


_retired: list[_ForkServer] = []
"""Servers replaced while requests were in flight: stopped when the last ends, or at exit."""


def server_pid() -> int | None:
    """The running fork server's pid (for tests and diagnostics)."""
    with _lock:
        return _server.proc.pid if _server is not None else None


def _forget_after_fork() -> None:
    global _server, _lock
    _lock = threading.Lock()
    for server in [*([_server] if _server is not None else []), *_retired]:
        server.control.close()  # the parent's servers are the parent's to use and stop
    _server = None
    _retired.clear()


atexit.register(stop)
os.register_at_fork(after_in_child=_forget_after_fork)


def _path_folders() -> list[tuple[str, int | None]]:
    """Each folder of this process's `sys.path` but the first (the script's) with its modification time."""
    out: list[tuple[str, int | None]] = []
    for entry in sys.path[1:]:
        try:
            out.append((entry, os.stat(entry).st_mtime_ns))
        except OSError:
            out.append((entry, None))
    return out


def _server_environment() -> dict[str, str]:
    """This process's environment without PYTHONPATH: the server's `sys.path` is then the part
    every child's ends with (a child's PYTHONPATH is added when it starts)."""
    return {**{k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, **CHILD_ENVIRONMENT}


class _ForkServer:
    def __init__(self, proc: subprocess.Popen[bytes], control: socket.socket, environment: dict[str, str],
                 folders: list[tuple[str, int | None]]) -> None:
        self.proc = proc
        self.control = control
        self.environment = environment
        self.folders = folders
        """The `sys.path` folders and their modification times when the server started."""
        """The server's environment: what its imports saw."""
        self.heard: set[str] = set()
        """The variables the preloading read."""
        self.sending = threading.Lock()
        self.requests = 0
        """Requests in flight (under `_lock`)."""
        self.retired = False

    @classmethod
    def start(cls, limit: float) -> _ForkServer | None:
        """Start a server and wait until it has preloaded (`limit` seconds at most); None if it could not."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        environment = _server_environment()
        folders = _path_folders()
        try:
            proc = subprocess.Popen(
                [sys.executable, "-P", "-c", START.format(fd=theirs.fileno())],
                pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL, cwd=os.sep, env=environment,
            )
        except OSError:
            ours.close()
            return None
        finally:
            theirs.close()
        hello = _read_line(ours, time.monotonic() + limit)
        try:
            int(json.loads(hello or "")["pid"])
        except (ValueError, KeyError, TypeError):
            ours.close()
            proc.kill()
            proc.wait()
            return None
        return cls(proc, ours, environment, folders)

    def environment_changed(self) -> bool:
        """Whether a variable the server's preloading may depend on (`PYTHON*`, the locale, those
        its imports read) differs now from the server's: a new server must serve."""
        names = {n for n in [*os.environ, *self.environment] if n.startswith(("PYTHON", "LC_")) or n == "LANG"}
        names = (names | self.heard) - {"PYTHONPATH", *CHILD_ENVIRONMENT}
        return any(os.environ.get(n) != self.environment.get(n) for n in names)

    def path_changed(self) -> bool:
        """Whether a `sys.path` folder changed since the server started (a package installed or
        removed, a `.pth` file added): a fresh child's `sys.path` and modules may differ from the
        server's now, so a new server must serve."""
        return _path_folders() != self.folders

    def retire(self) -> None:
        """No new request goes to this server; stop it once those in flight ended (under `_lock`)."""
        self.retired = True
        if self.requests == 0:
            self.stop()
        else:
            _retired.append(self)

    def done(self) -> None:
        """A request to this server ended."""
        with _lock:
            self.requests -= 1
            if self.retired and self.requests == 0 and self in _retired:
                _retired.remove(self)
                self.stop()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        self.control.close()  # the server kills the children still running and ends
        try:
            self.proc.wait(timeout=KILL_GRACE)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def run(self, request: str, root: Path, timeout: float, preload: bool) -> ChildRun | None:
        deadline = time.monotonic() + timeout
        status, status_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        with status, tempfile.TemporaryFile() as stderr:
            setup = json.dumps({"cwd": str(root), "environ": {**os.environ, **CHILD_ENVIRONMENT}, "preload": preload}).encode()
            message = frame(b"F", setup)
            try:
                with self.sending:
                    sent = socket.send_fds(self.control, [message], [status_theirs.fileno(), stdin_r, stdout_w, stderr.fileno()])
                    self.control.sendall(message[sent:])
            except OSError:
                return None
            finally:
                for fd in (stdin_r, stdout_w):
                    os.close(fd)
                status_theirs.close()
            started = _read_line(status, deadline)
            if started is None or not started.startswith("pid "):
                os.close(stdin_w)
                os.close(stdout_r)
                return None  # the server is gone: a fresh process answers
            _, pid_text, heard = started.split(" ", 2)
            pid = int(pid_text)
            self.heard.update(json.loads(heard))
            out = _exchange(stdin_w, stdout_r, request.encode(), deadline)
            ended = _read_line(status, deadline) if out is not None else None
            timed_out = ended is None and time.monotonic() >= deadline  # else the server is gone
            if timed_out:
                self._send(b"T", pid)
                _await_traceback(stderr.fileno(), time.monotonic() + TRACEBACK_GRACE)
                self._send(b"K", pid)
                ended = _read_line(status, time.monotonic() + KILL_GRACE)
            returncode = int(ended.split()[1]) if ended and ended.startswith("exit ") else None
            stderr.seek(0)
            return ChildRun(stdout=(out or b"").decode("utf-8", "replace"), stderr=stderr.read().decode("utf-8", "replace"),
                            returncode=returncode, timed_out=timed_out)

    def _send(self, kind: bytes, pid: int) -> None:
        """Ask the server to signal child `pid`: `K` kills it, `T` makes it write where it is."""
        try:
            with self.sending:
                self.control.sendall(frame(kind, str(pid).encode()))
        except OSError:
            pass


def _await_traceback(fd: int, deadline: float) -> None:
    """Wait until the child's stderr (the file at `fd`, which the child writes too: read in place,
    its offset left alone) holds the traceback a `T` message asks for, or `deadline` passes."""
    while time.monotonic() < deadline:
        if TRACEBACK_MARK in os.pread(fd, os.fstat(fd).st_size, 0):
            return
        time.sleep(0.02)


def _read_line(sock: socket.socket, deadline: float) -> str | None:
    """One line from `sock` (read a byte at a time: what follows is not ours to take), or None at
    end of file or once `deadline` passed."""
    line = b""
    while not line.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return None
        ready, _, _ = select.select([sock], [], [], remaining)
        if not ready:
            return None
        byte = sock.recv(1)
        if not byte:
            return None
        line += byte
    return line.decode()


def _exchange(stdin: int, stdout: int, data: bytes, deadline: float) -> bytes | None:
    """Write `data` to the child's stdin (then close it) while reading its stdout to the end; None
    if `deadline` passed first. Both descriptors are closed."""
    chunks: list[bytes] = []
    writing: list[int] = [stdin]
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            readable, writable, _ = select.select([stdout], writing, [], remaining)
            if writable:
                try:
                    written = os.write(stdin, data[:65536])
                except BrokenPipeError:
                    written = len(data)
                data = data[written:]
                if not data:
                    os.close(stdin)
                    writing = []
            if readable:
                chunk = os.read(stdout, 65536)
                if not chunk:
                    return b"".join(chunks)
                chunks.append(chunk)
    finally:
        if writing:
            os.close(stdin)
        os.close(stdout)

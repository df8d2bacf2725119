"""The introspection fork server: a process that has imported what every introspection child
imports (`facts.child`) and, from the first request whose Python names pydantic-ai or exports tools,
pydantic-ai (which the child imports to describe tools), and forks one child per request, so a
process that introspects many times pays pydantic-ai's import once, and one that introspects a
project without tools once pays nothing for it.

Started by `fork_client` as `python -P -c START` (in `/`, with the environment of the llm-do
process but PYTHONPATH) with its control socket on a file descriptor. Its first line is its pid;
then:
- a request is an `F` message (the child's cwd and environment) with four descriptors: a status
  socket and the child's stdin, stdout and stderr. The server forks; the child takes the
  descriptors as 0, 1 and 2 and runs the child module as `__main__`, as `python -m
  llm_do.compiler.facts.child` does. The server writes `pid N HEARD` on the status socket (HEARD:
  the environment variables the preloading read, if this request made it preload), and `exit N`
  (a returncode as `subprocess` gives it) once it has reaped the child.
- a `K` message kills child N if it has not been reaped (so never a reused pid); a `T` message
  sends it SIGUSR1, on which it writes where it is to its stderr (`faulthandler`), the last word
  of a child past its time limit.
- end of file on the control socket (the llm-do process closed it, or died) kills the children
  still running and ends the server: it never outlives the process that started it.

A forked child answers as a fresh one would. Its cwd, `os.environ`, `sys.argv` and `sys.path` are
set from the request: the server starts without the cwd and PYTHONPATH on its path, so its
`sys.path` is the site part that every child's ends with. The modules preloaded beyond what a
fresh child has are out of sight until imported (`preloaded_modules`), so the child reports what
a fresh one loads. A preloaded module the request's `sys.path` would find elsewhere (a project
module shadowing it) cannot be honoured: the child then exits with `SHADOWED`, and a fresh process
answers instead; so it does when a loaded module's file changed since the server loaded it
(`STALE`: an upgrade, an edit of llm-do), and the next request gets a new server.
"""

from __future__ import annotations

import importlib
import json
import os
import runpy
import signal
import socket
import struct
import sys
import traceback
from collections.abc import Callable
from typing import Any

from .preloaded_modules import Preloaded

SHADOWED = 75
"""The child's exit status when the request's `sys.path` would load a preloaded module from
elsewhere: only a fresh process can answer."""
STALE = 76
"""The child's exit status when a preloaded module's file changed since the server loaded it: a
fresh process answers, and a new server serves the next request."""
CHILD = "llm_do.compiler.facts.child"
HEADER = struct.Struct("!I")
SIGNALS = {kind: getattr(signal, name) for kind, name in ((b"K", "SIGKILL"), (b"T", "SIGUSR1")) if hasattr(signal, name)}
"""The control messages that signal a child, by kind."""
DESCRIPTORS = 4


def frame(kind: bytes, body: bytes) -> bytes:
    """A control message: `F` (fork; its body the child's cwd and environment as JSON, sent with
    the descriptors), `K` (kill; its body the pid) or `T` (where are you; its body the pid)."""
    return kind + HEADER.pack(len(body)) + body


START = ("import sys, runpy, llm_do.compiler.facts.child; base = set(sys.modules); "
         "from llm_do.compiler.facts.preloaded_modules import Preloaded; preloaded = Preloaded(base); "
         "preloaded.load(lambda: __import__('llm_do.compiler.facts.fork_server')); "
         "from llm_do.compiler.facts.fork_server import serve; serve({fd}, preloaded)")
"""The server's `-c` program: `base` is what a fresh `python -m llm_do.compiler.facts.child` has
loaded when it starts, taken before the server's own imports (recorded like the preloading's)."""
WARM_UP = "pydantic_ai"
"""What the server imports before the first request that asks for it (`"preload": true`: the
project's Python names pydantic-ai or exports tools), then keeps for every later child."""


def serve(control_fd: int, preloaded: Preloaded) -> None:
    """The server's main loop (the only code that runs in the server process)."""
    control = socket.socket(fileno=control_fd)
    server = _Server(control, preloaded, list(sys.path))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the llm-do process, which ends the server
    signal.signal(signal.SIGCHLD, lambda *_: server.reap())
    control.sendall(json.dumps({"pid": os.getpid()}).encode() + b"\n")
    server.run()


def _listening(run: Callable[[], Any]) -> set[str]:
    """Call `run`; the names of the environment variables it read."""
    heard: set[str] = set()
    real = os.environ

    class Listening(type(real)):  # type: ignore[misc]
        def __getitem__(self, key: str) -> str:  # os.environ's: str values
            heard.add(key)
            value: str = super().__getitem__(key)
            return value

        def __contains__(self, key: object) -> bool:
            heard.add(str(key))
            found: bool = super().__contains__(key)
            return found

    # the same variables, read through a mapping that listens (a swap, not a change: noqa B003)
    os.environ = Listening(real._data, real.encodekey, real.decodekey,  # type: ignore[attr-defined]  # noqa: B003
                           real.encodevalue, real.decodevalue)
    try:
        run()
    finally:
        os.environ = real  # noqa: B003
    return heard


class _Server:
    def __init__(self, control: socket.socket, preloaded: Preloaded, site_path: list[str]) -> None:
        self.control = control
        self.preloaded = preloaded
        self.site_path = site_path
        self.warm = False
        """pydantic-ai was imported (at the first request that asked for it)."""
        self.live: dict[int, socket.socket] = {}
        """Children not yet reaped, with their status sockets."""

    def run(self) -> None:
        """Serve messages until the control socket ends. A message is a kind (`F`: fork, with the
        descriptors; `K`: kill; `T`: say where) and a length-prefixed body, read to its exact size, so that no
        read ever takes a byte (or a descriptor) of the next message."""
        while True:
            head, fds = self._read(1 + HEADER.size, with_descriptors=True)
            size = HEADER.unpack_from(head, 1)[0] if len(head) == 1 + HEADER.size else -1
            body = self._read(size)[0] if size >= 0 else b""
            if size < 0 or len(body) < size:
                for fd in fds:
                    os.close(fd)
                self._end()
                return
            if head[:1] == b"F" and len(fds) == DESCRIPTORS:
                self._fork(json.loads(body), fds)
            elif head[:1] in SIGNALS and int(body) in self.live:
                os.kill(int(body), SIGNALS[head[:1]])
            else:
                for fd in fds:
                    os.close(fd)

    def _read(self, size: int, *, with_descriptors: bool = False) -> tuple[bytes, list[int]]:
        """`size` bytes (fewer at end of file) and the descriptors that came with them."""
        data, fds = b"", []
        while len(data) < size:
            try:
                if with_descriptors:
                    chunk, more, _, _ = socket.recv_fds(self.control, size - len(data), DESCRIPTORS)
                    fds.extend(more)
                else:
                    chunk = self.control.recv(size - len(data))
            except OSError:
                chunk = b""
            if not chunk:
                break
            data += chunk
        return data, fds

    def _fork(self, setup: dict[str, Any], fds: list[int]) -> None:
        status_fd, stdin_fd, stdout_fd, stderr_fd = fds
        status = socket.socket(fileno=status_fd)
        heard: set[str] = set()
        if setup.get("preload") and not self.warm:
            self.warm = True
            try:
                heard = _listening(lambda: self.preloaded.load(lambda: importlib.import_module(WARM_UP)))
            except Exception:  # the child meets the same error in its own import, and reports it
                pass
        sys.stderr.flush()
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})  # reaped only once it is in `live`
        pid = os.fork()
        if pid == 0:
            code = 1
            try:
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
                self.control.close()
                status.close()
                for other in self.live.values():
                    other.close()
                for fd, target in ((stdin_fd, 0), (stdout_fd, 1), (stderr_fd, 2)):
                    os.dup2(fd, target)
                    os.close(fd)
                code = run_child(setup, self.preloaded, self.site_path)
            except BaseException:
                traceback.print_exc()
            finally:
                try:
                    sys.stderr.flush()
                finally:
                    os._exit(code)
        for fd in (stdin_fd, stdout_fd, stderr_fd):
            os.close(fd)
        self.live[pid] = status
        try:
            status.sendall(f"pid {pid} {json.dumps(sorted(heard))}\n".encode())
        except OSError:
            pass
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})

    def reap(self) -> None:
        while self.live:
            try:
                pid, wait_status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            status = self.live.pop(pid, None)
            if status is None:
                continue
            try:
                status.sendall(f"exit {os.waitstatus_to_exitcode(wait_status)}\n".encode())
            except OSError:
                pass
            status.close()

    def _end(self) -> None:
        for pid in list(self.live):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for pid in list(self.live):
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def run_child(setup: dict[str, Any], preloaded: Preloaded, site_path: list[str]) -> int:
    """In the forked child: become the fresh `python -m llm_do.compiler.facts.child` the request
    describes, and answer; the exit status."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.chdir(setup["cwd"])
    os.environ.clear()
    os.environ.update(setup["environ"])
    changed = preloaded.changed()
    if changed:
        print(f"fork server: {changed} changed since the server loaded it", file=sys.stderr)
        return STALE
    sys.argv = [""]
    sys.path[:] = fresh_path(os.getcwd(), setup["environ"].get("PYTHONPATH", ""), site_path)
    sys.path_importer_cache.clear()
    shadowed = _shadowed()
    if shadowed:
        print(f"fork server: {shadowed} would load from elsewhere on this sys.path", file=sys.stderr)
        return SHADOWED
    preloaded.hide(also=(__name__, CHILD, Preloaded.__module__))
    try:
        runpy.run_module(CHILD, run_name="__main__", alter_sys=True)  # as `python -m` runs it
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    finally:
        sys.stdout.flush()
    return 0


def fresh_path(cwd: str, pythonpath: str, site_path: list[str]) -> list[str]:
    """`sys.path` as `python -m` started in `cwd` with PYTHONPATH=`pythonpath` has it, given the
    site part (`site_path`, what the server's start without PYTHONPATH gave): the cwd, then the
    PYTHONPATH entries (an empty one is the cwd) and the site part made absolute, without repeats
    (as `site` removes them)."""
    out: list[str] = []
    seen: set[str] = set()
    for entry in [*(pythonpath.split(os.pathsep) if pythonpath else []), *site_path]:  # "" is the cwd
        full = os.path.abspath(os.path.join(cwd, entry))
        key = os.path.normcase(full)
        if key not in seen:
            seen.add(key)
            out.append(full)
    return [cwd, *out]


def _shadowed() -> str | None:
    """A preloaded top-level module the current `sys.path` would find at another place, if any."""
    for name, module in list(sys.modules.items()):
        spec = getattr(module, "__spec__", None)
        if "." in name or spec is None or not spec.has_location:
            continue
        found = None
        for finder in sys.meta_path:  # as the import system would look, without `sys.modules`
            find = getattr(finder, "find_spec", None)
            found = find(name, None) if find is not None else None
            if found is not None:
                break
        if found is None or found.origin != spec.origin:
            return name
    return None

"""`llm-do` in a process of its own without paying the interpreter's start: a warm parent that has
imported the CLI (and pydantic-ai, `mcp`, the MCP server) forks one child per command.

Starting `python -m llm_do.cli.main serve` costs a second and a half of CPU, nearly all of it
imports (two for a durable run, with DBOS); the tests that start `serve` on stdio many times
(tests/runtime/test_serve.py), or a durable run that waits for another process
(tests/runtime/test_durable.py), check what the command does, not how it starts. `command(sock, args)` is the argv a test starts instead of
`python -m llm_do.cli.main ARGS`: a small client (the standard library only, started with -S)
that hands its stdin, stdout and stderr, its directory and its environment to the warm parent,
which forks; the fork runs `main(ARGS)` on those descriptors and its exit status becomes the
client's. SIGINT and SIGTERM sent to the client reach the command; if the client dies, the
command is killed. Tests of start-up itself (imports, cost) or of the process tree (orphans,
subreapers, signals to a process group) start the real interpreter instead.

`warm_cli()` starts the parent and stops it (and every command still running) at the end.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PRELOAD = ("llm_do.cli.main", "llm_do.cli.session", "pydantic_ai",
           "llm_do.cli.commands.serve", "llm_do.runtime.mcp.server", "mcp.server.stdio", "mcp.server.lowlevel",
           "llm_do.cli.commands.exec", "llm_do.cli.commands.runs", "llm_do.cli.durable_run", "llm_do.runtime.durable.dbos")
"""What the parent imports once: the CLI, and what `serve` and a durable `exec` or `resume` import
when they start."""

CLIENT = r"""
import json, os, signal, socket, sys
sock = socket.socket(socket.AF_UNIX)
sock.connect(sys.argv[1])
ignored = signal.getsignal(signal.SIGINT) == signal.SIG_IGN  # started in the background: Ctrl-C is not ours
request = json.dumps({"argv": sys.argv[2:], "cwd": os.getcwd(), "env": dict(os.environ), "sigint_ignored": ignored})
request = request.encode()
socket.send_fds(sock, [len(request).to_bytes(8, "big") + request], [0, 1, 2])
for fd in (0, 1, 2):
    os.close(fd)
def relay(sig, frame):
    sock.sendall(b"%d\n" % sig)
for sig in (signal.SIGINT, signal.SIGTERM):
    signal.signal(sig, relay)
status = b""
while not status.endswith(b"\n"):
    try:
        part = sock.recv(64)
    except InterruptedError:
        continue
    if not part:
        os._exit(70)
    status += part
code = int(status)
if code < 0:
    signal.signal(-code, signal.SIG_DFL)
    os.kill(os.getpid(), -code)
os._exit(code)
"""


def command(sock: Path, *args: str | Path) -> list[str]:
    """The argv that runs `llm-do ARGS` as a fork of the warm parent listening at `sock`."""
    return [sys.executable, "-S", "-c", CLIENT, str(sock), *map(str, args)]


@contextmanager
def warm_cli() -> Iterator[Path]:
    """The warm parent, listening on a socket of its own (in a short directory of /tmp: a socket's
    path has at most 107 bytes); yields the socket's path."""
    folder = Path(tempfile.mkdtemp(prefix="llm-do-warm-"))
    sock = folder / "cli.sock"
    proc = subprocess.Popen([sys.executable, "-m", "tests.support.warm_cli", str(sock)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=None, cwd=Path(__file__).resolve().parents[2])
    try:
        assert proc.stdout is not None
        ready = proc.stdout.readline()
        assert ready == b"ready\n", f"the warm parent did not start: {ready!r}"
        yield sock
    finally:
        assert proc.stdin is not None
        proc.stdin.close()  # the parent's signal to stop: it kills the commands still running
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        sock.unlink(missing_ok=True)
        folder.rmdir()


def _serve(path: str) -> None:
    """The parent: import PRELOAD, then fork a handler per connection until stdin closes."""
    import importlib

    for name in PRELOAD:
        importlib.import_module(name)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen(64)
    handlers: set[int] = set()
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        readable, _, _ = select.select([listener, sys.stdin], [], [], 1.0)
        for pid in list(handlers):
            if os.waitpid(pid, os.WNOHANG)[0]:
                handlers.discard(pid)
        if sys.stdin in readable:  # the test session ended (or died): so do its commands
            for pid in handlers:
                os.kill(pid, signal.SIGTERM)
            for pid in handlers:
                os.waitpid(pid, 0)
            os.unlink(path)
            return
        if listener in readable:
            conn, _ = listener.accept()
            pid = os.fork()
            if pid == 0:
                listener.close()
                _handle(conn)  # never returns
            conn.close()
            handlers.add(pid)


def _handle(conn: socket.socket) -> None:
    """A connection's handler: receive the client's descriptors and request, fork the command,
    relay signals to it, send back its status; kill it when the client or the parent goes."""
    try:
        header, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
        size = int.from_bytes(header[:8], "big")
        body = header[8:]
        while len(body) < size:
            more = conn.recv(size - len(body))
            if not more:
                os._exit(1)
            body += more
        request = json.loads(body)
        child = os.fork()
        if child == 0:
            conn.close()
            _run(request, fds)  # never returns
        for fd in fds:
            os.close(fd)
        stop = [False]

        def forward_term(sig: int, frame: object) -> None:
            stop[0] = True

        signal.signal(signal.SIGTERM, forward_term)
        done = os.pidfd_open(child)
        while True:
            if stop[0]:
                os.kill(child, signal.SIGKILL)
            try:
                readable, _, _ = select.select([conn, done], [], [], 0.5)
            except InterruptedError:
                continue
            if done in readable:
                _, status = os.waitpid(child, 0)
                conn.sendall(b"%d\n" % os.waitstatus_to_exitcode(status))
                os._exit(0)
            if conn in readable:
                data = conn.recv(64)
                if not data:  # the client died: nobody waits for this command
                    os.kill(child, signal.SIGKILL)
                    stop[0] = False
                    continue
                for line in data.split():
                    os.kill(child, int(line))
    finally:
        os._exit(1)


def _run(request: dict, fds: list[int]) -> None:
    """The command: the client's descriptors as 0, 1 and 2, its directory and environment, then
    `main(argv)`; its exit code ends the fork (after atexit handlers, as an interpreter's exit)."""
    code = 1
    try:
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        for sig in (signal.SIGTERM, signal.SIGCHLD):
            signal.signal(sig, signal.SIG_DFL)
        # as an interpreter does: Ctrl-C raises KeyboardInterrupt, unless it was ignored when started
        signal.signal(signal.SIGINT, signal.SIG_IGN if request["sigint_ignored"] else signal.default_int_handler)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.argv = ["llm-do", *request["argv"]]
        sys.path[0] = request["cwd"]  # as `python -m` puts the directory it was started in first
        from llm_do.cli.main import main

        try:
            main(request["argv"])
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001  (a closed pipe: nothing more to say)
                pass
        os._exit(code)


if __name__ == "__main__":
    _serve(sys.argv[1])

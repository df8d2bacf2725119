"""A small real MCP server for the tests, written with the official `mcp` package.

Tools: `echo(text)` returns the text, `add(a, b)` the sum, `wait(seconds)` sleeps, `secret()` a
fixed string. The
environment shapes it, so one file serves every case:
- ECHO_PID_FILE: write this process's pid there at start (orphan checks);
- ECHO_CWD_FILE: write the directory it was started in there;
- ECHO_CHANGED=1: `echo` takes `message` instead of `text` (a schema changed after the build);
- ECHO_FAIL: exit at once with a message on stderr that repeats its value (a server that fails to
  start, saying something it was given);
- ECHO_CALLS_FILE: append each call's tool name there (so a test sees what ran);
- ECHO_DAEMON_FILE: at start, leave a `sleep` daemon behind (forked twice, in a new session, as
  wrappers' helpers are) and append its pid there once it runs.
Run with `--http PORT` for streamable HTTP on 127.0.0.1; stdio otherwise.
"""

from __future__ import annotations

import os
import sys

if os.environ.get("ECHO_FAIL"):
    print(f"echo server: refusing to start (ECHO_FAIL is {os.environ['ECHO_FAIL']})", file=sys.stderr)
    sys.exit(3)

from mcp.server.mcpserver import MCPServer  # noqa: E402

if os.environ.get("ECHO_PID_FILE"):
    with open(os.environ["ECHO_PID_FILE"], "w") as f:
        f.write(str(os.getpid()))
if os.environ.get("ECHO_DAEMON_FILE"):
    middle = os.fork()
    if middle == 0:
        os.setsid()
        if os.fork() == 0:
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            with open(os.environ["ECHO_DAEMON_FILE"], "a") as f:
                f.write(f"{os.getpid()}\n")
            os.execvp("sleep", ["sleep", "300"])
        os._exit(0)
    os.waitpid(middle, 0)
if os.environ.get("ECHO_CWD_FILE"):
    with open(os.environ["ECHO_CWD_FILE"], "w") as f:
        f.write(os.getcwd())

server = MCPServer("echo")


def _called(name: str) -> None:
    path = os.environ.get("ECHO_CALLS_FILE")
    if path:
        with open(path, "a") as f:
            f.write(name + "\n")


if os.environ.get("ECHO_CHANGED"):
    @server.tool()
    def echo(message: str) -> str:
        """Echo a message back."""
        _called("echo")
        return message
else:
    @server.tool()
    def echo(text: str) -> str:
        """Echo the text back."""
        _called("echo")
        return f"echo: {text}"


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    _called("add")
    return a + b


@server.tool()
async def wait(seconds: float) -> str:
    """Sleep for a while (a call a stopped run interrupts)."""
    import anyio

    _called("wait")
    await anyio.sleep(seconds)
    return "waited"


@server.tool()
def secret() -> str:
    """A tool the projects do not expose."""
    _called("secret")
    return "the secret"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()

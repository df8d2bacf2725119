"""`llm-do serve [BUNDLE] [run options]`: a bundle's workers as an MCP server, on stdio (the
default) or streamable HTTP (`--http HOST:PORT`, loopback unless `--allow-remote`).

The server runs until the client disconnects (stdio), or until Ctrl-C or SIGTERM; then processes
its runs started are stopped, and a script's unused turns are reported as after any run.
On stdio nothing but the protocol is written to stdout: the `mcp` package keeps the protocol on a
private copy of the descriptor and points file descriptor 1 at stderr, so a tool that prints
cannot corrupt it; logs and `-v` go to stderr.
"""

from __future__ import annotations

import asyncio
import ipaddress
import signal
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..errors import CliError, ExitCode
from ..lock_options import LockOptions, load_lock, lock_options
from ..options import OptionRule, RunOptions, checked, excludes, needs, run_options_per
from ..params import BUNDLE, DEFAULT_BUNDLE
from ..session import run_session

if TYPE_CHECKING:
    from llm_do.runtime.bundle import LoadedBundle
    from llm_do.runtime.mcp.server import BundleServer

LOOPBACK_NAMES = ("localhost",)


def parse_address(text: str) -> tuple[str, int]:
    """`HOST:PORT` (`[::1]:8000` for IPv6) as a host and a port; a bad one is a usage error."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise CliError(f"--http {text}: expected HOST:PORT, such as 127.0.0.1:8000", ExitCode.USAGE)
    return host.removeprefix("[").removesuffix("]"), int(port)


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name other than localhost: where it points is not ours to trust
        return False


def chosen_workers(bundle: LoadedBundle, workers: str | None, all_workers: bool) -> list[str]:
    """The workers served: the entry worker, those of `--workers a,b`, or all of them."""
    names = bundle.worker_names()
    if all_workers:
        return sorted(names)
    if workers is None:
        entry = bundle.entry.get("worker")
        if entry is None:
            raise CliError("the entry is a Python function, which is not served: name the workers to serve with "
                           "--workers A,B or --all-workers", ExitCode.USAGE)
        return [entry]
    chosen = [w.strip() for w in workers.split(",") if w.strip()]
    if not chosen:
        raise CliError("--workers: name at least one worker", ExitCode.USAGE)
    for name in chosen:
        if name not in names:
            import difflib

            close = difflib.get_close_matches(name, names, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else f" (it has {', '.join(sorted(names))})"
            raise CliError(f"--workers: the bundle has no worker '{name}'{hint}", ExitCode.USAGE)
    return list(dict.fromkeys(chosen))


SERVE_RULES = (
    needs("allow_remote", "http", "--allow-remote goes with --http", one_line=True),
    OptionRule(lambda p: p["http"] is None and p["events_to"] == "-",
         "--events -: on stdio, stdout carries the MCP protocol; write events to a file", one_line=True),
    OptionRule(lambda p: p["approvals_via_client"] and (p["approve_all"] or p["reject_all"]),
         "--approvals-via-client asks the client; --approve-all and --reject-all answer for it", one_line=True),
    excludes("workers", "all_workers", "--workers and --all-workers contradict each other; give one", one_line=True),
)


@click.command()
@click.argument("bundle_file", metavar="[BUNDLE]", default=DEFAULT_BUNDLE, type=BUNDLE)
@click.option("--http", "http", metavar="HOST:PORT", help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio.")
@click.option("--allow-remote", is_flag=True, help="With --http: allow an address other than loopback (no authentication).")
@click.option("--workers", metavar="A,B", help="Serve these workers (default: the entry worker).")
@click.option("--all-workers", is_flag=True, help="Serve every worker of the bundle.")
@click.option("--approvals-via-client", is_flag=True,
              help="Ask the MCP client (elicitation) about calls that need approval.")
@checked(*SERVE_RULES)
@run_options_per("call")
@lock_options
def serve(bundle_file: Path, http: str | None, allow_remote: bool, workers: str | None, all_workers: bool,
          approvals_via_client: bool, opts: RunOptions, lock: LockOptions) -> int:
    """Serve BUNDLE's workers (default ./bundle.lock) as the tools of an MCP server.

    Each tool is named after its worker and takes its input schema; each call is its own run.
    Calls that need approval are denied unless --approve-all, or --approvals-via-client for a
    client that supports elicitation. Exit codes: 0 stopped, 1 failed, 2 usage, 3 refused.
    """
    address = parse_address(http) if http is not None else None
    if address is not None and not is_loopback(address[0]) and not allow_remote:
        raise CliError(f"--http {http}: {address[0]} is not a loopback address, and the server has no authentication; "
                       "pass --allow-remote to serve it anyway", ExitCode.USAGE)
    bundle = load_lock(bundle_file, lock)
    names = chosen_workers(bundle, workers, all_workers)
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise CliError("llm-do serve needs the `mcp` package: pip install 'llm-do[mcp]'", ExitCode.FAILED) from None
    with run_session(bundle, opts, interactive=False, children="always") as session:
        from llm_do.runtime.mcp.server import BundleServer

        served = BundleServer(bundle, session.config, names, "client" if approvals_via_client else "nobody")
        try:
            asyncio.run(_until_stopped(served, address, allow_remote))
        except OSError as exc:
            raise CliError(f"--http {http}: cannot listen there ({exc.strerror or exc})", ExitCode.FAILED) from None
    return ExitCode.OK


async def _until_stopped(served: BundleServer, address: tuple[str, int] | None, allow_remote: bool) -> None:
    """Serve until the transport ends or a signal stops the server; SIGTERM is a normal end,
    Ctrl-C an interrupt (exit 130). Either way `serve` cleans up after."""
    if address is None:
        await _stdio(served)
    else:
        await _http(served, *address, allow_remote)


async def _stdio(served: BundleServer) -> None:
    from mcp.server.stdio import stdio_server

    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    terminated: list[bool] = []

    def terminate() -> None:
        terminated.append(True)
        if task is not None:
            task.cancel()

    loop.add_signal_handler(signal.SIGTERM, terminate)
    server = served.server()
    try:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
    except asyncio.CancelledError:
        if terminated and task is not None:
            task.uncancel()
            return
        raise
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


async def _http(served: BundleServer, host: str, port: int, allow_remote: bool) -> None:
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    class Quiet(uvicorn.Server):
        """Signals are ours: uvicorn's own handling re-raises them after its shutdown, which
        would end the process before `serve` stops what the runs started."""

        @contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    listener = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(128)
    port = listener.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    security = None
    if not allow_remote:  # refuse requests naming another host (DNS rebinding), as for the usual loopback names
        security = TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                             allowed_hosts=[f"{shown}:*", "localhost:*", "127.0.0.1:*", "[::1]:*"],
                                             allowed_origins=[f"http://{shown}:*", "http://localhost:*",
                                                              "http://127.0.0.1:*", "http://[::1]:*"])
    app = served.server().streamable_http_app(host=host, transport_security=security)
    config = uvicorn.Config(app, log_config=None, log_level="warning", access_log=False, lifespan="on",
                            timeout_graceful_shutdown=2)
    server = Quiet(config)
    received: list[int] = []

    def stop(sig: int) -> None:
        received.append(sig)
        server.should_exit = True

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop, sig)
    click.echo(f"llm-do: serving {', '.join(served.workers)} at http://{shown}:{port}/mcp", err=True)
    if allow_remote and not is_loopback(host):
        click.echo("llm-do: warning: this server has no authentication; anyone who reaches the port runs the workers",
                   err=True)
    try:
        await server.serve(sockets=[listener])
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
    if signal.SIGINT in received:
        raise KeyboardInterrupt

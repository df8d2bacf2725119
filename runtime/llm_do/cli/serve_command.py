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
import os
import signal
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from .exec_command import DEFAULT_BUNDLE, bundle_path
from .run_setup import EXIT_REFUSED, EXIT_USAGE, ExecError, prepare_run, run_failure, run_options

LOOPBACK_NAMES = ("localhost",)


def parse_address(text: str) -> tuple[str, int]:
    """`HOST:PORT` (`[::1]:8000` for IPv6) as a host and a port; a bad one is a usage error."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ExecError(f"--http {text}: expected HOST:PORT, such as 127.0.0.1:8000", EXIT_USAGE)
    return host.removeprefix("[").removesuffix("]"), int(port)


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name other than localhost: where it points is not ours to trust
        return False


def chosen_workers(bundle: Any, workers: str | None, all_workers: bool) -> list[str]:
    """The workers served: the entry worker, those of `--workers a,b`, or all of them."""
    names = bundle.worker_names()
    if workers is not None and all_workers:
        raise ExecError("--workers and --all-workers contradict each other; give one", EXIT_USAGE)
    if all_workers:
        return sorted(names)
    if workers is None:
        if bundle.entry.get("worker") is None:
            raise ExecError("the entry is a Python function, which is not served: name the workers to serve with "
                            "--workers A,B or --all-workers", EXIT_USAGE)
        return [bundle.entry["worker"]]
    chosen = [w.strip() for w in workers.split(",") if w.strip()]
    if not chosen:
        raise ExecError("--workers: name at least one worker", EXIT_USAGE)
    for name in chosen:
        if name not in names:
            import difflib

            close = difflib.get_close_matches(name, names, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else f" (it has {', '.join(sorted(names))})"
            raise ExecError(f"--workers: the bundle has no worker '{name}'{hint}", EXIT_USAGE)
    return list(dict.fromkeys(chosen))


@click.command()
@click.argument("bundle", required=False, type=click.Path(path_type=Path))
@click.option("--http", "http", metavar="HOST:PORT", help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio.")
@click.option("--allow-remote", is_flag=True, help="With --http: allow an address other than loopback (no authentication).")
@click.option("--workers", metavar="A,B", help="Serve these workers (default: the entry worker).")
@click.option("--all-workers", is_flag=True, help="Serve every worker of the bundle.")
@click.option("--approvals-via-client", is_flag=True,
              help="Ask the MCP client (elicitation) about calls that need approval.")
@run_options
def serve(bundle: Path | None, http: str | None, allow_remote: bool, workers: str | None, all_workers: bool,
          approvals_via_client: bool, **options: Any) -> int:
    """Serve BUNDLE's workers (default ./bundle.lock) as the tools of an MCP server.

    Each tool is named after its worker and takes its input schema; each call is its own run.
    Calls that need approval are denied unless --approve-all, or --approvals-via-client for a
    client that supports elicitation. Exit codes: 0 stopped, 1 failed, 2 usage, 3 refused.
    """
    from llm_do.runtime.bundle import BundleRefused, load_bundle

    address = parse_address(http) if http is not None else None
    if address is not None and not is_loopback(address[0]) and not allow_remote:
        raise ExecError(f"--http {http}: {address[0]} is not a loopback address, and the server has no authentication; "
                        "pass --allow-remote to serve it anyway", EXIT_USAGE)
    if address is None and allow_remote:
        raise ExecError("--allow-remote goes with --http", EXIT_USAGE)
    if address is None and options["events_to"] == "-":
        raise ExecError("--events -: on stdio, stdout carries the MCP protocol; write events to a file", EXIT_USAGE)
    if approvals_via_client and (options["approve_all"] or options["reject_all"]):
        raise ExecError("--approvals-via-client asks the client; --approve-all and --reject-all answer for it", EXIT_USAGE)
    path = bundle_path(bundle if bundle is not None else Path(DEFAULT_BUNDLE))
    try:
        loaded = load_bundle(path)
    except BundleRefused as exc:
        raise ExecError(str(exc), EXIT_REFUSED) from None
    names = chosen_workers(loaded, workers, all_workers)
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise ExecError("llm-do serve needs the `mcp` package: pip install 'llm-do[mcp]'", 1) from None
    setup = prepare_run(loaded, interactive=False, **options)
    from llm_do.runtime.stale_sources import stale_check

    if note := stale_check(loaded)():  # said once, at the start: the server runs the lock as built
        click.echo(f"llm-do: {note}", err=True)
    from llm_do.runtime.child_processes import children, kill_new_descendants
    from llm_do.runtime.mcp_server import BundleServer

    served = BundleServer(loaded, setup.config, names, "client" if approvals_via_client else "nobody")
    before = children(os.getpid())
    try:
        asyncio.run(_until_stopped(served, address, allow_remote))
    except OSError as exc:
        raise ExecError(f"--http {http}: cannot listen there ({exc.strerror or exc})", 1) from None
    except Exception as exc:
        raise run_failure(exc, options["verbose"]) from None
    finally:
        kill_new_descendants(before)
        setup.close()
    setup.check_script_used()
    return 0


async def _until_stopped(served: Any, address: tuple[str, int] | None, allow_remote: bool) -> None:
    """Serve until the transport ends or a signal stops the server; SIGTERM is a normal end,
    Ctrl-C an interrupt (exit 130). Either way `serve` cleans up after."""
    if address is None:
        await _stdio(served)
    else:
        await _http(served, *address, allow_remote)


async def _stdio(served: Any) -> None:
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


async def _http(served: Any, host: str, port: int, allow_remote: bool) -> None:
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

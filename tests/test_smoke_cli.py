"""The CLI's contract at its edges: version, help, unknown commands, exit codes."""

from __future__ import annotations

from llm_do.bundle.version import VERSION
from tests.support.cli import run_cli


def test_version() -> None:
    result = run_cli("--version")
    assert result.exit_code == 0
    assert result.stdout.strip() == f"llm-do {VERSION}"


def test_help_lists_every_command() -> None:
    result = run_cli("--help")
    assert result.exit_code == 0
    for name in ("build", "lint", "graph", "explain", "init", "migrate", "exec", "run"):
        assert name in result.stdout


def test_unknown_command_is_a_usage_error() -> None:
    result = run_cli("bulid")
    assert result.exit_code == 2
    assert "Traceback" not in result.stderr


def test_the_command_leaves_what_is_alive_to_the_process_end() -> None:
    """`llm-do` (`run`) freezes what is alive when it exits, so the interpreter's end does not
    collect it object by object (bench/durable_bench.py measures it); a handler registered before
    it runs after it, and still runs."""
    import subprocess
    import sys

    code = ("import atexit, gc, sys; atexit.register(lambda: print('frozen', gc.get_freeze_count() > 0)); "
            "from llm_do.cli.main import run; sys.argv = ['llm-do', '--version']; run()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"llm-do {VERSION}", "frozen True"]

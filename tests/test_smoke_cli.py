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

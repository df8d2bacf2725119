"""The CLI's shared pieces: exit codes, the frozen run options, option rules checked before a
command does anything."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from llm_do.cli.errors import CliError, ExitCode
from llm_do.cli.main import cli
from llm_do.cli.options import RunOptions, durable_option


def test_exit_codes_are_the_documented_ones() -> None:
    assert {c.name: int(c) for c in ExitCode} == {"OK": 0, "FAILED": 1, "USAGE": 2, "REFUSED": 3, "SUSPENDED": 4,
                                                  "FLOW_DENIED": 5, "INTERNAL": 70, "INTERRUPTED": 130}
    assert CliError("x", ExitCode.REFUSED).exit_code == 3


def test_run_options_are_frozen() -> None:
    opts = RunOptions(model="test")
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.model = "other"  # type: ignore[misc]
    assert RunOptions(events="-").events_to_stdout and not opts.events_to_stdout


@pytest.mark.parametrize("command", ["exec", "run"])
def test_option_rules_are_checked_before_the_command_reads_anything(command: str, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """`run` does not compile, `exec` does not look for its bundle: the broken rule is what is said."""
    monkeypatch.chdir(tmp_path)  # no project, no bundle here
    result = CliRunner().invoke(cli, [command, "--model", "test", "--script", "s.json"])
    assert result.exit_code == ExitCode.USAGE, result.output
    assert "--model and --script both replace the models; give one" in result.output


@pytest.mark.parametrize("command", ["chat", "serve"])
def test_a_bundle_argument_is_loaded_once_the_options_hold(command: str, tmp_path: Path) -> None:
    """BUNDLE is a parameter type for its path (a missing one is exit 2 as it is parsed); the lock
    is loaded with its lock options (`--as-built`, `--verify`) after the options are checked, since
    loading may compile its project: options that do not go together are exit 2 first, and a
    refused bundle is exit 3."""
    bundle = tmp_path / "bundle.lock"
    bundle.write_text("not a bundle")
    result = CliRunner().invoke(cli, [command, str(bundle), "--model", "test", "--script", "s.json"])
    assert result.exit_code == ExitCode.USAGE, result.output
    result = CliRunner().invoke(cli, [command, str(bundle), "--model", "test"])
    assert result.exit_code == ExitCode.REFUSED, result.output
    result = CliRunner().invoke(cli, [command, str(tmp_path / "absent.lock"), "--model", "test"])
    assert result.exit_code == ExitCode.USAGE, result.output


@click.command()
@click.argument("words", nargs=-1)
@durable_option
def _durable_words(words: tuple[str, ...], durable: str | None) -> None:
    click.echo(repr((words, durable)))


@pytest.mark.parametrize(("args", "parsed"), [
    ([], ((), None)),
    (["--durable"], ((), "")),
    (["BUNDLE", "--durable", "a prompt"], (("BUNDLE", "a prompt"), "")),  # a prompt, not a database
    (["--durable", "BUNDLE", "hi"], (("BUNDLE", "hi"), "")),
    (["--durable", "sqlite:///runs.db", "hi"], (("hi",), "sqlite:///runs.db")),
    (["hi", "--durable", "postgresql://host/db"], (("hi",), "postgresql://host/db")),
    (["--durable=runs.db", "hi"], (("hi",), "runs.db")),  # given with `=`: the option's, checked as a URL
    (["--durable=", "hi"], (("hi",), "")),
    (["--durable", "--", "-x"], (("-x",), "")),
])
def test_durable_takes_the_next_word_only_when_it_is_a_db_url(args: list[str], parsed: tuple[object, ...]) -> None:
    result = CliRunner().invoke(_durable_words, args)
    assert result.exit_code == 0, result.output
    assert result.output == repr(parsed) + "\n"

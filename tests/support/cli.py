"""Write a project from a dict, run the real CLI in-process, read what it printed."""

from __future__ import annotations

import json
import os
import textwrap
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from llm_do.cli.main import main


def write_project(root: Path, files: dict[str, str | dict[str, Any]]) -> Path:
    """Write `files` (relative path -> text, or a dict written as JSON) below `root`; return root.

    Text is dedented, so tests can indent file bodies with the code around them.
    """
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, dict):
            path.write_text(json.dumps(content, indent=2) + "\n", encoding="utf-8")
        else:
            path.write_text(textwrap.dedent(content).lstrip("\n"), encoding="utf-8")
    return root


def worker(front: str = "", body: str = "Do the task.") -> str:
    """A .worker file from its front matter lines and body."""
    front = textwrap.dedent(front).strip("\n")
    return f"---\n{front}\n---\n{body}\n" if front else f"---\n---\n{body}\n"


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


@contextmanager
def cwd(path: Path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def run_cli(*args: str | Path, cwd_to: Path | None = None, input: str | None = None,
            env: dict[str, str | None] | None = None) -> CliResult:
    """Run `llm-do ARGS` through the real entry point (exit codes and all), in this process."""
    runner = CliRunner()
    argv = [str(a) for a in args]
    with runner.isolation(input=input, env=env) as streams:
        out, err = streams[0], streams[1]
        old = os.getcwd()
        if cwd_to is not None:
            os.chdir(cwd_to)
        try:
            try:
                main(argv)
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        finally:
            os.chdir(old)
        return CliResult(code, out.getvalue().decode("utf-8", "replace"), err.getvalue().decode("utf-8", "replace"))


def one_line_error(result: CliResult) -> str:
    """The single stderr line of a failed command (and no traceback)."""
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    return lines[0]


# No terminal: what rich decides from the environment must not leak into the output.
PLAIN_ENV: dict[str, str | None] = {"FORCE_COLOR": None, "NO_COLOR": None, "TTY_COMPATIBLE": None,
                                    "TTY_INTERACTIVE": None, "COLUMNS": "500", "TERM": "dumb"}

"""`llm-do init [DIR]`: a new project that builds and runs offline from its script."""

from __future__ import annotations

import json
from pathlib import Path

import click

from llm_do.compiler.stages.emit import write_atomic

from ..errors import ExitCode, usage_problem

MAIN_WORKER = """\
---
description: Answers the request it is given.
toolsets:
  - filesystem_project_ro
---
You are a helpful assistant working in the project directory of {name}.
Read files with the tools you have when the request is about them, then answer briefly.
"""

SCRIPT = {
    "workers": {
        "main": [
            {"tool_calls": [{"tool": "list_files", "args": {"path": "."}}]},
            {"text": "This project has a main worker; edit main.worker to make it yours."},
        ]
    }
}


def _manifest(name: str) -> dict:
    return {
        "version": 1,
        "name": name,
        "worker_files": ["**/*.worker"],
        "entry": {"worker": "main", "args": {"input": "What is in this project?"}},
        "defaults": {"model": "openai:gpt-4o-mini"},
    }


@click.command()
@click.argument("directory", default=".", type=click.Path(path_type=Path))
def init(directory: Path) -> int:
    """Create a project in DIRECTORY (default: .): project.json, main.worker and script.json."""
    if (directory / "project.json").exists():
        raise usage_problem(f"{directory / 'project.json'} already exists")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        name = directory.resolve().name or "project"
        files = {
            "project.json": json.dumps(_manifest(name), indent=2) + "\n",
            "main.worker": MAIN_WORKER.format(name=name),
            "script.json": json.dumps(SCRIPT, indent=2) + "\n",
        }
        for rel, text in files.items():
            if not (directory / rel).exists():
                write_atomic(directory / rel, text.encode())
    except OSError as exc:
        raise usage_problem(f"cannot create the project: {exc.strerror}") from None
    where = directory.as_posix()
    click.echo(f"created a project in {where}\n"
               f"  llm-do build {where}\n"
               f"  llm-do exec {where}/bundle.lock --script {where}/script.json", err=True)
    return ExitCode.OK

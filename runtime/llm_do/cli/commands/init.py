"""`llm-do init [DIR]`: a new project that builds and runs offline from its script."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from llm_do.compiler.stages.emit import write_atomic
from llm_do.compiler.stages.worker_names import NameClash, name_clash

from ..errors import ExitCode, usage_problem
from ..schema_files import schema_id
from . import init_worker

MAIN_WORKER = """\
---
description: Answers the request it is given.
toolsets:
  - filesystem_project_ro
---
You are a helpful assistant working in the project directory of {name}.
Read files with the tools you have when the request is about them, then answer briefly.
"""

SCRIPT = {  # it reads project.json, not the folder: the folder changes as the project grows (its cassette with it)
    "workers": {
        "main": [
            {"tool_calls": [{"tool": "read_file", "args": {"path": "project.json"}}]},
            {"text": "This project has a main worker; edit main.worker to make it yours."},
        ]
    }
}


CASES = "tests/cases.yaml"
KEPT_SCRIPT = {"workers": {"main": [{"text": "This project kept its main.worker; this script answers in one turn."}]}}
"""The script beside a main.worker init keeps: one text turn, which fits a worker whatever its tools."""
KEPT_NOTE = " (main.worker was there and is kept; script.json answers it with one text turn)"
RECORDED = ("# It replays tests/cassettes/main.json, recorded from script.json. After an edit of main.worker it\n"
            "# is stale: `llm-do test --record` records it again from the script, and\n"
            "# `llm-do run . --record tests/cassettes` records a run on the project's model instead.\n")
SCRIPTED = ("# It plays script.json. To replay real model traffic instead: `llm-do run . --record tests/cassettes`,\n"
            "# then give the case `cassette: cassettes/main.json` in place of `script`.\n")

FIRST_CASE = """\
# The project's cases: `llm-do test` runs them offline (spec/testing.md).
{about}cases:
  - name: answers-the-default-request
    {source}
    approvals: {approvals}
    expect:
      output:
        equals: {output}
{calls}      limits:
        requests: {requests}
"""


def _manifest(name: str) -> dict[str, Any]:
    return {
        "$schema": schema_id("project"),
        "version": 1,
        "name": name,
        "worker_files": ["**/*.worker"],
        "entry": {"worker": "main", "args": {"input": "What is in this project?"}},
        "defaults": {"model": "openai:gpt-4o-mini"},
    }


@click.command()
@click.argument("directory", default=".", type=click.Path(path_type=Path))
@click.option("--worker", "worker", metavar="NAME",
              help="Add a directory worker workers/NAME/ (worker.worker + tools.py with a sample tool).")
def init(directory: Path, worker: str | None) -> int:
    """Create a project in DIRECTORY (default: .): project.json, main.worker, script.json and a first
    case (tests/cases.yaml) that `llm-do test` runs.

    With --worker NAME: a directory worker, in a new project whose main worker calls it, or added
    to the project already in DIRECTORY."""
    if worker is not None:
        return _init_worker(directory, worker)
    if (directory / "project.json").exists():
        raise usage_problem(f"{directory / 'project.json'} already exists")
    kept = (directory / "main.worker").exists()
    written = _write(directory, _project_files(directory, MAIN_WORKER, KEPT_SCRIPT if kept else SCRIPT))
    said = _record_first_case(directory) if CASES in written else ""
    click.echo(f"created a project in {directory.as_posix()}" + (KEPT_NOTE if kept else "") + said + "\n"
               f"  {_command('build', directory)}\n"
               f"  {_command('exec', directory / 'bundle.lock', '--script', directory / 'script.json')}\n"
               f"  {_command('test', directory)}", err=True)
    return ExitCode.OK


def _command(*words: str | Path) -> str:
    """A next step to copy: `llm-do WORDS`, paths shell-quoted (`llm-do build 'my proj'`)."""
    import shlex

    return shlex.join(["llm-do", *(w.as_posix() if isinstance(w, Path) else w for w in words)])


def _project_files(directory: Path, main_worker: str, script: dict[str, Any], approvals: str = "reject_all") -> dict[str, str]:
    name = directory.resolve().name or "project"
    requests = sum(len(turns) for turns in script["workers"].values())
    main = script["workers"]["main"]
    first_calls = main[0].get("tool_calls") or []
    calls = f"      calls:\n        in_order: [{first_calls[0]['tool']}]\n" if first_calls else ""
    case = FIRST_CASE.format(approvals=approvals, requests=requests, output=json.dumps(main[-1]["text"]), calls=calls,
                             about=RECORDED, source="cassette: cassettes/main.json")
    return {
        "project.json": json.dumps(_manifest(name), indent=2) + "\n",
        "main.worker": main_worker.format(name=name),
        "script.json": json.dumps(script, indent=2) + "\n",
        CASES: case,
    }


def _write(directory: Path, files: dict[str, str], *, replace: bool = False) -> list[str]:
    """Write the files that do not exist yet (an existing main.worker or script.json is kept), or
    with `replace` every one; the ones written. A worker file names its JSON Schema for editors
    (the YAML language server's comment, first in its front matter)."""
    written = []
    try:
        for rel, text in files.items():
            path = directory / rel
            if rel.endswith(".worker") and text.startswith("---\n"):
                text = f"---\n# yaml-language-server: $schema={schema_id('worker')}\n{text[4:]}"
            if replace or not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                write_atomic(path, text.encode())
                written.append(rel)
    except OSError as exc:
        raise usage_problem(f"cannot create the project: {exc.strerror}") from None
    return written


def _record_first_case(directory: Path) -> str:
    """Record the first case's cassette by playing script.json, as `llm-do test --record` records a
    cassette made from a script. When that cannot be done (a kept main.worker that does not build,
    or that the script does not fit), the case plays the script instead; what is said then."""
    from llm_do.compiler.pipeline import compile_project

    from ..testing.case_run import CaseRunner
    from ..testing.cases import load_case_file

    result = compile_project(directory)
    problem = "the project does not build yet" if result.bundle is None else None
    if result.bundle is not None:
        root = result.loaded.root
        [case] = load_case_file(root / CASES, root)
        outcome = CaseRunner(root, result.bundle, record=True, warn=False).record_from_script(case, "script.json")
        problem = None if outcome.recorded is not None else (outcome.problems or ["it failed"])[0].splitlines()[0]
    if problem is None:
        return ""
    path = directory / CASES
    text = path.read_text(encoding="utf-8").replace("    cassette: cassettes/main.json\n", "    script: ../script.json\n")
    write_atomic(path, text.replace(RECORDED, SCRIPTED).encode())
    return f"\n  (its first case plays script.json: its cassette could not be recorded, {problem})"


def _init_worker(directory: Path, name: str) -> int:
    """A directory worker: with a new project around it when DIRECTORY holds none yet."""
    if not name.isidentifier():
        raise usage_problem(f"'{name}' cannot name a directory worker: its tools.py is the module workers.{name}.tools, "
                            "so NAME must be a Python identifier (letters, digits, _)")
    if (directory / "workers" / name).exists():
        raise usage_problem(f"{directory / 'workers' / name} already exists")
    where = directory.as_posix()
    existing = (directory / "project.json").exists() or (directory / "main.worker").exists()
    files = init_worker.worker_files(name)
    if existing:
        manifest = _addable(directory, name)
        script = {"workers": {name: init_worker.worker_turns()}}
        files[f"workers/{name}/script.json"] = json.dumps(script, indent=2) + "\n"
        _write(directory, files)
        listed = ""
        if manifest is not None:  # after the worker's files: a listed worker file is always there
            _write(directory, {"project.json": manifest}, replace=True)
            listed = f", and listed workers/{name}/worker.worker in project.json's worker_files"
        click.echo(f"created the directory worker {name} in {where}/workers/{name}{listed}\n"
                   f"  list '{name}' under the toolsets of a worker that should call it; its turns are in "
                   f"{where}/workers/{name}/script.json", err=True)
        return ExitCode.OK
    _refuse_clash(name, name_clash(name, {"main": "main.worker"}, (), ()))
    main_worker = init_worker.MAIN_WORKER.replace("{name}", name).replace("{", "{{").replace("}", "}}")
    written = _write(directory, {**_project_files(directory, main_worker, init_worker.script(name), "approve_all"), **files})
    said = _record_first_case(directory) if CASES in written else ""
    click.echo(f"created a project with the directory worker {name} in {where}{said}\n"
               f"  {_command('build', directory)}\n"
               f"  {_command('exec', directory / 'bundle.lock', '--script', directory / 'script.json', '--approve-all')}",
               err=True)
    return ExitCode.OK


def _addable(directory: Path, name: str) -> str | None:
    """Refuse a worker the project in `directory` could not have, by the compiler's own checks (a
    name a worker or a toolset has: N001, N002); when no `worker_files` entry covers the new
    worker's file, project.json's text with it listed, so that the project sees it. The project's
    Python is read, not run (as `lint --no-import`)."""
    from llm_do.compiler.syntax.json_positions import json_positions

    from ._compile import compile_or_exit

    result = compile_or_exit(directory, import_python=False, emit_bundle=False)
    project = result.resolved
    if project is None:
        raise usage_problem(f"cannot add a worker to {directory.as_posix()}: its project does not load "
                            f"(`{_command('lint', directory)}` says why)")
    workers = {n: w.parsed.file for n, w in project.workers.items()}
    _refuse_clash(name, name_clash(name, workers, project.python_toolsets, project.manifest.mcp_servers))
    worker_file = f"workers/{name}/worker.worker"
    if project.loaded.collects(worker_file):
        return None
    # The file as it is on disk (a byte-order mark, CRLF line ends), edited in one place.
    text = (project.loaded.root / project.loaded.manifest_file).read_bytes().decode("utf-8")
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    where = json_positions(text[len(bom):]).values.get(("worker_files",))
    if where is None:
        raise usage_problem(f"cannot add the worker '{name}': no worker_files entry of {project.loaded.manifest_file} "
                            f"would cover {worker_file}; list it in worker_files, then run this again")
    lines = text[len(bom):].split("\n")
    start = sum(len(line) + 1 for line in lines[: where.line - 1]) + where.column - 1
    return bom + init_worker.listing_worker_file(text[len(bom):], start, worker_file)


def _refuse_clash(name: str, clash: NameClash | None) -> None:
    if clash is not None:
        raise usage_problem(f"cannot add the worker '{name}': {clash.message} ({clash.code.code}); choose another name")


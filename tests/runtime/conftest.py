"""Fixtures for the runtime's tests: small projects built into bundles, scripts, events.

Building a project with Python files starts an introspection subprocess (about a second), so the
two Python projects here are built once per session into a template directory, and each test
that runs one gets its own copy (the bundle's `root` is relative, so a copied project runs as
built). Projects of .worker files only build in-process in milliseconds: tests build their own.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import CliResult, run_cli, worker, write_project

Files = dict[str, "str | dict[str, Any]"]


def build_project(root: Path, files: Files) -> Path:
    """Write `files` below `root`, run `llm-do build` on it; return the path of its bundle.lock."""
    write_project(root, files)
    result = run_cli("build", root)
    assert result.exit_code == 0, f"build failed:\n{result.stdout}\n{result.stderr}"
    return root / "bundle.lock"


def copy_project(bundle: Path, dest: Path) -> Path:
    """Copy the built project holding `bundle` to `dest`; return the copy's bundle.lock."""
    shutil.copytree(bundle.parent, dest)
    return dest / bundle.name


def read_events(text_or_path: str | Path) -> list[dict[str, Any]]:
    """The events of a `--events` file (or of stdout with `--events -`), one dict per JSON line."""
    text = text_or_path.read_text(encoding="utf-8") if isinstance(text_or_path, Path) else text_or_path
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def of_kind(events: list[dict[str, Any]], kind: str, **match: Any) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == kind and all(e.get(k) == v for k, v in match.items())]


def one_line_error(result: CliResult) -> str:
    """The single stderr line of a failed command (and no traceback)."""
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    return lines[0]


def inputs_file(path: Path, lines: list[Any]) -> Path:
    """A batch's INPUTS.jsonl: one JSON value per line."""
    path.write_text("".join(json.dumps(v) + "\n" for v in lines), encoding="utf-8")
    return path


def results_of(path: Path) -> list[dict[str, Any]]:
    """A batch's RESULTS.jsonl without its header line (checked to be there)."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert "llm_do_batch" in lines[0]
    return lines[1:]


@pytest.fixture
def build(tmp_path: Path) -> Callable[..., Path]:
    """`build(files, name="proj") -> Path of bundle.lock`, in this test's tmp_path."""

    def _build(files: Files, name: str = "proj") -> Path:
        return build_project(tmp_path / name, files)

    return _build


@pytest.fixture
def script(tmp_path: Path) -> Callable[..., Path]:
    """`script({"workers": ...}, name="s.json") -> Path`: a script file (JSON, or YAML text)."""
    counter = iter(range(1000))

    def _script(content: dict[str, Any] | str, name: str | None = None) -> Path:
        name = name or f"script{next(counter)}.json"
        path = tmp_path / "scripts" / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
        return path

    return _script


@pytest.fixture(autouse=True)
def _forget_user_modules(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A run imports the project's Python (`tools`, `schemas`) into this process: forget those
    modules and their sys.path entries after each test, so the next project imports its own."""
    base = str(tmp_path_factory.getbasetemp())

    def forget() -> None:
        for name, module in list(sys.modules.items()):
            if (getattr(module, "__file__", None) or "").startswith(base):
                del sys.modules[name]

    forget()
    path_before = list(sys.path)
    yield
    forget()
    sys.path[:] = path_before


# --- the shared Python projects -------------------------------------------------------------

SCHEMAS_PY = '''
    from pydantic import BaseModel

    from llm_do.runtime import WorkerArgs


    class Topic(WorkerArgs):
        text: str

        def prompt_messages(self):
            return [f"Topic: {self.text}"]


    class Verdict(BaseModel):
        score: int
        reason: str
'''

TOOLS_PY = '''
    import asyncio

    from pydantic_ai import RunContext

    from llm_do.runtime import call_worker_async

    import promptfmt


    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b


    def boom() -> str:
        """Always fails."""
        raise ValueError("kaboom")


    async def nap(seconds: float) -> str:
        """Sleep a while."""
        await asyncio.sleep(seconds)
        return "rested"


    def echo_prompt(ctx: RunContext) -> str:
        """The prompt this worker call was given, attachments as <media type, size>."""
        prompt = ctx.prompt
        parts = [prompt] if isinstance(prompt, str) else list(prompt or [])
        return promptfmt.SEPARATOR.join(
            p if isinstance(p, str) else f"<{p.media_type} {len(p.data)} bytes>" for p in parts
        )


    async def ask_judge(ctx: RunContext, text: str) -> str:
        """Ask the judge through ctx.deps.call_worker."""
        verdict = await ctx.deps.call_worker("judge", text=text)
        return f"call_worker: {verdict.score} {verdict.reason}"


    async def ask_judge_agent(ctx: RunContext, text: str) -> str:
        """Ask the judge through the .agent-era ctx.deps.call_agent."""
        verdict = await ctx.deps.call_agent("judge", {"text": text})
        return f"call_agent: {verdict.score} {verdict.reason}"


    async def ask_judge_api(ctx: RunContext, text: str) -> str:
        """Ask the judge through llm_do.runtime.call_worker_async."""
        verdict = await call_worker_async(ctx, "judge", text=text)
        return f"call_worker_async: {verdict.score} {verdict.reason}"


    async def ask_judge_handle(ctx: RunContext, text: str) -> str:
        """Ask the judge through a handle bound to this call."""
        verdict = await ctx.deps.worker("judge").call_async(text=text)
        return f"handle: {verdict.score} {verdict.reason}"


    TOOLS = {
        "add": add,
        "boom": boom,
        "nap": nap,
        "echo_prompt": echo_prompt,
        "ask_judge": ask_judge,
        "ask_judge_agent": ask_judge_agent,
        "ask_judge_api": ask_judge_api,
        "ask_judge_handle": ask_judge_handle,
    }
'''

PYTHON_PROJECT: Files = {
    "project.json": {
        "version": 1,
        "worker_files": ["*.worker"],
        "python_files": ["tools.py", "schemas.py"],
        "entry": {"worker": "main", "args": {"input": "from entry.args"}},
    },
    "schemas.py": SCHEMAS_PY,
    # Imported by tools.py but not listed: the build records it, so editing it makes the lock stale.
    "promptfmt.py": 'SEPARATOR = " | "\n',
    "tools.py": TOOLS_PY,
    "main.worker": worker(
        """
        tools: [add, boom, nap, echo_prompt, ask_judge, ask_judge_agent, ask_judge_api, ask_judge_handle]
        toolsets: [judge]
        approvals:
          - allow boom
          - allow nap
          - allow echo_prompt
          - allow ask_judge*
        """,
        "Use your tools.",
    ),
    "judge.worker": worker(
        """
        description: Scores a topic.
        schema_in_ref: schemas.py:Topic
        schema_out_ref: schemas.py:Verdict
        """,
        "Score the topic.",
    ),
}

SCHEMA_PROJECT: Files = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "judge"}},
    "schemas.py": SCHEMAS_PY,
    "judge.worker": PYTHON_PROJECT["judge.worker"],
    "boss.worker": worker("toolsets: [judge]", "Delegate to the judge."),
}


@pytest.fixture(scope="session")
def _python_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_project(tmp_path_factory.mktemp("template") / "pyproject", PYTHON_PROJECT)


@pytest.fixture(scope="session")
def _schema_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_project(tmp_path_factory.mktemp("template") / "schemaproject", SCHEMA_PROJECT)


@pytest.fixture
def py_bundle(_python_template: Path, tmp_path: Path) -> Path:
    """This test's copy of the Python project: `main` (Python tools, calls `judge`) and `judge`
    (schema_in Topic(text), schema_out Verdict(score, reason)); entry.args {"input": "from entry.args"}.
    Tools: add (asked), boom (raises), nap(seconds), echo_prompt (returns the call's prompt),
    ask_judge / ask_judge_agent / ask_judge_api / ask_judge_handle (delegate to judge from Python)."""
    return copy_project(_python_template, tmp_path / "pyproject")


@pytest.fixture
def schema_bundle(_schema_template: Path, tmp_path: Path) -> Path:
    """This test's copy of a project whose entry `judge` takes Topic(text) and returns Verdict;
    `boss` (default input) may call `judge`."""
    return copy_project(_schema_template, tmp_path / "schemaproject")

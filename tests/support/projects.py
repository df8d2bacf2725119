"""Projects the tests build: written from a dict, built by the real `llm-do build`, copied.

Building a project with Python files starts an introspection subprocess (about a second), so the
tests that share a Python project build it once into a template and run a copy (the bundle's
`root` is relative, so a copied project runs as built).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.cli import run_cli, worker, write_project

Files = dict[str, "str | dict[str, Any]"]

PUBLISHING_PROJECT: Files = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"},
                     "flows": {"paths": {"public": "published"}}},
    "main.worker": worker("toolsets: [filesystem_project]\napprovals: [allow write_file]", "Talk."),
    "secret.txt": "the launch code is 0000\n",
}
"""A project whose worker reads private files and publishes: `public/` is published, so `write_file`
of it is an egress, and `read_file` of `secret.txt` a private read (with the run's untrusted input,
the frame is armed: the next publish is asked)."""


def build_project(root: Path, files: Files) -> Path:
    """Write `files` below `root`, run `llm-do build` on it; return the path of its bundle.lock."""
    write_project(root, files)
    result = run_cli("build", root)
    assert result.exit_code == 0, f"build failed:\n{result.stdout}\n{result.stderr}"
    return root / "bundle.lock"


def resealed(lock: bytes, patch: dict[str, Any]) -> bytes:
    """A lock changed as a hand (or a model with write access) would: `patch` merged into it
    (`{"workers": {"main": {"tools": {"shell": {"approval": "allow"}}}}}`), every node hash and the
    digest recomputed, the sources and their hashes left as they are."""
    import json

    from llm_do.bundle.canonical import node_hash, seal

    def merged(into: Any, change: Any) -> Any:
        if not isinstance(into, dict) or not isinstance(change, dict):
            return change
        return {**into, **{k: merged(into.get(k), v) for k, v in change.items()}}

    doc = merged(json.loads(lock), patch)
    for section in ("workers", "toolsets"):
        for node in doc[section].values():
            node["hash"] = node_hash({k: v for k, v in node.items() if k != "hash"})
    doc.pop("digest")
    return seal(doc)


def copy_project(bundle: Path, dest: Path) -> Path:
    """Copy the built project holding `bundle` to `dest`; return the copy's bundle.lock. The copy's
    lock is checked (`build --check`), as after any checkout, so its build record answers the runs
    that ask whether it is the build of its sources (a run through the Python API would otherwise
    compile in a child process to find out). A project that builds only in the environment its
    test sets up later (`PYTHONPATH=src`, an MCP server's variables) fails this check here: its
    runs compile it instead."""
    shutil.copytree(bundle.parent, dest)
    run_cli("build", "--check", "-q", dest)
    return dest / bundle.name


# --- the runtime's two Python projects (tests/runtime/conftest.py: py_bundle, schema_bundle) ----

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


# --- `llm-do graph` and `capabilities` (tests/compiler/test_graph*.py) ---------------------------

# main -> analyst (plain call), main -> reviewer (asked by main's rule), reviewer <-> critic
# (declared recursion), filesystem_project (write_file is asked: gated), shell_readonly (allowed).
GRAPH_PROJECT: Files = {
    "project.json": {
        "version": 1,
        "worker_files": ["*.worker"],
        "entry": {"worker": "main", "args": {"input": "review the repo"}},
    },
    "main.worker": worker(
        """
        model: test
        toolsets:
          - filesystem_project
          - shell_readonly
          - analyst
          - reviewer
        approvals:
          - ask reviewer
        """,
        "Coordinate.",
    ),
    "analyst.worker": worker("toolsets: [filesystem_project_ro]", "Analyze."),
    "reviewer.worker": worker("recursive: true\ntoolsets: [critic]", "Review."),
    "critic.worker": worker("recursive: true\ntoolsets: [reviewer]", "Criticize."),
}


# --- a project of the `.agent` era (tests/compiler/test_legacy.py, test_migrate.py) ----------------

# As in the real repository of that era (examples/recursive_summarizer).
LEGACY_PROJECT: Files = {
    "project.json": {
        "version": 1,
        "runtime": {"approval_mode": "approve_all", "max_depth": 10},
        "entry": {"agent": "main", "args": {"input": "sample_input.txt"}},
        "agent_files": ["main.agent", "summarizer.agent"],
        "python_files": ["schemas.py"],
        # web_search is a server-side tool no gate can ask before: the flow it closes is R004 unless accepted
        "flows": {"accept": [{"worker": "main", "private": ["fs.read:project/**"], "untrusted": ["*"],
                              "egress": ["provider:web_search"], "reason": "the project's files are public"}]},
    },
    "main.agent": """
        ---
        name: main
        description: Summarize a file by delegating ranges to the summarizer
        # the summarizer does the real work
        toolsets:
          - filesystem_project
          - summarizer
        server_side_tools:
          - tool_type: web_search
            max_uses: 3
        ---
        Read the file named in the input and ask the summarizer for each part.
        """,
    "summarizer.agent": """
        ---
        name: summarizer
        description: Recursively summarize a file range with offsets
        input_model_ref: schemas.py:SummarizerInput
        toolsets:
          - filesystem_project
          - summarizer
        ---
        Summarize the given range; split it and call yourself when it is long.
        """,
    "schemas.py": """
        from llm_do.runtime import AgentArgs, PromptContent


        class SummarizerInput(AgentArgs):
            path: str
            start: int = 0
            end: int | None = None

            def prompt_messages(self) -> list[PromptContent]:
                return [f"Summarize {self.path} from {self.start} to {self.end}"]
        """,
    "sample_input.txt": "Lorem ipsum.\n",
}


@contextmanager
def forgetting_user_modules(base: str) -> Iterator[None]:
    """A run imports the project's Python (`tools`, `schemas`) into this process: forget the modules
    loaded from under `base` (the session's temporary folders) and restore sys.path, before and
    after, so the next project imports its own."""
    def forget() -> None:
        for name, module in list(sys.modules.items()):
            if (getattr(module, "__file__", None) or "").startswith(base):
                del sys.modules[name]

    forget()
    path_before = list(sys.path)
    try:
        yield
    finally:
        forget()
        sys.path[:] = path_before


def lock_rebuild_attempts(monkeypatch: Any) -> list[bool]:
    """Each attempt of `build` to write the lock from the last one (`build.local_edits`),
    in order: whether it could."""
    from llm_do.compiler.build import local_edits

    tried: list[bool] = []
    real = local_edits._rebuilt

    def spy(*args: Any) -> local_edits.Rebuilt | None:
        answer = real(*args)
        tried.append(answer is not None)
        return answer

    monkeypatch.setattr(local_edits, "_rebuilt", spy)
    return tried


def compile_calls(monkeypatch: Any, module: Any) -> list[Path]:
    """The projects `module` compiles from now on (through its `compile_project`; the compiler still runs)."""
    seen: list[Path] = []
    real = module.compile_project

    def counted(path: Path, **kwargs: Any) -> Any:
        seen.append(path)
        return real(path, **kwargs)

    monkeypatch.setattr(module, "compile_project", counted)
    return seen


def clean_build(root: Path, monkeypatch: Any) -> tuple[bytes | None, list[dict[str, Any]]]:
    """A clean build's bytes and diagnostics of the project at `root`: no pack read or written."""
    from llm_do.compiler import pipeline

    with monkeypatch.context() as patch:
        patch.setattr(pipeline, "user_packs", lambda: None)
        result = pipeline.compile_project(root, lock_dir=root)
    return result.bundle, [d.as_json() for d in result.diagnostics]


def assert_built_as_clean(root: Path, monkeypatch: Any, lock: str = "bundle.lock") -> None:
    """The lock is a clean build's bytes, and its record (what the next build or lint says) holds
    a clean build's diagnostics."""
    from llm_do.provenance.build_record import build_records, recall

    bundle, diagnostics = clean_build(root, monkeypatch)
    assert (root / lock).read_bytes() == bundle
    records = build_records()
    assert records is not None
    body = recall(records, root, root / lock)
    assert body is not None and body["diagnostics"] == diagnostics
    assert run_cli("build", "--check", root).exit_code == 0

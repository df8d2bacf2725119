"""Every approver is asked the same question (red team H1, newcomer F4): a host's callback
(`describe()`), the `approval_requested` event (on_event and `Runtime.events()`) and the terminal
all get one text, with the path as the rule sees it, whole, and the toolset's root beside it.
(MCP elicitation: tests/runtime/test_serve.py; durable records: tests/runtime/test_durable.py.)"""

from __future__ import annotations

import asyncio
import io
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import TextPart, ToolCallPart

from llm_do.runtime import ApprovalDecision, Runtime, RuntimeConfig, run_worker
from llm_do.runtime.approvals.decisions import ApprovalRequest
from llm_do.runtime.events import ApprovalRequested
from tests.support.approvals import turns
from tests.support.cli import worker

CLIMB = "docs/" + "release-notes/" * 8 + "../" * 9 + "tools.py"
"""The red team's path: it starts in docs/ and climbs back to the project's Python."""
CONTENT = 'import os\nos.system("echo pwned > PWNED")\n'

CASES = {
    "climbing path (H1)": ("toolsets: [filesystem_project]", CLIMB, """\
worker 'main' (depth 1) wants to call write_file (toolset filesystem_project)
  path: tools.py (in the project)
  content: 42 bytes, 2 lines
    | import os
    | os.system("echo pwned > PWNED")"""),
    "sub-directory root (F4)": ("toolsets:\n  - filesystem_project:\n      path: docs", "./secrets.md", """\
worker 'main' (depth 1) wants to call write_file (toolset filesystem_project)
  path: secrets.md (in docs/)
  content: 42 bytes, 2 lines
    | import os
    | os.system("echo pwned > PWNED")"""),
}


def project(front: str) -> dict[str, Any]:
    return {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
        "main.worker": worker(front, "Write notes."),
        "docs/readme.md": "notes\n",
    }


def write(path: str) -> Any:
    return turns([ToolCallPart("write_file", {"path": path, "content": CONTENT})], [TextPart("done")])


@pytest.fixture(params=list(CASES), ids=list(CASES))
def case(request: pytest.FixtureRequest, build) -> tuple[Path, str, str]:
    front, path, question = CASES[request.param]
    return build(project(front)), path, question


def test_a_callback_and_the_events_get_the_question(case: tuple[Path, str, str]) -> None:
    bundle, path, question = case
    asked: list[ApprovalRequest] = []
    events: list[Any] = []

    def callback(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision(False)

    config = RuntimeConfig(model=write(path), approval_mode="prompt", approval_callback=callback, on_event=events.append)
    assert run_worker(bundle, "go", config=config).output == "done"
    [request] = asked
    [event] = [e for e in events if isinstance(e, ApprovalRequested)]
    assert request.describe() == event.question == question
    assert event.to_dict()["question"] == question and event.normalized_args == request.normalized_args
    assert not (bundle.parent / "tools.py").exists() and not (bundle.parent / "docs" / "secrets.md").exists()


def test_a_host_reading_the_event_stream_gets_the_question(case: tuple[Path, str, str]) -> None:
    bundle, path, question = case
    runtime = Runtime.load(bundle, RuntimeConfig(model=write(path), approval_mode="prompt"))
    asked: list[str] = []

    async def host() -> None:
        async for event in runtime.events("go"):
            if isinstance(event, ApprovalRequested):
                asked.append(event.question)
                event.respond(ApprovalDecision(False))

    asyncio.run(host())
    assert asked == [question]


def test_the_terminal_asks_the_question(case: tuple[Path, str, str], monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    bundle, path, question = case
    monkeypatch.setattr(sys, "stdin", io.StringIO("n\n"))
    config = RuntimeConfig(model=write(path), approval_mode="prompt", interactive=True)
    assert run_worker(bundle, "go", config=config).output == "done"
    assert f"\nllm-do: approval needed: {question}\n[y] approve once" in capsys.readouterr().err


def test_paths_are_never_cut_and_content_is_summarized_alike() -> None:
    """A long path is shown whole; a long content as its size and first lines, all of it with `full`."""
    long_path = "a/" * 150 + "x.md"
    content = "".join(f"line {i}\n" for i in range(10))
    request = ApprovalRequest("main", 1, "write_file", {"path": long_path, "content": content}, "tools.TOOLS")
    text = request.describe()
    assert f"  path: {long_path}\n" in text and "  content: 70 bytes, 10 lines\n" in text
    assert text.endswith("    | line 5\n    | … 4 more lines") and request.leaves_out()
    assert request.describe(full=True).endswith("    | line 9") and "more lines" not in request.describe(full=True)

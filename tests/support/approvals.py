"""Approval projects, scripts and models the approval tests share (tests/runtime/test_approvals.py,
test_approval_rules.py, test_revise.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic_ai import ModelResponse, ToolCallPart
from pydantic_ai.messages import ToolReturnPart
from pydantic_ai.models.function import FunctionModel

from tests.support.cli import run_cli, worker


def project(main_front: str = "toolsets: [filesystem_project, helper]", runtime: dict[str, Any] | None = None,
            helper_front: str = "toolsets: [filesystem_project]") -> dict[str, Any]:
    manifest: dict[str, Any] = {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}}
    if runtime:
        manifest["runtime"] = runtime
    return {
        "project.json": manifest,
        "main.worker": worker(main_front, "Main."),
        "helper.worker": worker(helper_front, "Helper."),
    }


def write_call(path: str = "out.txt", content: str = "hi") -> dict[str, Any]:
    return {"tool_calls": [{"tool": "write_file", "args": {"path": path, "content": content}}]}


WRITE = {"workers": {"main": [write_call(), {"text": "done"}]}}
NESTED_WRITE = {
    "workers": {
        "main": [{"tool_calls": [{"tool": "helper", "args": {"input": "write it"}}]}, {"text": "done"}],
        "helper": [write_call(), {"text": "helper done"}],
    }
}


def exec_(bundle: Path, s: Path, *flags: str, events: Path | None = None):
    args = ["exec", bundle, "go", "--script", s, *flags]
    if events is not None:
        args += ["--events", events]
    return run_cli(*args)


def turns(*responses: list[Any], seen: list[list[Any]] | None = None) -> FunctionModel:
    """A FunctionModel answering with `responses` in order (each a list of parts); it records the
    messages of every request in `seen`."""
    queue = list(responses)

    def respond(messages: list[Any], info: Any) -> ModelResponse:
        if seen is not None:
            seen.append(list(messages))
        return ModelResponse(parts=queue.pop(0))

    return FunctionModel(respond)


def write_part(path: str, content: str = "x") -> ToolCallPart:
    return ToolCallPart("write_file", {"path": path, "content": content})


def tool_returns(messages: list[Any], tool: str) -> list[ToolReturnPart]:
    return [p for m in messages for p in getattr(m, "parts", []) if isinstance(p, ToolReturnPart) and p.tool_name == tool]

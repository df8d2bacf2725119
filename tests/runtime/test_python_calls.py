"""A Python tool may call only the workers its worker declares (`calls:`, its toolsets' workers),
whichever API the call goes through; an `.agent` worker is warned about instead (red team L8)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from llm_do.runtime import RuntimeConfig, run_worker
from tests.support.cli import worker
from tests.support.projects import build_project

pytestmark = pytest.mark.process

TOOLS = """
from pydantic_ai import RunContext

from llm_do.runtime import CallContext, CallRefused, call_worker_async


async def relay(ctx: RunContext, name: str) -> str:
    \"\"\"Calls worker `name` through every API; says what each returned.\"\"\"
    out = []
    for call in (lambda: ctx.deps.call_worker(name, "x"),
                 lambda: ctx.deps.runtime.call_worker_async(name, "x"),
                 lambda: CallContext.call_worker(ctx.deps, name, "x"),
                 lambda: call_worker_async(ctx, name, "x"),
                 lambda: ctx.deps.worker(name).call_async("x"),
                 # saying it is the model's call changes nothing off the bundle's edges
                 lambda: ctx.deps.runtime.call_worker_async(name, "x", parent=ctx.deps.frame, from_model=True),
                 lambda: ctx.deps.runtime.call_worker_async(name, "x", from_model=True)):
        try:
            out.append(await call())
        except CallRefused as exc:
            out.append(str(exc))
    return " | ".join(out)


def relay_sync(ctx: RunContext, name: str) -> str:
    \"\"\"A sync tool (run in a thread) calling through a handle.\"\"\"
    try:
        return ctx.deps.worker(name)("x")
    except CallRefused as exc:
        return str(exc)


TOOLS = [relay, relay_sync]
"""

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker", "*.agent"], "python_files": ["tools.py"],
                     "entry": {"worker": "main"}},
    "tools.py": TOOLS,
    "main.worker": worker("tools: [relay, relay_sync]\ntoolsets: [aide]\ncalls: [helper, old]"),
    "helper.worker": worker("description: Helps."),
    "aide.worker": worker("description: Aids."),
    "ops.worker": worker("description: Operates."),
    "old.agent": worker("tools: [relay]"),
}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_project(tmp_path_factory.mktemp("python_calls"), PROJECT)


def _run(bundle: Path, caller: str, tool: str, callee: str) -> str:
    """Run `caller`, whose model calls `tool(name=callee)` once; what the tool returned."""
    returned: list[str] = []

    def model_for(name: str) -> FunctionModel:
        def respond(messages: list[Any], info: AgentInfo) -> ModelResponse:
            if name != caller:
                return ModelResponse(parts=[TextPart(f"{name} ran")])
            results = [p.content for m in messages for p in m.parts if getattr(p, "tool_name", None) == tool
                       and p.part_kind == "tool-return"]
            if results:
                returned.extend(results)
                return ModelResponse(parts=[TextPart("done")])
            return ModelResponse(parts=[ToolCallPart(tool, {"name": callee})])

        return FunctionModel(respond, model_name=name)

    assert run_worker(bundle, "go", worker=caller, config=RuntimeConfig(model_for=model_for, approval_mode="approve_all")).output == "done"
    [result] = returned
    return result


def test_a_declared_worker_and_a_toolsets_worker_may_be_called_through_every_api(bundle: Path) -> None:
    assert _run(bundle, "main", "relay", "helper") == " | ".join(["helper ran"] * 7)
    assert _run(bundle, "main", "relay", "aide") == " | ".join(["aide ran"] * 7)


def test_an_undeclared_worker_is_refused_through_every_api(bundle: Path) -> None:
    refused = ("worker 'main' called worker 'ops' from Python, which it does not declare; add 'ops' to `calls:` "
               "in the front matter of main.worker (it was not called)")
    assert _run(bundle, "main", "relay", "ops") == " | ".join([refused] * 7)


def test_a_sync_tool_is_refused_too(bundle: Path) -> None:
    assert _run(bundle, "main", "relay_sync", "ops").startswith("worker 'main' called worker 'ops' from Python")
    assert _run(bundle, "main", "relay_sync", "helper") == "helper ran"


def test_an_agent_era_worker_runs_the_call_with_one_warning(bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(bundle, "old", "relay", "ops") == " | ".join(["ops ran"] * 7)
    assert capsys.readouterr().err == (
        "llm-do: warning: worker 'old' called worker 'ops' from Python, which it does not declare; add 'ops' to "
        "`calls:` in the front matter of old.agent; `.agent` files run such calls for now, a `.worker` file refuses "
        "them (`llm-do migrate`, then add `calls:`)\n")


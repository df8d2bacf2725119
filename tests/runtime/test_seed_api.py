"""The seed API (the runtime API reference llm-do was designed from) run as its users write it:
one test per call of that reference, imported from `llm_do` itself, offline on FunctionModels."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.messages import ToolReturnPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from llm_do import (
    ApprovalController,
    ApprovalDecision,
    WorkerCreationDefaults,
    WorkerSpec,
    approve_all_callback,
    create_worker,
    run_worker,
    run_worker_async,
    strict_mode_callback,
)
from llm_do.runtime import CallRefused, DefinitionProblem, InputProblem
from tests.support.cli import worker
from tests.support.projects import Files, build_project, copy_project

pytestmark = pytest.mark.process

TOOLS_PY = '''
    from pydantic_ai import RunContext

    from llm_do import call_worker, call_worker_async


    def publish(channel: str) -> str:
        return f"published to {channel}"


    async def delegate_async(ctx: RunContext, task: str) -> str:
        registry = ctx.deps.runtime
        context = ctx
        result = await call_worker_async(
            registry=registry,
            worker="helper",
            input_data={"input": task},
            caller_context=context,
            attachments=["notes.txt"],
        )
        return f"async: {result}"


    def delegate_sync(ctx: RunContext, name: str, task: str) -> str:
        result = call_worker(registry=ctx.deps.runtime, worker=name, input_data=task, caller_context=ctx)
        return f"sync: {result}"


    TOOLS = [publish, delegate_async, delegate_sync]
'''

SEED_PROJECT: Files = {
    # No model anywhere: cli_model (the host's fallback) is what the workers run on.
    "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"],
                     "entry": {"worker": "main"}},
    "tools.py": TOOLS_PY,
    "notes.txt": "NOTES-CONTENT\n",
    "main.worker": worker("""
        tools: [publish, delegate_async, delegate_sync]
        toolsets: [helper]
        approvals:
          - allow delegate_*
        """, "Use your tools."),
    "helper.worker": worker("", "Help."),
    "other.worker": worker("", "Not declared by main."),
}


@pytest.fixture(scope="module")
def _seed_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_project(tmp_path_factory.mktemp("seed") / "proj", SEED_PROJECT)


@pytest.fixture
def registry(_seed_template: Path, tmp_path: Path) -> Path:
    """The project directory: where the seed passes a WorkerRegistry, llm-do takes a bundle."""
    return copy_project(_seed_template, tmp_path / "proj").parent


@dataclass
class Scripted:
    """One FunctionModel for every worker: `main` (the worker with tools) plays `turns`; a worker
    without tools (`helper`) answers with what its prompt held."""

    turns: list[list[Any]]
    prompts: list[list[Any]] = field(default_factory=list)

    def respond(self, messages: list[Any], info: AgentInfo) -> ModelResponse:
        if not info.function_tools:
            prompt = [p.content for m in messages for p in getattr(m, "parts", []) if isinstance(p, UserPromptPart)]
            self.prompts.append(prompt)
            text = prompt[0] if isinstance(prompt[0], str) else prompt[0][0]  # a list when there are attachments
            return ModelResponse(parts=[TextPart(f"helped with {text!r}")])
        return ModelResponse(parts=self.turns.pop(0))

    @property
    def model(self) -> FunctionModel:
        return FunctionModel(self.respond)


def returned(messages: list[Any], tool: str) -> list[str]:
    return [p.model_response_str() for m in messages for p in getattr(m, "parts", [])
            if isinstance(p, ToolReturnPart) and p.tool_name == tool]


def test_run_worker_as_the_seed_writes_it(registry: Path) -> None:
    scripted = Scripted([[ToolCallPart("publish", {"channel": "general"})],
                         [ToolCallPart("publish", {"channel": "general"})], [TextPart("done")]])
    asked: list[tuple[str, dict[str, Any], str]] = []
    finished: list[tuple[str, int]] = []

    def callback(tool_name: str, payload: dict, reason: str) -> ApprovalDecision:
        asked.append((tool_name, payload, reason))
        return ApprovalDecision(approved=True, approve_for_session=True)

    def on_message(worker: str, depth: int, messages: list[Any]) -> None:
        finished.append((worker, depth))

    result = run_worker(
        registry=registry,
        worker="main",
        input_data={"input": "ship it"},
        attachments=None,
        cli_model=scripted.model,
        approval_callback=callback,
        message_callback=on_message,
    )
    assert result.output == "done"
    assert returned(result.messages, "publish") == ["published to general"] * 2
    assert [(tool, payload) for tool, payload, _ in asked] == [("publish", {"channel": "general"})]  # then remembered
    assert "publish" in asked[0][2]  # the reason: the question every approver gets
    assert finished == [("main", 1)]


def test_run_worker_async_as_the_seed_writes_it(registry: Path) -> None:
    scripted = Scripted([[TextPart("async done")]])
    result = asyncio.run(run_worker_async(
        registry=registry,
        worker="main",
        input_data={"input": "hello"},
        cli_model=scripted.model,
    ))
    assert result.output == "async done"


@pytest.mark.parametrize(("callback", "outcome"), [
    (approve_all_callback, "published to general"),
    (strict_mode_callback, "denied"),
])
def test_the_seed_callbacks(registry: Path, callback: Any, outcome: str) -> None:
    scripted = Scripted([[ToolCallPart("publish", {"channel": "general"})], [TextPart("done")]])
    result = run_worker(registry=registry, worker="main", input_data="go", cli_model=scripted.model,
                        approval_callback=callback)
    assert outcome in returned(result.messages, "publish")[0]


def test_run_worker_attachments_join_the_input(registry: Path) -> None:
    scripted = Scripted([])
    result = run_worker(registry=registry, worker="helper", input_data="read this", attachments=[registry / "notes.txt"],
                        cli_model=scripted.model)
    assert result.output == "helped with 'read this'"
    assert "NOTES-CONTENT" in str(scripted.prompts[0])


def test_call_worker_async_from_a_tool_as_the_seed_writes_it(registry: Path) -> None:
    scripted = Scripted([[ToolCallPart("delegate_async", {"task": "sum up"})], [TextPart("done")]])
    result = run_worker(registry=registry, input_data="go", cli_model=scripted.model)
    assert returned(result.messages, "delegate_async") == ["async: helped with 'sum up'"]
    assert "NOTES-CONTENT" in str(scripted.prompts[0])  # attachments=["notes.txt"] reached the callee


def test_call_worker_from_a_sync_tool(registry: Path) -> None:
    scripted = Scripted([[ToolCallPart("delegate_sync", {"name": "helper", "task": "count"})], [TextPart("done")]])
    result = run_worker(registry=registry, input_data="go", cli_model=scripted.model)
    assert returned(result.messages, "delegate_sync") == ["sync: helped with 'count'"]


def test_call_worker_enforces_the_callers_calls(registry: Path) -> None:
    """The seed: "Enforces `allow_workers` allowlist from the caller's definition"; llm-do's
    `calls` (here: main's toolsets name helper, not other)."""
    scripted = Scripted([[ToolCallPart("delegate_sync", {"name": "other", "task": "x"})], [TextPart("done")]])
    result = run_worker(registry=registry, input_data="go", cli_model=scripted.model)
    assert "called worker 'other' from Python, which it does not declare" in returned(result.messages, "delegate_sync")[0]
    assert scripted.prompts == []  # other never ran


def test_create_worker_as_the_seed_writes_it(registry: Path) -> None:
    spec = WorkerSpec(
        name="new-worker",
        instructions="You are a helpful assistant.",
        description="A simple worker",
    )
    definition = create_worker(
        registry=registry,
        spec=spec,
        defaults=WorkerCreationDefaults(default_model="openai:gpt-4"),
        force=False,  # Set True to overwrite existing
    )
    assert definition == registry.resolve() / "workers/generated/new-worker.worker"
    text = definition.read_text()
    assert 'model: "openai:gpt-4"' in text and text.endswith("You are a helpful assistant.\n")
    with pytest.raises(DefinitionProblem, match="already exists"):
        create_worker(registry=registry, spec=spec, force=False)
    create_worker(registry=registry, spec=WorkerSpec("new-worker", "Be terse.", "Shorter"), force=True)
    assert definition.read_text().endswith("Be terse.\n") and "openai:gpt-4" not in definition.read_text()


def test_create_worker_force_never_replaces_a_worker_of_the_project(registry: Path) -> None:
    with pytest.raises(DefinitionProblem, match="the name 'helper' is taken"):
        create_worker(registry=registry, spec=WorkerSpec("helper", "Replaced."), force=True)
    assert (registry / "helper.worker").read_text().endswith("Help.\n")


@dataclass
class SeedDefinition:
    """The seed's worker definition, as far as the controller reads it."""

    tool_rules: dict[str, Any]


def test_approval_controller_as_the_seed_writes_it() -> None:
    definition = SeedDefinition(tool_rules={
        "sandbox.write": {"allowed": True, "approval_required": True},
        "sandbox.delete": {"allowed": False},
    })
    asked: list[tuple[str, dict[str, Any]]] = []
    writes: list[str] = []

    def my_callback(tool_name: str, payload: dict, reason: str) -> ApprovalDecision:
        asked.append((tool_name, payload))
        return ApprovalDecision(approved=payload["path"].startswith("output/"), approve_for_session=True,
                                note="only output/")

    def do_write(path: str = "output/file.txt") -> str:
        writes.append(path)
        return "written"

    controller = ApprovalController(
        tool_rules=definition.tool_rules,
        approval_callback=my_callback,
    )

    # Used internally by tools
    result = controller.maybe_run(
        tool_name="sandbox.write",
        payload={"path": "output/file.txt"},
        func=lambda: do_write(),
    )
    assert result == "written"
    controller.maybe_run(tool_name="sandbox.write", payload={"path": "output/file.txt"}, func=lambda: do_write())
    assert asked == [("sandbox.write", {"path": "output/file.txt"})]  # approved for the session: asked once
    with pytest.raises(CallRefused, match=r"denied \(only output/\)"):
        controller.maybe_run(tool_name="sandbox.write", payload={"path": "etc/x"}, func=lambda: do_write("etc/x"))
    with pytest.raises(CallRefused, match="not allowed"):
        controller.maybe_run(tool_name="sandbox.delete", payload={}, func=lambda: do_write("deleted"))
    assert controller.maybe_run(tool_name="sandbox.read", payload={}, func=lambda: "read") == "read"  # no rule: runs
    assert writes == ["output/file.txt", "output/file.txt"]


def test_the_seed_keywords_said_twice_are_refused(registry: Path) -> None:
    with pytest.raises(InputProblem, match="name the bundle once"):
        run_worker(registry, registry=registry, input_data="x")
    with pytest.raises(InputProblem, match="give the input once"):
        run_worker(registry=registry, input_data="x", input="y")


def test_call_worker_ends_when_the_run_cancels_the_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sync tool waiting in `call_worker` is not left blocked forever when the run stops (Ctrl-C,
    `--timeout`) and cancels the call it started on the run's loop."""
    import concurrent.futures

    from llm_do.runtime import api
    from llm_do.runtime.call_scope import RUN_LOOP

    async def never_answers(*args: Any, **kwargs: Any) -> Any:
        await asyncio.Event().wait()

    monkeypatch.setattr(api, "call_worker_async", never_answers)

    async def run() -> None:
        RUN_LOOP.set(asyncio.get_running_loop())
        waiting = asyncio.ensure_future(asyncio.to_thread(api.call_worker, None, "w"))
        while not [t for t in asyncio.all_tasks() if t.get_coro().__name__ == "never_answers"]:
            await asyncio.sleep(0.01)
        for task in asyncio.all_tasks():
            if task.get_coro().__name__ == "never_answers":
                task.cancel()
        # the tool's wait ends cancelled (not a TimeoutError: a thread still blocked)
        with pytest.raises((asyncio.CancelledError, concurrent.futures.CancelledError)):
            await asyncio.wait_for(waiting, timeout=5)

    asyncio.run(run())

"""A `Runtime` given a `Durability`: the run asks it for the Agent's cache, model and capabilities,
wraps the worker's tools with it before the gate is built, and waits for approvals through it;
without one, nothing changes (`NoDurability`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_ai import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.toolsets import WrapperToolset

from llm_do.runtime import Runtime, RuntimeConfig, load_bundle
from llm_do.runtime.durability import NO_DURABILITY, NoDurability
from llm_do.runtime.toolsets.gate import ApprovalGate
from tests.support.cli import worker

PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker("toolsets: [filesystem_project]", "Work."),
}


@dataclass
class Recording(WrapperToolset[Any]):
    log: list[str] = field(default_factory=list)

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: Any, tool: Any) -> Any:
        self.log.append(f"call {name}")
        return await self.wrapped.call_tool(name, tool_args, ctx, tool)


class RecordingDurability(NoDurability):
    def __init__(self, model: Any) -> None:
        self.model = model
        self.agents: dict[str, Any] = {}
        self.log: list[str] = []
        self.gated: list[Any] = []

    def agent_cache(self, bundle: Any) -> dict[str, Any]:
        return self.agents

    def model_for(self, spec: Any) -> tuple[Any, str] | None:
        return self.model, "fixed"

    def agent_capabilities(self, spec: Any) -> list[Any]:
        self.log.append(f"capabilities {spec.name}")
        return []

    def wrap_tools(self, spec: Any, toolset: Any) -> Any:
        self.log.append(f"wrap {spec.name}")
        wrapped = Recording(toolset, log=self.log)
        self.gated.append(wrapped)
        return wrapped

    async def approve(self, runtime: Any, request: Any, ask: Any) -> Any:
        self.log.append(f"approve {request.tool}")
        return await ask()


def _model() -> FunctionModel:
    turns = iter([[ToolCallPart("write_file", {"path": "out.txt", "content": "hi"})], [TextPart("done")]])
    return FunctionModel(lambda messages, info: ModelResponse(parts=next(turns)))


def test_the_run_goes_through_its_durability(build) -> None:
    bundle = load_bundle(build(PROJECT))
    durability = RecordingDurability(_model())
    runtime = Runtime(bundle, RuntimeConfig(approval_mode="approve_all"), durability=durability)
    assert runtime.run("go").output == "done"
    assert durability.log == ["wrap main", "capabilities main", "approve write_file", "call write_file"]
    assert set(durability.agents) == {"main"} and "main" not in bundle.agents  # its own Agents, not the bundle's
    assert (Path(bundle.root) / "out.txt").read_text() == "hi"


def test_the_gate_wraps_what_the_durability_wrapped(build) -> None:
    runtime = Runtime(load_bundle(build(PROJECT)), durability=RecordingDurability(_model()))
    gate = runtime.calls.toolsets(runtime.bundle.worker("main"))
    assert isinstance(gate, ApprovalGate) and gate.wrapped is runtime.durability.gated[0]


def test_without_durability_nothing_changes(build) -> None:
    runtime = Runtime(load_bundle(build(PROJECT)), RuntimeConfig(model=_model(), approval_mode="approve_all"))
    assert runtime.durability is NO_DURABILITY
    assert runtime.run("go").output == "done"
    assert "main" in runtime.bundle.agents

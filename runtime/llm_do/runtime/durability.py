"""What makes a run durable, as a component the `Runtime` is given (`Runtime(bundle, config,
durability=...)`): the run asks it at four points and otherwise runs as always.

- `agent_cache` / `model_for` / `agent_capabilities`: a worker's Agent. A durable engine builds
  its Agents before it starts (with their model fixed and a capability that makes model requests
  steps), and keeps them apart from the bundle's shared ones.
- `wrap_tools`: a worker's tools, wrapped before the approval gate is put around them (each call
  a step).
- `approve`: how an approval is waited for (as a step, or in the workflow until someone answers).

`NO_DURABILITY`, the default, changes nothing. The DBOS implementation is
`durable.dbos.DbosDurability`; `durable/RULES.md` says what may cross a step boundary.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.models import Model
    from pydantic_ai.toolsets import AbstractToolset

    from llm_do.bundle.views import WorkerSpec

    from .approvals.decisions import ApprovalDecision, ApprovalRequest
    from .bundle import LoadedBundle
    from .call_scope import CallContext, RunHost

Ask = Callable[[], Awaitable[tuple["ApprovalDecision", str]]]
"""Asks for the approval now, the way the run would without durability: the decision and who made it."""


class Durability(Protocol):
    stopped_to_wait: bool
    """The run stopped to wait for an answer from outside the process (a detached approval): its
    end is not a failure, and the run reports none."""

    def agent_cache(self, bundle: LoadedBundle) -> dict[str, Agent[CallContext, object]]:
        """Where the run keeps its workers' Agents, by worker name."""
        ...

    def model_for(self, spec: WorkerSpec) -> tuple[Model, str] | None:
        """The model (and its label) fixed for the worker before the run, or None: chosen per call."""
        ...

    def agent_capabilities(self, spec: WorkerSpec) -> list[AbstractCapability[CallContext]]:
        """pydantic-ai capabilities added to the worker's Agent."""
        ...

    def wrap_tools(self, spec: WorkerSpec, toolset: AbstractToolset[CallContext]) -> AbstractToolset[CallContext]:
        """The worker's toolsets (all of them, combined) as the gate will wrap them."""
        ...

    async def approve(self, runtime: RunHost, request: ApprovalRequest, ask: Ask) -> tuple[ApprovalDecision, str]:
        """The answer to an approval request: `ask()`, or the engine's own way of waiting."""
        ...


class NoDurability:
    """A run that is not durable: the bundle's Agents, models chosen per call, tools as they are,
    approvals asked at once."""

    stopped_to_wait = False

    def agent_cache(self, bundle: LoadedBundle) -> dict[str, Agent[CallContext, object]]:
        return bundle.agents

    def model_for(self, spec: WorkerSpec) -> tuple[Model, str] | None:
        return None

    def agent_capabilities(self, spec: WorkerSpec) -> list[AbstractCapability[CallContext]]:
        return []

    def wrap_tools(self, spec: WorkerSpec, toolset: AbstractToolset[CallContext]) -> AbstractToolset[CallContext]:
        return toolset

    async def approve(self, runtime: RunHost, request: ApprovalRequest, ask: Ask) -> tuple[ApprovalDecision, str]:
        return await ask()


NO_DURABILITY: Durability = NoDurability()

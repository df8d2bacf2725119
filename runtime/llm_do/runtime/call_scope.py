"""One worker call: its frame (worker, depth, history), the context its tools receive, and what
toolsets may ask of the run (`RunHost`).

Every call gets a fresh frame and fresh toolset instances; child calls never see the parent's
messages. `CallContext` is pydantic-ai's `deps` for the call, so a Python tool reaches the
runtime through `ctx.deps`, explicitly, never through a global.

This module is the leaf of the runtime: the gate, the worker-call toolset and the toolset builder
name the run only through `RunHost`, and `Runtime` (the one composer) implements it, so no module
below the composer imports it.
"""

from __future__ import annotations

import asyncio
from contextvars import ContextVar
from typing import TYPE_CHECKING, NamedTuple, Protocol

from llm_do.toolkit.hooks import HookHost

if TYPE_CHECKING:
    from pathlib import Path

    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.models import Model
    from pydantic_ai.toolsets import AbstractToolset

    from llm_do.bundle.approval import ApprovalMode
    from llm_do.bundle.model import ToolsetNode
    from llm_do.bundle.views import WorkerSpec

    from .approvals.decisions import ApprovalDecision, ApprovalRequest
    from .args import WorkerArgs
    from .bundle import LoadedBundle
    from .config import McpServer, RuntimeConfig
    from .events import RuntimeEvent
    from .quarantine import Quarantine
    from .references import References
    from .services import Services
    from .taint import FlowGuard, FrameTaint


RUN_LOOP: ContextVar[asyncio.AbstractEventLoop | None] = ContextVar("llm_do_run_loop", default=None)
"""The event loop of the run under way, set by `Runtime.run_async`: a synchronous tool, on a
thread of its own, calls a worker on it (`call_worker`)."""


class ServerPool(Protocol):
    """The run's open MCP servers (`toolsets.mcp.McpServers`): a toolset asks for its server."""

    async def server(self, key: str, node: ToolsetNode) -> McpServer: ...


class RunHost(HookHost, Protocol):
    """What a run offers the toolsets of its calls (implemented by `Runtime`): what a toolset's
    hooks may ask (`HookHost`) and more."""

    bundle: LoadedBundle
    config: RuntimeConfig
    mcp_servers: ServerPool | None
    """The run's MCP servers while a run of a bundle with MCP servers is under way."""
    approval_mode: ApprovalMode

    @property
    def listening(self) -> bool: ...

    @property
    def flow_guard(self) -> FlowGuard:
        """The bundle's flow policy (`taint`), imported on first use."""

    @property
    def services(self) -> Services: ...

    @property
    def references(self) -> References: ...

    def emit(self, event: RuntimeEvent) -> None: ...

    async def request_approval(
        self, request: ApprovalRequest
    ) -> tuple[ApprovalDecision, str]: ...

    def input_class(self, spec: WorkerSpec) -> type[WorkerArgs]: ...

    async def call_worker_async(
        self, name: str, *args: object, parent: CallFrame | None = None, from_model: bool = False, **kwargs: object
    ) -> object: ...

    def worker(self, name: str, parent: CallFrame | None = None) -> WorkerHandle: ...

    def create_worker(self, name: str, instructions: str, description: str, model: str | None = None, *,
                      folder: str | None = None, replace: bool = False) -> Path: ...

    def created(self, name: str) -> bool: ...


RUNNING_TOOL_CALL: ContextVar[str | None] = ContextVar("llm_do_running_tool_call", default=None)
"""The id of the tool call the gate is running in this task (None outside any): a worker called from
it (by a model, or by a Python tool) was made there, which is how recordings name a call's place."""


NO_TAINT: FrameTaint = frozenset()

CARRIED: ContextVar[FrameTaint] = ContextVar("llm_do_carried", default=NO_TAINT)
"""What the arguments of the tool call the gate is running carry from kept outputs (`quarantine`;
set by the gate around the call): a worker called there starts with it, as with its caller's taint."""


class CallFrame:
    """One call's place in the run. (Plain classes here and in `runtime`: each dataclass costs
    about a millisecond at every `llm-do exec` start.)"""

    __slots__ = ("worker", "depth", "parent", "messages", "model", "taint", "kept")

    def __init__(self, worker: str, depth: int, parent: CallFrame | None = None) -> None:
        self.worker = worker
        self.depth = depth
        """The entry runs at depth 1, each call one deeper."""
        self.parent = parent
        self.messages: list[ModelMessage] = []
        """The call's message history, once it has finished."""
        self.model: Model | str | None = None
        """The model the call runs on (a name, or a Model object), once chosen: a callee without a
        model of its own inherits it."""
        self.taint: FrameTaint = NO_TAINT
        """What the call has taken in (`taint.Source`s: private data, untrusted content): its
        caller's at first, then what its labelled tools and its callees return."""
        self.kept: Quarantine | None = None
        """The outputs of the quarantined workers its model called, by token (`quarantine`)."""

    def __repr__(self) -> str:
        return f"CallFrame(worker={self.worker!r}, depth={self.depth})"


def as_input(args: tuple[object, ...], kwargs: dict[str, object]) -> tuple[object, ...]:
    """A Python call's input as positionals only: keyword arguments become one mapping, so an input
    field never collides with a keyword of the call machinery (`parent`, `from_model`). Both kinds
    given stay two inputs, which `inputs.normalize_input` refuses."""
    return (*args, kwargs) if kwargs else args


class WorkerHandle(NamedTuple):
    """A worker as a Python callable bound to a run (and to the frame calling it, if any)."""

    runtime: RunHost
    name: str
    parent: CallFrame | None = None

    async def call_async(self, /, *args: object, **kwargs: object) -> object:
        return await self.runtime.call_worker_async(self.name, *as_input(args, kwargs), parent=self.parent)

    def __call__(self, /, *args: object, **kwargs: object) -> object:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self.call_async(*args, **kwargs))
        raise RuntimeError(f"worker '{self.name}' called synchronously inside a running event loop; use `await handle.call_async(...)`")


class CallContext:
    """What a tool sees as `ctx.deps`: the run and the frame of the worker calling it."""

    __slots__ = ("runtime", "frame")

    def __init__(self, runtime: RunHost, frame: CallFrame) -> None:
        self.runtime = runtime
        self.frame = frame

    async def call_worker(self, name: str, /, *args: object, **kwargs: object) -> object:
        """Call another worker one level deeper, with Python-call arguments (see `inputs`)."""
        return await self.runtime.call_worker_async(name, *as_input(args, kwargs), parent=self.frame)

    call_agent = call_worker
    """The `.agent`-era name."""

    def worker(self, name: str) -> WorkerHandle:
        return self.runtime.worker(name, parent=self.frame)

    @property
    def services(self) -> Services:
        """The host's services (`RuntimeConfig.services`), by key or attribute."""
        return self.runtime.services

    @property
    def references(self) -> References:
        """The run's references: `create(payload, kind=..., glimpse=...)`, `resolve(ref_or_id)`."""
        return self.runtime.references


class CallScope:
    """One worker call's resources: its frame and its toolsets (built by the caller, already
    behind the gate), entered when the scope is and torn down when it exits, whatever happens."""

    def __init__(self, runtime: RunHost, frame: CallFrame, toolsets: AbstractToolset[CallContext] | None) -> None:
        self.runtime = runtime
        self.frame = frame
        self.toolsets = toolsets

    async def __aenter__(self) -> CallScope:
        if self.toolsets is not None:
            await self.toolsets.__aenter__()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        toolsets, self.toolsets = self.toolsets, None
        if toolsets is not None:
            await toolsets.__aexit__(*exc_info)

    @property
    def context(self) -> CallContext:
        return CallContext(self.runtime, self.frame)

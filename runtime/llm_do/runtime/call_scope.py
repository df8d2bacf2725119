"""One worker call: its frame (worker, depth, history), and the context its tools receive.

Every call gets a fresh frame and fresh toolset instances; child calls never see the parent's
messages. `CallContext` is pydantic-ai's `deps` for the call, so a Python tool reaches the
runtime through `ctx.deps`, explicitly, never through a global.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .approval_gate import ApprovalGate
    from .bundle import WorkerSpec
    from .runtime import Runtime, WorkerHandle


class CallFrame:
    """One call's place in the run. (Plain classes here and in `runtime`: each dataclass costs
    about a millisecond at every `llm-do exec` start.)"""

    __slots__ = ("worker", "depth", "parent", "messages")

    def __init__(self, worker: str, depth: int, parent: CallFrame | None = None) -> None:
        self.worker = worker
        self.depth = depth
        """The entry runs at depth 1, each call one deeper."""
        self.parent = parent
        self.messages: list[Any] = []
        """The call's message history, once it has finished."""

    def __repr__(self) -> str:
        return f"CallFrame(worker={self.worker!r}, depth={self.depth})"


class CallContext:
    """What a tool sees as `ctx.deps`: the runtime and the frame of the worker calling it."""

    __slots__ = ("runtime", "frame")

    def __init__(self, runtime: Runtime, frame: CallFrame) -> None:
        self.runtime = runtime
        self.frame = frame

    async def call_worker(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """Call another worker one level deeper, with Python-call arguments (see `inputs`)."""
        return await self.runtime.call_worker_async(name, *args, parent=self.frame, **kwargs)

    call_agent = call_worker
    """The `.agent`-era name."""

    def worker(self, name: str) -> WorkerHandle:
        return self.runtime.worker(name, parent=self.frame)


class CallScope:
    """One worker call's resources: its frame and its toolset instances, set up when the scope
    is entered and torn down when it exits, whatever happens in between."""

    def __init__(self, runtime: Runtime, spec: WorkerSpec, frame: CallFrame) -> None:
        self.runtime = runtime
        self.spec = spec
        self.frame = frame
        self.toolsets: ApprovalGate | None = None

    async def __aenter__(self) -> CallScope:
        from .toolset_builder import build_toolsets

        self.toolsets = build_toolsets(self.runtime, self.spec)
        if self.toolsets is not None:
            await self.toolsets.__aenter__()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        toolsets, self.toolsets = self.toolsets, None
        if toolsets is not None:
            await toolsets.__aexit__(*exc_info)

    @property
    def context(self) -> CallContext:
        return CallContext(self.runtime, self.frame)

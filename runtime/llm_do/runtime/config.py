"""`RuntimeConfig`: everything a run is told from outside the bundle, fixed for the run."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pydantic_ai import RunContext
    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.models import Model
    from pydantic_ai.tools import ToolDefinition
    from pydantic_ai.toolsets import ToolsetTool
    from pydantic_ai.usage import UsageLimits

    from llm_do.bundle.approval import ApprovalMode
    from llm_do.bundle.model import ToolsetNode
    from llm_do.bundle.views import WorkerSpec

    from .approvals.decisions import ApprovalCallback
    from .budget import Budget
    from .events import RuntimeEvent
    from .references import ReferenceStore

    # Only for the type checker: an `exec` that uses no MCP server makes neither class.
    class ListedMcpTool(Protocol):
        """One tool as an MCP server lists it (`mcp.types.Tool`, or a replay's record of one)."""

        @property
        def name(self) -> str: ...
        @property
        def description(self) -> str | None: ...
        @property
        def input_schema(self) -> Mapping[str, object]: ...


    class McpServer(Protocol):
        """What a run's MCP toolsets use of a started server: pydantic-ai's `MCPToolset`, or what
        records one (`recording.remote_mcp`) or stands in for one (`recording.remote_replay`). Its
        context is a `RunContext[call_scope.CallContext]` (`Any` here: `call_scope` names this module)."""

        async def list_tools(self) -> Sequence[ListedMcpTool]: ...

        async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]: ...

        def tool_for_tool_def(self, tool_def: ToolDefinition, *, ctx: RunContext[Any]) -> ToolsetTool[Any]: ...

        async def direct_call_tool(self, name: str, args: dict[str, object]) -> object: ...


RemoteMcp = Callable[[str, "ToolsetNode", Callable[[], Awaitable["McpServer"]]], Awaitable["McpServer"]]
"""`(server name, its bundle node, start) -> the server the run uses`: `start()` starts the real one
(a pydantic-ai `MCPToolset`); what is returned lists and calls tools as it does."""


@dataclass(frozen=True)
class RuntimeConfig:
    approval_mode: ApprovalMode | None = None
    """None: the bundle's `runtime.approval_mode`."""
    approval_callback: ApprovalCallback | None = None
    """Answers requests in `prompt` mode; without it a terminal is asked, or the call is denied.
    Takes an `ApprovalRequest`, or is the seed API's `(tool_name, payload, reason)`."""
    interactive: bool = False
    """Ask on the terminal when there is no callback (the CLI sets it when stdin is a terminal)."""
    max_depth: int | None = None
    """None: the bundle's `runtime.max_depth`."""
    usage_limits: UsageLimits | None = None
    """A pydantic-ai UsageLimits; None: the bundle's."""
    timeout: float | None = None
    """Seconds for the whole run."""
    model: Model | str | None = None
    """A model name or pydantic-ai Model used by every worker instead of its own."""
    model_for: Callable[[str], Model | str | None] | None = None
    """Per-worker model override: called with each worker's name, it returns a model name or a
    pydantic-ai Model (a `FunctionModel` per worker tests offline), or None for that worker's own;
    takes precedence over `model`."""
    fallback_model: Model | str | None = None
    """A model name or pydantic-ai Model for a worker that names none, has no caller's to inherit
    and no project default (before `LLM_DO_MODEL`); the seed API's `cli_model`."""
    wrap_model: Callable[[Model, Any, WorkerSpec, str], tuple[Model, str]] | None = None
    """Wraps each call's built model, given the call's `CallFrame` (`Any` here: `call_scope` names
    this module), the worker and the model's label, and gives the model and label the call uses: recording (`--record`) and replaying a cassette (`llm-do test`)
    see every request of every call."""
    remote_mcp: RemoteMcp | None = None
    """Stands in for each remote MCP server (`url`): recording (`--record`) wraps the started server,
    a replay (`llm-do test`) answers from the cassette and starts nothing."""
    on_event: Callable[[RuntimeEvent], None] | None = None
    stream: bool = False
    """Stream model responses and send their text as `OutputDelta` events (with a listener only)."""
    on_message: Callable[[str, int, list[ModelMessage]], None] | None = None
    """Called with (worker, depth, messages) when a worker call finishes."""
    verbosity: int = 0
    cwd: Path | None = None
    """The directory `filesystem_cwd*` toolsets are rooted at (default: the process's)."""
    services: Mapping[str, Any] | None = None
    """Host objects for Python tools and entry code: `ctx.deps.services["name"]` (see `services`)."""
    as_built: bool = False
    """Run a lock that is not the build of the sources beside it (`Runtime.load`, `run_worker`),
    with a `StaleLockWarning`, as `llm-do exec --as-built` does; by default it is refused
    (`BundleRefused`), like every lock whose project is present and not what it builds."""
    reference_store: ReferenceStore | None = None
    """Where `ctx.deps.references` keeps payloads (default: in memory, for the run's `Runtime`)."""
    budget: Budget | None = None
    """What the runs given this configuration may spend together (`--max-cost`; see `budget`)."""

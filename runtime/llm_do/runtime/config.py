"""`RuntimeConfig`: everything a run is told from outside the bundle, fixed for the run."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

RemoteMcp = Callable[[str, Mapping[str, Any], Callable[[], Awaitable[Any]]], Awaitable[Any]]
"""`(server name, its bundle node, start) -> the server the run uses`: `start()` starts the real one
(a pydantic-ai `MCPToolset`); what is returned lists and calls tools as it does."""

if TYPE_CHECKING:
    from llm_do.bundle.approval import ApprovalMode
    from llm_do.bundle.views import WorkerSpec

    from .approvals.decisions import ApprovalCallback
    from .budget import Budget
    from .events import RuntimeEvent
    from .references import ReferenceStore


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
    usage_limits: Any | None = None
    """A pydantic-ai UsageLimits; None: the bundle's."""
    timeout: float | None = None
    """Seconds for the whole run."""
    model: Any | None = None
    """A model name or pydantic-ai Model used by every worker instead of its own."""
    model_for: Callable[[str], Any] | None = None
    """Per-worker model override: called with each worker's name, it returns a model name or a
    pydantic-ai Model (a `FunctionModel` per worker tests offline), or None for that worker's own;
    takes precedence over `model`."""
    fallback_model: Any | None = None
    """A model name or pydantic-ai Model for a worker that names none, has no caller's to inherit
    and no project default (before `LLM_DO_MODEL`); the seed API's `cli_model`."""
    wrap_model: Callable[[Any, Any, WorkerSpec, str], tuple[Any, str]] | None = None
    """Wraps each call's built model, given the call's `CallFrame`, the worker and the model's label
    (the frame is `Any` here: `call_scope` names this module), and gives the
    model and label the call uses: recording (`--record`) and replaying a cassette (`llm-do test`)
    see every request of every call."""
    remote_mcp: RemoteMcp | None = None
    """Stands in for each remote MCP server (`url`): recording (`--record`) wraps the started server,
    a replay (`llm-do test`) answers from the cassette and starts nothing."""
    on_event: Callable[[RuntimeEvent], None] | None = None
    stream: bool = False
    """Stream model responses and send their text as `OutputDelta` events (with a listener only)."""
    on_message: Callable[[str, int, list[Any]], None] | None = None
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

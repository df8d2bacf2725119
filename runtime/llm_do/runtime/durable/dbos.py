"""A bundle's entry run as one DBOS workflow: every model request and every tool call other than
a worker call is a step, so a run resumed after a crash replays what completed and never runs a
completed step again.

- `launch` starts DBOS for a DB URL (reusable by a durable batch: one launch, many workflows).
- `DurableRuntime` is the `Runtime` of a durable run: per-worker Agents carry pydantic-ai's
  `DBOSDurability` (model requests become steps), tools behind the approval gate are wrapped in
  `StepToolset` (one step per call), and an approval that waits for a person waits in the workflow
  (`DBOS.recv`), where it survives the process.
- `register_run_workflow` registers the workflow that runs a record (bundle, digest, worker, input).

Names derive from the bundle digest and worker/toolset/tool names, so a resumed process registers
exactly the names the crashed one recorded. Each run gets its own DBOS executor id: launching
recovers only that run (`resume`), never another process's.
"""

from __future__ import annotations

import asyncio
import logging
import pickle
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dbos import DBOS
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.durable_exec.dbos import DBOSDurability
from pydantic_ai.toolsets import WrapperToolset

from llm_do.bundle.approval import TOOLSET_METADATA_KEY
from llm_do.bundle.views import WorkerSpec

from ..bundle import LoadedBundle
from ..call_scope import CallContext, CallFrame
from ..config import RuntimeConfig
from ..errors import RunFailed
from ..runtime import Runtime, _native_tools
from ..script import TURN_KEY
from .names import APPROVAL_PREFIX, short_digest, step_prefix, workflow_name

APP_NAME = "llm-do"
APPROVAL_WAIT_SECONDS = 365 * 24 * 3600.0
"""How long a run waits for an approval before giving up: in practice, until someone answers."""


def launch(db_url: str, *, executor: str, digest: str, verbose: int = 0) -> None:
    """Start DBOS on `db_url` as `executor` (`executor_id(run_id)` for one run; a batch process
    would take one of its own), recovering that executor's pending workflows of this bundle.
    DBOS logs to stderr only with -v."""
    level = "DEBUG" if verbose > 1 else "INFO" if verbose else "CRITICAL"
    DBOS(config={
        "name": APP_NAME,
        "system_database_url": db_url,
        "run_admin_server": False,
        "executor_id": executor,
        "application_version": short_digest(digest),
        "log_level": level,
    })
    logging.getLogger("dbos").setLevel(getattr(logging, level))
    DBOS.launch()


def shutdown() -> None:
    """Stop DBOS and forget what was registered, so one process can run again (tests)."""
    DBOS.destroy(destroy_registry=True)


def answer_queued(run_id: str, topic: str) -> bool:
    """Whether an answer to approval `topic` was sent to the run (consumed or not)."""
    import sqlalchemy as sa
    from dbos._dbos import _get_dbos_instance

    sys_db = _get_dbos_instance()._sys_db
    table = sys_db.tables.notifications
    with sys_db.engine.connect() as conn:
        row = conn.execute(sa.select(table.c.topic).where(table.c.destination_uuid == run_id, table.c.topic == topic)
                           .limit(1)).first()
    return row is not None


@dataclass
class StepToolset(WrapperToolset[CallContext]):
    """Each call of a tool inside (filesystem, shell, Python, MCP) runs as one DBOS step; worker
    calls run inline, so the callee's own requests and tools are steps of the same workflow.

    To pydantic-ai's durability checks this wrapper is the leaf: what it wraps is checkpointed
    here, call by call."""

    prefix: str = ""
    """`llm-do.<digest>.<worker>`: with the toolset and tool names, the step's stable name."""
    spec: WorkerSpec | None = None
    inline: frozenset[str] = field(default_factory=frozenset)
    """Tools that call workers."""

    def apply(self, visitor: Callable[[Any], None]) -> None:
        visitor(self)

    def visit_and_replace(self, visitor: Callable[[Any], Any]) -> Any:
        return visitor(self)

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: Any, tool: Any) -> Any:
        if name in self.inline or DBOS.workflow_id is None:
            return await self.wrapped.call_tool(name, tool_args, ctx, tool)
        binding = self.spec.tools.get(name) if self.spec is not None else None
        toolset = binding.toolset if binding is not None else (tool.tool_def.metadata or {}).get(TOOLSET_METADATA_KEY, "tools")
        worker = self.spec.name if self.spec is not None else "?"

        async def run_tool() -> Any:
            result = await self.wrapped.call_tool(name, tool_args, ctx, tool)
            check_pickles(result, name, worker)
            return result

        return await DBOS.run_step_async({"name": f"{self.prefix}.{toolset}.{name}"}, run_tool)


def check_pickles(value: Any, tool: str, worker: str) -> None:
    """A durable run records every tool result; one that cannot be recorded ends the run naming
    the tool, not deep inside DBOS."""
    try:
        pickle.dumps(value)
    except Exception as exc:
        raise RunFailed(f"tool '{tool}' of worker '{worker}' returned a value of type {type(value).__name__}, which a durable "
                        f"run cannot record (it does not pickle: {exc})") from None


@dataclass
class ScriptReplay(AbstractCapability[Any]):
    """A scripted worker's position follows the run's recorded history: a model request DBOS
    replays carries its turn number, so the next request asked for is the one after it."""

    player: Any = None
    worker: str = ""

    async def after_model_request(self, ctx: Any, *, request_context: Any, response: Any) -> Any:
        turn = (response.provider_details or {}).get(TURN_KEY)
        if isinstance(turn, int):
            self.player.replayed(self.worker, turn)
        return response


class DurableRuntime(Runtime):
    """A `Runtime` whose workers' Agents are durable (built before DBOS launches, as DBOS requires)
    and whose approvals wait in the workflow."""

    def __init__(self, bundle: LoadedBundle, config: RuntimeConfig, *, digest: str, player: Any = None,
                 detach_approvals: bool = False) -> None:
        super().__init__(bundle, config)
        self.digest = digest
        self.player = player
        self.detach_approvals = detach_approvals
        self._agents = {}  # durable Agents are this run's own, never the bundle's shared ones
        self._chosen: dict[str, tuple[Any, str]] = {}
        self._approvals = 0
        self._approval_lock = threading.Lock()
        self.on_suspend: Callable[[dict[str, Any]], None] | None = None
        """Called (from DBOS's thread) when the run waits for an approval nobody has answered yet."""
        self.answer_here = False
        """Approvals are decided in the run (mode, callback, terminal or denied), never left waiting:
        a batch's inputs do not stop to ask."""

    def sibling(self, *, answer_here: bool = False) -> DurableRuntime:
        """A runtime for another run of this process (a batch's next input): its own usage,
        approvals and references, the same durable Agents (registered once, before `launch`)."""
        other = DurableRuntime(self.bundle, self.config, digest=self.digest, player=self.player,
                               detach_approvals=self.detach_approvals)
        other._agents = self._agents
        other._chosen = self._chosen
        other.answer_here = answer_here
        return other

    def prefix(self, worker: str) -> str:
        return step_prefix(self.digest, worker)

    def prepare(self) -> None:
        """Build every worker's model and durable Agent: DBOS registers their steps now."""
        names = self.bundle.worker_names()
        for name in self._by_callers(names):
            spec = self.bundle.worker(name)
            assert spec is not None
            self._chosen[name] = Runtime._model(self, spec, self._inheriting_frame(spec))
            self._agent(spec)

    def _by_callers(self, names: list[str]) -> list[str]:
        """Workers ordered so that a worker comes after a worker calling it, where the calls allow
        (a worker without a model inherits its caller's, fixed here for the durable Agent).

        It follows the `tool` call edges only (the workers among a worker's `toolsets`, in their
        order), not every edge of `calls`: a worker only Python tools call (`code` edges, front
        matter `calls:`) is not a tool of its caller's Agent, and `_inheriting_frame` looks for a
        caller among the `toolsets` too. The two sets differ exactly by those `code` edges."""
        callees: dict[str, list[str]] = {}
        for edge in self.bundle.call_edges():
            if edge.kind == "tool":
                callees.setdefault(edge.caller, []).append(edge.callee)
        ordered: list[str] = []
        seen: set[str] = set()

        def visit(name: str) -> None:
            if name in seen:
                return
            seen.add(name)
            ordered.append(name)
            for callee in callees.get(name, ()):
                visit(callee)

        for name in names:
            visit(name)
        return ordered

    def _inheriting_frame(self, spec: WorkerSpec) -> CallFrame | None:
        """A frame whose parent holds the model of the first prepared worker calling `spec`."""
        if spec.model is not None:
            return None
        for caller, (_, label) in self._chosen.items():
            caller_spec = self.bundle.worker(caller)
            if caller_spec is not None and any(u.worker == spec.name for u in caller_spec.toolsets):
                parent = CallFrame(caller, 1)
                parent.model = label
                return CallFrame(spec.name, 2, parent)
        return None

    def _model(self, spec: WorkerSpec, frame: CallFrame | None = None) -> tuple[Any, str]:
        return self._chosen[spec.name]

    def _agent(self, spec: WorkerSpec) -> Any:
        agent = self._agents.get(spec.name)
        if agent is None:
            from pydantic_ai import Agent

            output_type: Any = str
            if spec.output is not None:
                output_type = self._class(spec.output.module, spec.output.qualname)
            model, _ = self._chosen[spec.name]
            capabilities: list[Any] = list(_native_tools(spec.server_side_tools))
            if self.player is not None:
                capabilities.append(ScriptReplay(self.player, spec.name))
            capabilities.append(DBOSDurability(name=self.prefix(spec.name), parallel_execution_mode="sequential"))
            agent = Agent(model, output_type=output_type, instructions=spec.instructions, deps_type=CallContext,
                          name=spec.name, defer_model_check=True, capabilities=capabilities)
            self._agents[spec.name] = agent
        return agent

    def _toolsets(self, spec: WorkerSpec) -> Any:
        gate = super()._toolsets(spec)
        if gate is None:
            return None
        inline = frozenset(u.worker for u in spec.toolsets if u.worker)
        gate.wrapped = StepToolset(gate.wrapped, prefix=self.prefix(spec.name), spec=spec, inline=inline)
        return gate

    async def request_approval(self, request: Any, shown: dict[str, Any] | None = None) -> tuple[Any, str]:
        from ..approvals import ApprovalDecision

        if self.approval_mode != "prompt" or self.answer_here or (
                not self.detach_approvals and (self.config.interactive or self.config.approval_callback)):
            # Answered here and now (a mode, a callback, the terminal): the answer is a step, so a
            # resumed run does not ask again.
            async def decide() -> tuple[Any, str]:
                return await Runtime.request_approval(self, request, shown)

            return await DBOS.run_step_async({"name": f"{self.prefix(request.worker)}.approval"}, decide)
        with self._approval_lock:
            self._approvals += 1
            number = self._approvals
        topic = f"{APPROVAL_PREFIX}{number}"
        info = {"id": str(number), "worker": request.worker, "depth": request.depth, "tool": request.tool,
                "args": _jsonable(request.args), "toolset": request.toolset, "state": "pending"}
        await DBOS.set_event_async(topic, info)
        if self.listening:
            from ..events import ApprovalRequested

            self.emit(ApprovalRequested(request.worker, request.depth, request.tool, request.args, request.toolset))
        run_id = DBOS.workflow_id
        assert run_id is not None
        if self.on_suspend is not None and not await asyncio.to_thread(answer_queued, run_id, topic):
            self.on_suspend(info)
        answer = await DBOS.recv_async(topic, timeout_seconds=APPROVAL_WAIT_SECONDS)
        if not isinstance(answer, dict):
            raise RunFailed(f"approval {number} ({request.tool} of worker '{request.worker}') was never answered")
        approved = bool(answer.get("approved"))
        await DBOS.set_event_async(topic, {**info, "state": "approved" if approved else "denied", "note": answer.get("note")})
        return ApprovalDecision(approved, note=answer.get("note")), "detached"

    async def run_record(self, record: dict[str, Any]) -> Any:
        """The workflow's body: run the record's worker on its input; the output as JSON data."""
        result = await self.run_async(record["input"], worker=record["worker"])
        return _jsonable(result.output)


def _jsonable(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def register_run_workflow(runtime: DurableRuntime) -> Any:
    """The workflow that runs one record of this bundle (registered before `launch`)."""

    @DBOS.workflow(name=workflow_name(runtime.digest))
    async def run_bundle(record: dict[str, Any]) -> Any:
        return await runtime.run_record(record)

    return run_bundle


async def start_or_resume(workflow: Any, run_id: str, record: dict[str, Any] | None,
                          runtime: DurableRuntime) -> tuple[str, Any]:
    """Start the run (`record` given) or wait for the recovered one; return ("done", output) or
    ("suspended", approval info) when `--detach-approvals` leaves it waiting."""
    from dbos import SetWorkflowID

    loop = asyncio.get_running_loop()
    suspended: asyncio.Future[dict[str, Any]] = loop.create_future()

    def suspend(info: dict[str, Any]) -> None:
        loop.call_soon_threadsafe(lambda: suspended.done() or suspended.set_result(info))

    if runtime.detach_approvals:
        runtime.on_suspend = suspend
    if record is not None:
        with SetWorkflowID(run_id):
            handle = await DBOS.start_workflow_async(workflow, record)
    else:
        handle = await DBOS.retrieve_workflow_async(run_id)
    result = asyncio.ensure_future(handle.get_result())
    done, _ = await asyncio.wait({result, suspended}, return_when=asyncio.FIRST_COMPLETED)
    if result in done:
        return "done", result.result()
    result.cancel()
    return "suspended", suspended.result()

"""A bundle's entry run as one DBOS workflow: every model request and every tool call other than
a worker call is a step, so a run resumed after a crash replays what completed and never runs a
completed step again.

- `launched` is DBOS's life around a run or a batch, in the one order DBOS accepts: the Agents
  built (`prepare`) and the workflow registered before `launch` starts DBOS for a DB URL (one
  launch, many workflows for a batch), `shutdown` however the block ends.
- `DbosDurability` is the `Durability` a durable run's `Runtime` is given (`durable_runtime`):
  per-worker Agents carry pydantic-ai's `DBOSDurability` (model requests become steps), tools
  behind the approval gate are wrapped in `StepToolset` (one step per call), and an approval that
  waits for a person waits in the workflow (`DBOS.recv`), where it survives the process.
  `prepare` builds the Agents before `launch`, as DBOS requires.
- `register_run_workflow` registers the workflow that runs a record (bundle, digest, worker, input).

RULES.md (beside this module) says what may cross a step boundary.

Names derive from the bundle digest and worker/toolset/tool names, so a resumed process registers
exactly the names the crashed one recorded. Each run gets its own DBOS executor id: launching
recovers only that run (`resume`), never another process's.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from dbos import DBOS
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.durable_exec.dbos import DBOSDurability
from pydantic_ai.messages import ModelResponse
from pydantic_ai.models import Model, ModelRequestContext
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool, WrapperToolset

from llm_do.bundle.approval import TOOLSET_METADATA_KEY
from llm_do.bundle.views import WorkerSpec

from ..bundle import LoadedBundle
from ..call_scope import CallContext, CallFrame, RunHost
from ..config import RuntimeConfig
from ..errors import RunFailed
from ..metering import metered
from ..runtime import Runtime
from ..script import TURN_KEY
from .names import APPROVAL_PREFIX, short_digest, step_prefix, workflow_name
from .record_format import LlmDoJson, RecordingFailed, encode, refuse_pickle

if TYPE_CHECKING:
    from ..approvals.decisions import ApprovalDecision, ApprovalRequest
    from ..durability import Ask
    from ..script import ScriptPlayer

RunWorkflow = Callable[[dict[str, Any]], Coroutine[Any, Any, object]]
"""A registered workflow: one record (bundle, digest, worker, input) in, the run's output as JSON out."""
W = TypeVar("W")

APP_NAME = "llm-do"
LISTENER_POLL_SECONDS = 0.1
APPROVAL_WAIT_SECONDS = 365 * 24 * 3600.0
"""How long a run waits for an approval before giving up: in practice, until someone answers."""
QUEUE_POLL_SECONDS = 1.0
"""DBOS's own interval for polling its internal queue, restored once a recovered run has started."""


def launch(db_url: str, *, executor: str, digest: str, verbose: int = 0, recovering: bool = False) -> None:
    """Start DBOS on `db_url` as `executor` (`executor_id(run_id)` for one run; a batch process
    would take one of its own), recovering that executor's pending workflows of this bundle.
    DBOS's own log lines reach stderr only when asked for (-vvv; -vvvv for DEBUG), never with the
    trace of -v and -vv.

    `recovering` (`resume`): DBOS recovers a run by putting it on its internal queue, which it
    polls first a second after launch; polled every `LISTENER_POLL_SECONDS` instead, the run
    starts at once (`run_record` restores DBOS's interval when it does)."""
    level = "DEBUG" if verbose > 3 else "INFO" if verbose > 2 else "CRITICAL"
    refuse_pickle()
    DBOS(config={
        "name": APP_NAME,
        "system_database_url": db_url,
        "executor_id": executor,
        "application_version": short_digest(digest),
        "log_level": level,
        "serializer": LlmDoJson(),
        # DBOS's SQLite listener sleeps this long between polls: an answer reaches a waiting run
        # within it, and shutting down waits for its sleep (DBOS's default, 1 s, on every exit).
        "notification_listener_polling_interval_sec": LISTENER_POLL_SECONDS,
    })
    logging.getLogger("dbos").setLevel(getattr(logging, level))
    if recovering:
        set_recovery_poll(LISTENER_POLL_SECONDS)
    DBOS.launch()


@contextmanager
def launched(runtime: Runtime, register: Callable[[Runtime], W], db_url: str, *, executor: str, digest: str,
             verbose: int = 0, recovering: bool = False) -> Iterator[W]:
    """DBOS started for `runtime`, yielding the workflow `register` made: every Agent built and the
    workflow registered before `launch` (DBOS refuses both after it), DBOS shut down when the block
    ends, whichever step fails."""
    try:
        prepare(runtime)
        workflow = register(runtime)
        launch(db_url, executor=executor, digest=digest, verbose=verbose, recovering=recovering)
        yield workflow
    finally:
        shutdown()


def set_recovery_poll(seconds: float) -> None:
    """How often DBOS polls its internal queue, where launching puts the runs it recovers (no
    public API: RULES.md)."""
    from dbos._dbos import _get_dbos_instance

    _get_dbos_instance()._registry.get_internal_queue()._polling_interval_sec = seconds


def shutdown() -> None:
    """Stop DBOS and forget what was registered, so one process can run again (tests)."""
    DBOS.destroy(destroy_registry=True)


def answer_queued(run_id: str, topic: str) -> bool:
    """Whether an answer to approval `topic` was sent to the run (consumed or not)."""
    from dbos._dbos import _get_dbos_instance

    from .runs import message_sent

    sys_db = _get_dbos_instance()._sys_db
    return message_sent(sys_db.engine, sys_db.tables, run_id, topic)  # no public API (RULES.md)


@dataclass
class StepToolset(WrapperToolset[CallContext]):
    """Each call of a tool inside (filesystem, shell, Python, MCP) runs as one DBOS step; worker
    calls run inline, so the callee's own requests and tools are steps of the same workflow.

    What it wraps is checkpointed here, call by call, so pydantic-ai's durability has nothing to
    check below it, and it shows pydantic-ai no leaf at all (`apply` visits nothing): pydantic-ai
    classifies each per-run leaf it is shown, and for a leaf that is neither a function nor a
    dynamic toolset it imports `pydantic_ai.mcp` only to answer "not MCP", which costs a durable
    run seconds where the MCP client is installed (bench/durable_bench.py)."""

    prefix: str = ""
    """`llm-do.<digest>.<worker>`: with the toolset and tool names, the step's stable name."""
    spec: WorkerSpec | None = None
    inline: frozenset[str] = field(default_factory=frozenset)
    """Tools that call workers."""

    def apply(self, visitor: Callable[[AbstractToolset[CallContext]], None]) -> None:
        return None

    def visit_and_replace(
        self, visitor: Callable[[AbstractToolset[CallContext]], AbstractToolset[CallContext]]
    ) -> AbstractToolset[CallContext]:
        return visitor(self)

    async def call_tool(self, name: str, tool_args: dict[str, object], ctx: RunContext[CallContext],
                        tool: ToolsetTool[CallContext]) -> object:
        if name in self.inline or DBOS.workflow_id is None:
            return await self.wrapped.call_tool(name, tool_args, ctx, tool)
        binding = self.spec.tools.get(name) if self.spec is not None else None
        toolset = binding.toolset if binding is not None else (tool.tool_def.metadata or {}).get(TOOLSET_METADATA_KEY, "tools")
        worker = self.spec.name if self.spec is not None else "?"

        async def run_tool() -> object:
            result: object = await self.wrapped.call_tool(name, tool_args, ctx, tool)
            check_recordable(result, name, worker)
            return result

        return await DBOS.run_step_async({"name": f"{self.prefix}.{toolset}.{name}"}, run_tool)


def check_recordable(value: object, tool: str, worker: str) -> None:
    """A durable run records every tool result as JSON (`record_format`); one that cannot be
    recorded ends the run naming the tool, not deep inside DBOS."""
    try:
        encode(value)
    except RecordingFailed as exc:
        raise RunFailed(f"tool '{tool}' of worker '{worker}' returned a value of type {type(value).__name__}, which a "
                        f"durable run cannot record ({exc})") from None


@dataclass
class ScriptReplay(AbstractCapability[CallContext]):
    """A scripted worker's position follows the run's recorded history: a model request DBOS
    replays carries its turn number, so the next request asked for is the one after it."""

    player: ScriptPlayer | None = None
    worker: str = ""

    async def after_model_request(self, ctx: RunContext[CallContext], *, request_context: ModelRequestContext,
                                  response: ModelResponse) -> ModelResponse:
        turn = (response.provider_details or {}).get(TURN_KEY)
        if isinstance(turn, int) and self.player is not None:
            self.player.replayed(self.worker, turn)
        return response


class DbosDurability:
    """The `Durability` of a DBOS run: per-worker Agents built before DBOS launches (as DBOS
    requires), with their model fixed and `DBOSDurability` (model requests become steps); tools
    behind the gate wrapped in `StepToolset` (one step per call); approvals answered as a step, or
    waited for in the workflow (`DBOS.recv`), where the wait survives the process."""

    def __init__(self, digest: str, *, player: ScriptPlayer | None = None, detach_approvals: bool = False,
                 answer_here: bool = False, agents: dict[str, Agent[CallContext, object]] | None = None,
                 chosen: dict[str, tuple[Model, str]] | None = None) -> None:
        self.digest = digest
        self.player = player
        self.detach_approvals = detach_approvals
        self.answer_here = answer_here
        """Approvals are decided in the run (mode, callback, terminal or denied), never left waiting:
        a batch's inputs do not stop to ask."""
        self.agents: dict[str, Agent[CallContext, object]] = {} if agents is None else agents
        """This run's durable Agents (never the bundle's shared ones), shared with its siblings."""
        self.chosen: dict[str, tuple[Model, str]] = {} if chosen is None else chosen
        """Each worker's model and label, fixed by `prepare`."""
        self._approvals = 0
        self._approval_lock = threading.Lock()
        self.on_wait: Callable[[dict[str, object]], None] | None = None
        """Called (from DBOS's thread) when the run waits for an approval nobody has answered yet:
        `--detach-approvals` stops the process, otherwise the CLI says what it waits for."""
        self.stopped_to_wait = False

    def sibling(self, *, answer_here: bool = False) -> DbosDurability:
        """The durability of another run of this process (a batch's next input): its own approvals,
        the same durable Agents and models (registered once, before `launch`)."""
        return DbosDurability(self.digest, player=self.player, detach_approvals=self.detach_approvals,
                              answer_here=answer_here, agents=self.agents, chosen=self.chosen)

    def prefix(self, worker: str) -> str:
        return step_prefix(self.digest, worker)

    # --- Durability

    def agent_cache(self, bundle: LoadedBundle) -> dict[str, Agent[CallContext, object]]:
        return self.agents

    def model_for(self, spec: WorkerSpec) -> tuple[Model, str] | None:
        return self.chosen.get(spec.name)

    def agent_capabilities(self, spec: WorkerSpec) -> list[AbstractCapability[CallContext]]:
        capabilities: list[AbstractCapability[CallContext]] = []
        if self.player is not None:
            capabilities.append(ScriptReplay(self.player, spec.name))
        capabilities.append(DBOSDurability(name=self.prefix(spec.name), parallel_execution_mode="sequential"))
        return capabilities

    def wrap_tools(self, spec: WorkerSpec, toolset: AbstractToolset[CallContext]) -> AbstractToolset[CallContext]:
        inline = frozenset(u.worker for u in spec.toolsets if u.worker)
        return StepToolset(toolset, prefix=self.prefix(spec.name), spec=spec, inline=inline)

    async def approve(self, runtime: RunHost, request: ApprovalRequest, ask: Ask) -> tuple[ApprovalDecision, str]:
        from ..approvals.decisions import ApprovalDecision

        config = runtime.config
        if runtime.approval_mode != "prompt" or self.answer_here or (
                not self.detach_approvals and (config.interactive or config.approval_callback)):
            # Answered here and now (a mode, a callback, the terminal): the answer is a step, so a
            # resumed run does not ask again. (A coroutine function: DBOS tells async steps by that.)
            async def decide() -> tuple[ApprovalDecision, str]:
                return await ask()

            return await DBOS.run_step_async({"name": f"{self.prefix(request.worker)}.approval"}, decide)
        with self._approval_lock:
            self._approvals += 1
            number = self._approvals
        topic = f"{APPROVAL_PREFIX}{number}"
        info = {"id": str(number), "worker": request.worker, "depth": request.depth, "tool": request.tool,
                "args": _jsonable(request.args), "toolset": request.toolset, "question": request.describe(),
                "state": "pending"}
        await DBOS.set_event_async(topic, info)
        if runtime.listening:
            from ..events import ApprovalRequested

            runtime.emit(ApprovalRequested.of(request))
        run_id = DBOS.workflow_id
        assert run_id is not None
        if self.on_wait is not None and not await asyncio.to_thread(answer_queued, run_id, topic):
            self.stopped_to_wait = self.detach_approvals
            self.on_wait(info)
        answer = await DBOS.recv_async(topic, timeout_seconds=APPROVAL_WAIT_SECONDS)
        self.stopped_to_wait = False
        if not isinstance(answer, dict):
            raise RunFailed(f"approval {number} ({request.tool} of worker '{request.worker}') was never answered")
        approved = bool(answer.get("approved"))
        note, feedback = answer.get("note"), answer.get("feedback")
        state = "approved" if approved else "revised" if feedback else "denied"
        await DBOS.set_event_async(topic, {**info, "state": state, "note": note, "feedback": feedback})
        return ApprovalDecision(approved, note=note, feedback=feedback), "detached"


def durable_runtime(bundle: LoadedBundle, config: RuntimeConfig, *, digest: str, player: ScriptPlayer | None = None,
                    detach_approvals: bool = False) -> Runtime:
    """A `Runtime` whose runs are durable on DBOS (`prepare` it before `launch`)."""
    return Runtime(bundle, config, durability=DbosDurability(digest, player=player, detach_approvals=detach_approvals))


def durability_of(runtime: Runtime) -> DbosDurability:
    durability = runtime.durability
    assert isinstance(durability, DbosDurability), "not a durable runtime (durable_runtime)"
    return durability


def sibling(runtime: Runtime, *, answer_here: bool = False) -> Runtime:
    """A runtime for another run of this process (a batch's next input): its own usage, approvals
    and references, the same durable Agents."""
    return Runtime(runtime.bundle, runtime.config, durability=durability_of(runtime).sibling(answer_here=answer_here))


def prepare(runtime: Runtime) -> None:
    """Build every worker's model and durable Agent: DBOS registers their steps now, before `launch`."""
    durability = durability_of(runtime)
    bundle = runtime.bundle
    for name in _by_callers(bundle, bundle.worker_names()):
        spec = bundle.worker(name)
        assert spec is not None
        model, label = runtime.calls.model(spec, _inheriting_frame(bundle, durability.chosen, spec))
        durability.chosen[name] = metered(model), label  # the Agent's model: DBOS registers it, the meter counts it
        runtime.calls.agent(spec)


def _by_callers(bundle: LoadedBundle, names: list[str]) -> list[str]:
    """Workers ordered so that a worker comes after a worker calling it, where the calls allow
    (a worker without a model inherits its caller's, fixed here for the durable Agent).

    It follows the `tool` call edges only (the workers among a worker's `toolsets`, in their
    order), not every edge of `calls`: a worker only Python tools call (`code` edges, front
    matter `calls:`) is not a tool of its caller's Agent, and `_inheriting_frame` looks for a
    caller among the `toolsets` too. The two sets differ exactly by those `code` edges."""
    callees: dict[str, list[str]] = {}
    for edge in bundle.call_edges():
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


def _inheriting_frame(bundle: LoadedBundle, chosen: dict[str, tuple[Model, str]], spec: WorkerSpec) -> CallFrame | None:
    """A frame whose parent holds the model of the first prepared worker calling `spec`."""
    if spec.model is not None:
        return None
    for caller, (_, label) in chosen.items():
        caller_spec = bundle.worker(caller)
        if caller_spec is not None and any(u.worker == spec.name for u in caller_spec.toolsets):
            parent = CallFrame(caller, 1)
            parent.model = label
            return CallFrame(spec.name, 2, parent)
    return None


async def run_record(runtime: Runtime, record: dict[str, Any]) -> object:
    """The workflow's body: run the record's worker on its input; the output as JSON data."""
    set_recovery_poll(QUEUE_POLL_SECONDS)  # started: no need to poll the queue for it any more
    result = await runtime.run_async(record["input"], worker=record["worker"])
    return _jsonable(result.output)


def _jsonable(value: object) -> object:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def register_run_workflow(runtime: Runtime) -> RunWorkflow:
    """The workflow that runs one record of this bundle (registered before `launch`)."""

    @DBOS.workflow(name=workflow_name(durability_of(runtime).digest))
    async def run_bundle(record: dict[str, Any]) -> object:
        return await run_record(runtime, record)

    return run_bundle


async def start_or_resume(workflow: RunWorkflow, run_id: str, record: dict[str, object] | None, runtime: Runtime,
                          on_wait: Callable[[dict[str, object]], None] | None = None) -> tuple[str, object]:
    """Start the run (`record` given) or wait for the recovered one; return ("done", output) or
    ("suspended", approval info) when `--detach-approvals` leaves it waiting. `on_wait` hears of
    each approval a waiting process waits for (from DBOS's thread)."""
    from dbos import SetWorkflowID

    loop = asyncio.get_running_loop()
    suspended: asyncio.Future[object] = loop.create_future()  # the approval info

    def suspend(info: dict[str, object]) -> None:
        loop.call_soon_threadsafe(lambda: None if suspended.done() else suspended.set_result(info))

    durability = durability_of(runtime)
    durability.on_wait = suspend if durability.detach_approvals else on_wait
    if record is not None:
        with SetWorkflowID(run_id):
            handle = await DBOS.start_workflow_async(workflow, record)
        waiting = handle.get_result()
    else:  # launching recovered it: its result is polled for (DBOS's default: every second)
        handle = await DBOS.retrieve_workflow_async(run_id)
        waiting = handle.get_result(polling_interval_sec=LISTENER_POLL_SECONDS)
    result: asyncio.Future[object] = asyncio.ensure_future(waiting)
    done, _ = await asyncio.wait({result, suspended}, return_when=asyncio.FIRST_COMPLETED)
    if result in done:
        return "done", result.result()
    result.cancel()
    return "suspended", suspended.result()

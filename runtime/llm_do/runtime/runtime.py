"""`Runtime`: one process-wide owner of a run's configuration and shared state (usage, approvals,
events, services, references), and what a host calls: `run`, `run_async`, `events`, `chat`.

It composes the rest: each worker call is made by its `WorkerCaller` (`calls`), which builds a
fresh frame and fresh toolsets, checks depth, validates the input, builds the prompt, picks the
model and runs the worker's pydantic-ai Agent with the shared usage. A durable run is this same
`Runtime` given a `Durability` (`durability`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llm_do.bundle.views import WorkerSpec
from llm_do.toolkit.tool_threads import abandonable_tools

from .args import WorkerArgs
from .bundle import LoadedBundle, load_bundle
from .call_scope import RUN_LOOP, CallFrame, WorkerHandle
from .calls import WorkerCaller, usage_dict
from .config import RuntimeConfig
from .durability import NO_DURABILITY
from .errors import InputProblem, RunFailed, failure_line
from .metering import DEFAULT_REQUEST_LIMIT, RunMeter
from .run_result import RunResult
from .worker_calls_from_python import check_python_call, running_frame

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.usage import UsageLimits

    from llm_do.bundle.approval import ApprovalMode
    from llm_do.bundle.model import UsageLimitsNode

    from .approvals.decisions import ApprovalDecision, ApprovalRequest, Approver
    from .call_scope import ServerPool
    from .conversation import Conversation
    from .created_workers import WorkerDefinition
    from .durability import Durability
    from .events import RuntimeEvent
    from .references import References
    from .services import Services
    from .taint import FlowGuard, FrameTaint

__all__ = ["RunResult", "Runtime", "usage_dict"]


def _usage_limits(node: UsageLimitsNode) -> UsageLimits:
    """The bundle's `runtime.usage_limits` as pydantic-ai's: a cost limit as the Decimal it
    compares costs with, and fields left None at pydantic-ai's defaults."""
    from decimal import Decimal

    from pydantic_ai.usage import UsageLimits

    fields: dict[str, Any] = {k: v for k, v in node.items() if v is not None}
    if "cost_limit" in fields:
        fields["cost_limit"] = Decimal(str(fields["cost_limit"]))
    return UsageLimits(**fields)


class Runtime:
    """One run's owner: the bundle, the configuration, and the state every call shares."""

    def __init__(self, bundle: LoadedBundle, config: RuntimeConfig | None = None, *,
                 durability: Durability | None = None) -> None:
        from pydantic_ai.usage import RunUsage

        self.bundle = bundle
        self.config = config or RuntimeConfig()
        node = self.bundle.runtime
        self.max_depth: int = self.config.max_depth or node["max_depth"]
        self.approval_mode: ApprovalMode = self.config.approval_mode or node["approval_mode"]
        self._approver: Approver | None = None
        limits = node.get("usage_limits")
        self.usage_limits: UsageLimits | None = self.config.usage_limits or (_usage_limits(limits) if limits else None)
        self.usage = RunUsage()
        self.meter = RunMeter(self, self.usage_limits.request_limit if self.usage_limits is not None else DEFAULT_REQUEST_LIMIT)
        """Counts the run's requests as they are sent, and prices them for a budget or a listener."""
        self.durability: Durability = durability or NO_DURABILITY
        """What makes the run durable (`durability`); by default nothing."""
        self.calls = WorkerCaller(self, self.durability)
        """The machinery of the run's worker calls."""
        self._stream: asyncio.Queue[RuntimeEvent | None] | None = None
        self._services: Services | None = None
        self._references: References | None = None
        if self.config.services:  # a bad service name is the host's mistake: say so now, not mid-run
            from .services import Services

            self._services = Services(self.config.services)
        self.mcp_servers: ServerPool | None = None
        """The run's MCP servers (`toolsets.mcp.McpServers`), open while a call runs."""
        self._flow_guard: FlowGuard | None = None
        self.thread_taint: FrameTaint | None = None
        """Set by a chat thread (`session.Conversation`) for one turn: the taint its earlier turns
        took in, which the turn's outermost call starts with and adds to; None: a run starts fresh."""

    @classmethod
    def load(cls, path: str | Path, config: RuntimeConfig | None = None) -> Runtime:
        config = config or RuntimeConfig()
        return cls(load_bundle(Path(path), as_built=config.as_built), config)

    # --- events and approvals

    @property
    def listening(self) -> bool:
        """Whether anyone takes events: without a listener none is made."""
        return self.config.on_event is not None or self._stream is not None

    def emit(self, event: RuntimeEvent) -> None:
        """Hand an event to the listeners. Callers check `listening` first and import the event
        types only then: a run nobody watches pays nothing for events."""
        if self.config.on_event is not None:
            from .host_callbacks import call_host

            call_host("on_event", self.config.on_event, event)
        if self._stream is not None:
            self._stream.put_nowait(event)

    @property
    def approver(self) -> Approver:
        """Made when a first call needs approval: a run of allowed tools never loads approvals."""
        if self._approver is None:
            from .approvals.decisions import Approver

            self._approver = Approver(self.approval_mode, self.config.approval_callback, self.config.interactive)
        return self._approver

    @property
    def flow_denied(self) -> int:
        """Calls the taint guard asked that the `approve_all` mode denied in this runtime's runs."""
        return 0 if self._approver is None else self._approver.flow_denied

    async def request_approval(self, request: ApprovalRequest) -> tuple[ApprovalDecision, str]:
        """The answer to a call the gate asks about, and who gave it; a durable run may wait for it
        its own way (`Durability.approve`)."""
        return await self.durability.approve(self, request, lambda: self.ask_approval(request))

    async def ask_approval(self, request: ApprovalRequest) -> tuple[ApprovalDecision, str]:
        """Ask now: the host's event stream, else the approver (mode, callback or terminal)."""
        from .approvals.decisions import ApprovalDecision

        approver = self.approver
        if self._stream is not None and approver.mode == "prompt" and approver.callback is None:
            if approver.remembered(request):
                return ApprovalDecision(True, "session"), "session"
            future: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
            from .events import ApprovalRequested

            self.emit(ApprovalRequested.of(request, _respond=lambda d: None if future.done() else future.set_result(d)))
            decision = await future
            if decision.approved and decision.remember == "session":
                approver.remember(request)
            return decision, "host"
        if approver.mode == "prompt" and self.listening:
            from .events import ApprovalRequested

            self.emit(ApprovalRequested.of(request))
        return await approver.decide(request)

    @property
    def flow_guard(self) -> FlowGuard:
        """The bundle's flow policy (`taint`), made when a first worker with labelled grants is
        called or its gate consulted: a run of unlabelled workers never imports it."""
        if self._flow_guard is None:
            from .taint import FlowGuard

            self._flow_guard = FlowGuard(self.bundle.text.get("flows"), self.bundle.root)
        return self._flow_guard

    # --- what tools and entry code reach through ctx.deps

    @property
    def services(self) -> Services:
        if self._services is None:
            from .services import Services

            self._services = Services(self.config.services)
        return self._services

    @property
    def references(self) -> References:
        """Made on first use; lives as long as this Runtime (a run, or a conversation's turns)."""
        if self._references is None:
            from .references import References

            self._references = References(self.config.reference_store)
        return self._references

    def check_services(self, worker: str) -> None:
        """Before any model is called: every service the workers reachable from `worker` declare
        was given (`ServiceProblem`, exit 2, names the first that was not). The bundle's top-level
        `services` says which services any worker declares: when it is absent or every one was
        given, no worker node is read and `services` is never imported."""
        declared = self.bundle.declared_services()
        given = self.config.services or {}
        if all(name in given for name in declared):
            return
        from .services import check_services

        check_services(self.bundle, worker, given)

    # --- schemas

    def input_class(self, spec: WorkerSpec) -> type[WorkerArgs]:
        return self.calls.input_class(spec)

    def output_class(self, spec: WorkerSpec) -> type:
        """The worker's output class (`str` for text): a durable run's output crossed the workflow
        as JSON and is read back with it."""
        return self.calls.output_class(spec)

    def entry_input_class(self) -> type[WorkerArgs]:
        """The input schema of the run's entry: the entry worker's, or the entry function's."""
        function = self.bundle.entry_function
        if function is not None:
            return self.calls.load_class(function["input"]["module"], function["input"]["qualname"])
        return self.input_class(self._entry_worker_spec())

    def _entry_worker_spec(self) -> WorkerSpec:
        name = self.bundle.entry.get("worker")
        spec = self.bundle.worker(name) if name else None
        if spec is None:
            raise InputProblem(f"the bundle's entry names no worker it has (entry.worker: {name!r})")
        return spec

    # --- calls

    def spec(self, name: str) -> WorkerSpec | None:
        """The bundle's worker `name`, or the one created in this run, or None."""
        return self.calls.spec(name)

    def worker(self, name: str, parent: CallFrame | None = None) -> WorkerHandle:
        if self.spec(name) is None:
            raise InputProblem(f"the bundle has no worker '{name}'")
        return WorkerHandle(self, name, parent)

    async def call_worker_async(
        self, name: str, *args: object, parent: CallFrame | None = None, from_model: bool = False, **kwargs: object
    ) -> object:
        """Run worker `name` one level below `parent` (at depth 1 without one); return its output.
        A call from Python that a tool or the entry function runs must be declared (`python_calls`),
        and without a `parent` it is a callee of the frame that Python runs in."""
        if not from_model or not self._on_an_edge(parent, name):  # a model's call follows the bundle's edges
            check_python_call(name)
            if parent is None:
                parent = running_frame()
        output, _ = await self.calls.call(name, args, kwargs, parent, from_model)
        return output

    def _on_an_edge(self, parent: CallFrame | None, name: str) -> bool:
        """Whether a model in the frame `parent` may call `name` (what its worker tools offer: a
        callee of its worker, or a worker created in this run, which `worker_call` calls): a call
        that says it is a model's but is not is judged as a call from Python."""
        if parent is None or parent is not running_frame():  # a Python tool naming another frame
            return False
        caller = self.spec(parent.worker)
        return caller is not None and (name in caller.calls or self.created(name))

    # --- workers created in this run

    def create_worker(self, name: str, instructions: str, description: str, model: str | None = None, *,
                      folder: str | None = None, replace: bool = False) -> Path:
        """Write a new worker file (no tools, the given model or its caller's) below the project
        root, in `folder` (default `workers/generated`), never replacing a file, and make the
        worker callable in this run. Raises `DefinitionProblem` saying why not. `replace` (host
        code's `create_worker(..., force=True)`, never a model's `worker_create`): a worker
        created before, in this run or in that folder, is replaced rather than refused."""
        from . import created_workers as created

        folder = folder or created.DEFAULT_FOLDER
        definition = self._new_worker(name, instructions, description, model, folder, replace)
        target, source = created.save(self.bundle.root, folder, definition, replace=replace)
        self.calls.add_created(created.created_spec(definition, source))
        return target

    def check_new_worker(self, name: str, instructions: str, description: str, model: str | None = None, *,
                         folder: str | None = None) -> None:
        """What `create_worker` would refuse, found without writing (`DefinitionProblem`): the gate
        asks no one about a `worker_create` that cannot succeed."""
        from . import created_workers as created

        folder = folder or created.DEFAULT_FOLDER
        definition = self._new_worker(name, instructions, description, model, folder, False)
        created.check_free(self.bundle.root, folder, definition)

    def _new_worker(self, name: str, instructions: str, description: str, model: str | None, folder: str,
                    replace: bool) -> WorkerDefinition:
        """The checked definition: a free name (with `replace`, that of a worker created before
        may be reused), valid text, a model this bundle can build."""
        from . import created_workers as created

        taken = self._taken_names()
        if replace:
            spec = self.bundle.worker(name)
            if self.calls.created(name) or (spec is not None and spec.source == f"{folder.rstrip('/')}/{name}.worker"):
                taken.discard(name)
        definition = created.check_definition(created.WorkerDefinition(name, instructions, description, model), taken)
        if definition.model is not None:
            from llm_do.bundle.names import model_problem

            registered = set(self.bundle.text.get("model_factories") or {})
            if problem := model_problem(definition.model, registered):
                raise created.DefinitionProblem(problem[0] + (f"; {problem[1]}" if problem[1] else ""))
        return definition

    def created(self, name: str) -> bool:
        """Whether worker `name` was created in this run."""
        return self.calls.created(name)

    def _taken_names(self) -> set[str]:
        from llm_do.stdlib.registry import STDLIB_TOOLSETS

        toolsets = self.bundle.text.member_names("toolsets")
        named = {node.get("name") for k in toolsets if (node := self.bundle.toolset(k)) is not None}
        return {*self.bundle.worker_names(), *toolsets, *(n for n in named if n), *STDLIB_TOOLSETS, *self.calls.created_names()}

    # --- whole runs

    def entry_input(self, name: str, args: tuple[object, ...],
                    kwargs: dict[str, object]) -> tuple[tuple[object, ...], dict[str, object]]:
        """The input given, or else the bundle's entry.args when the run starts at the entry."""
        if args or kwargs or name != self.bundle.entry.get("worker"):
            return args, kwargs
        return (self.bundle.entry.get("args") or {},), {}

    async def run_async(self, *args: object, worker: str | None = None, message_history: list[ModelMessage] | None = None,
                        confine_attachments: bool = False, **kwargs: object) -> RunResult:
        """Run the entry (or `worker`) with the given input, default the bundle's entry.args.
        `message_history`: pydantic-ai messages of earlier turns, which the worker's model sees
        before this input (`RunResult.messages` holds them too, followed by this turn's); not for
        an entry function, which has no model. `confine_attachments`: the input comes from someone
        other than the user (an MCP client), so its attachments must lie inside the project, as a
        model's must."""
        function = None if worker else self.bundle.entry_function
        if function is not None:
            if message_history:
                raise InputProblem("the entry is a Python function, which has no conversation: give message_history "
                                   "with worker=NAME")
            from .entry_function import run_entry_function

            given = (args, kwargs) if args or kwargs else ((self.bundle.entry.get("args") or {},), {})
            call = _no_frame(run_entry_function(self, function, *given), function["name"])
        else:
            name = worker or self.bundle.entry.get("worker")
            if not name:
                raise InputProblem("the bundle's entry names neither a worker nor a function")
            args, kwargs = self.entry_input(name, args, kwargs)
            call = self.calls.call(name, args, kwargs, None, confine_attachments, message_history)
        loop = RUN_LOOP.set(asyncio.get_running_loop())
        try:
            with abandonable_tools():  # before the tasks start: they inherit it
                output, frame = await (asyncio.wait_for(call, self.config.timeout) if self.config.timeout else call)
        except TimeoutError:
            stopped = RunFailed(f"the run took longer than {self.config.timeout:g} s and was stopped")
            self._failed(stopped)
            raise stopped from None
        except BaseException as exc:
            self._failed(exc)
            raise
        finally:
            RUN_LOOP.reset(loop)
        result = RunResult(output, frame.messages, usage_dict(self.usage))
        if self.listening:
            from .events import RunFinished, jsonable

            self.emit(RunFinished(jsonable(output), result.usage))
        return result

    def _failed(self, exc: BaseException) -> None:
        """The event stream's last word when the run does not finish (none when it stopped to wait
        for a detached approval: its `approval_requested` is the last)."""
        if self.listening and not self.durability.stopped_to_wait:
            from .events import RunFailedEvent

            try:
                self.emit(RunFailedEvent(failure_line(exc), usage_dict(self.usage)))
            except Exception:  # a listener that fails now (a closed pipe) must not hide why the run ended
                pass

    def run(self, *args: object, worker: str | None = None, message_history: list[ModelMessage] | None = None,
            confine_attachments: bool = False, **kwargs: object) -> RunResult:
        return asyncio.run(self.run_async(*args, worker=worker, message_history=message_history,
                                          confine_attachments=confine_attachments, **kwargs))

    def chat(self, thread: str | None = None, *, worker: str | None = None) -> Conversation:
        """A conversation with the entry worker (or `worker`) on this runtime: `send(message)` runs
        one turn with the history so far. `thread` (an id) keeps it in the bundle directory's
        `.llm-do/threads/ID.json` and continues it from there."""
        from .conversation import Conversation

        return Conversation(self, thread=thread, worker=worker)

    async def events(self, *args: object, worker: str | None = None, message_history: list[ModelMessage] | None = None,
                     confine_attachments: bool = False, **kwargs: object) -> AsyncIterator[RuntimeEvent]:
        """Run while yielding every event; in `prompt` mode without a callback, the host answers each
        `ApprovalRequested` with `event.respond(ApprovalDecision(...))`."""
        self._stream = asyncio.Queue()
        task = asyncio.ensure_future(self.run_async(*args, worker=worker, message_history=message_history,
                                                    confine_attachments=confine_attachments, **kwargs))
        task.add_done_callback(lambda _: self._stream.put_nowait(None) if self._stream else None)
        try:
            while True:
                event = await self._stream.get()
                if event is None:
                    break
                yield event
            task.result()
        finally:
            self._stream = None
            if not task.done():
                task.cancel()


async def _no_frame(call: Awaitable[object], label: str) -> tuple[object, CallFrame]:
    """An entry function's output, with the frame a run's result reads messages from (none)."""
    return await call, CallFrame(label, 0)

"""`Runtime`: one process-wide owner of a run's configuration and shared state (usage, approvals,
events), and the place worker calls happen.

A call builds a fresh frame and fresh toolsets, checks depth, validates its input, builds the
prompt, picks the model, and runs the worker's pydantic-ai Agent with the shared usage.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from llm_do.bundle.views import WorkerSpec
from llm_do.toolkit import user_code

from .args import WorkerArgs
from .bundle import BundleRefused, LoadedBundle, load_bundle
from .call_scope import CallContext, CallFrame, CallScope, WorkerHandle
from .config import RuntimeConfig
from .errors import CallRefused, InputProblem, RunFailed, ToolsetProblem, failure_line

if TYPE_CHECKING:
    from .approvals import ApprovalDecision, ApprovalRequest, Approver
    from .events import RuntimeEvent
    from .references import References
    from .services import Services
    from .session import Conversation
from llm_do.toolkit.tool_threads import abandonable_tools

from .inputs import WorkerInputError, normalize_input
from .models import ModelProblem, build_model, choose_model, model_label
from .prompt import AttachmentProblem, build_prompt


class RunResult(NamedTuple):
    output: Any
    messages: list[Any]
    usage: dict[str, int]


class Runtime:
    """One run's owner: the bundle, the configuration, and the state every call shares."""

    def __init__(self, bundle: LoadedBundle, config: RuntimeConfig | None = None) -> None:
        from pydantic_ai.usage import RunUsage, UsageLimits

        self.bundle = bundle
        self.config = config or RuntimeConfig()
        node = self.bundle.runtime
        self.max_depth: int = self.config.max_depth or node["max_depth"]
        self.approval_mode = self.config.approval_mode or node["approval_mode"]
        self._approver: Approver | None = None
        limits = node.get("usage_limits")
        self.usage_limits = self.config.usage_limits or (UsageLimits(**limits) if limits else None)
        self.usage = RunUsage()
        self._agents = self.bundle.agents
        self._created: dict[str, WorkerSpec] = {}
        """Workers created in this run (`create_worker`), by name: only this run may call them."""
        self._created_agents: dict[str, Any] = {}
        self._models = self.bundle.models
        self._classes: dict[tuple[str, str], Any] = {}
        self._stream: asyncio.Queue[RuntimeEvent | None] | None = None
        self._services: Services | None = None
        self._references: References | None = None
        if self.config.services:  # a bad service name is the host's mistake: say so now, not mid-run
            from .services import Services

            self._services = Services(self.config.services)
        self.mcp_servers: Any = None
        """The run's MCP servers (`toolsets.mcp.McpServers`), open while a call runs."""

    @classmethod
    def load(cls, path: str | Path, config: RuntimeConfig | None = None) -> Runtime:
        return cls(load_bundle(Path(path)), config or RuntimeConfig())

    # --- events and approvals

    @property
    def listening(self) -> bool:
        """Whether anyone takes events: without a listener none is made."""
        return self.config.on_event is not None or self._stream is not None

    def emit(self, event: RuntimeEvent) -> None:
        """Hand an event to the listeners. Callers check `listening` first and import the event
        types only then: a run nobody watches pays nothing for events."""
        if self.config.on_event is not None:
            self.config.on_event(event)
        if self._stream is not None:
            self._stream.put_nowait(event)

    @property
    def approver(self) -> Approver:
        """Made when a first call needs approval: a run of allowed tools never loads approvals."""
        if self._approver is None:
            from .approvals import Approver

            self._approver = Approver(self.approval_mode, self.config.approval_callback, self.config.interactive)
        return self._approver

    async def request_approval(self, request: ApprovalRequest, shown: dict[str, Any] | None = None) -> tuple[ApprovalDecision, str]:
        from .approvals import ApprovalDecision

        approver = self.approver
        if self._stream is not None and approver.mode == "prompt" and approver.callback is None:
            if approver.remembered(request):
                return ApprovalDecision(True, "session"), "session"
            future: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
            from .events import ApprovalRequested

            self.emit(ApprovalRequested(request.worker, request.depth, request.tool, request.args, request.toolset,
                                        _respond=lambda d: future.done() or future.set_result(d)))
            decision = await future
            if decision.approved and decision.remember == "session":
                approver.remember(request)
            return decision, "host"
        if approver.mode == "prompt" and self.listening:
            from .events import ApprovalRequested

            self.emit(ApprovalRequested(request.worker, request.depth, request.tool, request.args, request.toolset))
        return await approver.decide(request, shown)

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

    def _class(self, module: str, qualname: str) -> Any:
        key = (module, qualname)
        if key not in self._classes:
            try:
                self._classes[key] = user_code.resolve_attr(self.bundle.import_module(module), qualname)
            except BundleRefused:
                raise
            except Exception as exc:
                raise RunFailed(f"cannot load {module}:{qualname}: {type(exc).__name__}: {exc}") from None
        return self._classes[key]

    def input_class(self, spec: WorkerSpec) -> type[WorkerArgs]:
        return self._class(spec.input.module, spec.input.qualname)

    def entry_input_class(self) -> type[WorkerArgs]:
        """The input schema of the run's entry: the entry worker's, or the entry function's."""
        function = self.bundle.entry_function
        if function is not None:
            return self._class(function["input"]["module"], function["input"]["qualname"])
        return self.input_class(self.bundle.worker(self.bundle.entry["worker"]))

    # --- calls

    def spec(self, name: str) -> WorkerSpec | None:
        """The bundle's worker `name`, or the one created in this run, or None."""
        return self.bundle.worker(name) or self._created.get(name)

    def worker(self, name: str, parent: CallFrame | None = None) -> WorkerHandle:
        if self.spec(name) is None:
            raise InputProblem(f"the bundle has no worker '{name}'")
        return WorkerHandle(self, name, parent)

    # --- workers created in this run

    def create_worker(self, name: str, instructions: str, description: str, model: str | None = None, *,
                      folder: str | None = None) -> Path:
        """Write a new worker file (no tools, the given model or its caller's) below the project
        root, in `folder` (default `workers/generated`), never replacing a file, and make the
        worker callable in this run. Raises `DefinitionProblem` saying why not."""
        from . import created_workers as created

        definition = created.check_definition(created.WorkerDefinition(name, instructions, description, model),
                                              self._taken_names())
        if definition.model is not None:
            from llm_do.bundle.names import model_problem

            registered = set(self.bundle.text.get("model_factories") or {})
            if problem := model_problem(definition.model, registered):
                raise created.DefinitionProblem(problem[0] + (f"; {problem[1]}" if problem[1] else ""))
        target, source = created.save(self.bundle.root, folder or created.DEFAULT_FOLDER, definition)
        self._created[definition.name] = created.created_spec(definition, source)
        return target

    def created(self, name: str) -> bool:
        """Whether worker `name` was created in this run."""
        return name in self._created

    def _taken_names(self) -> set[str]:
        from llm_do.stdlib.registry import STDLIB_TOOLSETS

        toolsets = self.bundle.text.member_names("toolsets")
        named = {(self.bundle.toolset(k) or {}).get("name") for k in toolsets}
        return {*self.bundle.worker_names(), *toolsets, *(n for n in named if n), *STDLIB_TOOLSETS, *self._created}

    async def call_worker_async(
        self, name: str, *args: Any, parent: CallFrame | None = None, from_model: bool = False, **kwargs: Any
    ) -> Any:
        """Run worker `name` one level below `parent` (at depth 1 without one); return its output."""
        output, _ = await self._call(name, args, kwargs, parent, from_model)
        return output

    async def _call(
        self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any], parent: CallFrame | None, from_model: bool,
        message_history: list[Any] | None = None,
    ) -> tuple[Any, CallFrame]:
        depth = 1 if parent is None else parent.depth + 1
        spec = self.spec(name)
        if spec is None:
            raise InputProblem(f"the bundle has no worker '{name}'")
        if depth > self.max_depth:
            raise CallRefused(f"calling '{name}' would run at depth {depth}, past max_depth {self.max_depth}; it was not called")
        if parent is None:
            self.check_services(name)
        elif spec.services:  # a worker a Python tool calls need not be reachable by the bundle's edges
            from .services import check_worker_services

            check_worker_services(name, spec.services, self.config.services or {})
        try:
            worker_args = normalize_input(name, self.input_class(spec), args, kwargs)
            prompt = build_prompt(worker_args, spec.attachments, self.bundle.root, confined=from_model)
        except (WorkerInputError, AttachmentProblem) as exc:
            if parent is not None:
                raise CallRefused(str(exc)) from None
            raise InputProblem(str(exc)) from None
        frame = CallFrame(name, depth, parent)
        if self.mcp_servers is None and self.bundle.mcp_server_keys():
            return await self._run_with_mcp_servers(spec, frame, prompt, message_history), frame
        return await self._run(spec, frame, prompt, message_history), frame

    async def _run_with_mcp_servers(self, spec: WorkerSpec, frame: CallFrame, prompt: Any,
                                    message_history: list[Any] | None) -> Any:
        """The outermost call of a bundle with MCP servers: they are started (the required ones
        now, before any model call), shared by every call below, and stopped when it ends."""
        from .toolsets.mcp import McpServers

        async with McpServers(self.bundle) as servers:
            self.mcp_servers = servers
            try:
                return await self._run(spec, frame, prompt, message_history)
            finally:
                self.mcp_servers = None

    def _model(self, spec: WorkerSpec, frame: CallFrame | None = None) -> tuple[Any, str]:
        """The model of a call (its `frame`, which records it: its callees inherit it)."""
        override = self.config.model_for(spec.name) if self.config.model_for else self.config.model
        inherited = frame.parent.model if frame is not None and frame.parent is not None else None
        try:
            chosen = choose_model(spec, self.bundle.defaults.get("model"), override, inherited)
            if frame is not None:
                frame.model = chosen
            label = model_label(chosen)
            if isinstance(chosen, str):
                if chosen not in self._models:
                    self._import_model_factory(chosen)
                    self._models[chosen] = build_model(chosen)
                chosen = self._models[chosen]
        except ModelProblem as exc:
            raise RunFailed(str(exc)) from None
        return chosen, label

    def _import_model_factory(self, model: str) -> None:
        """Import the project module that registers the model's provider prefix, if one does
        (the bundle's `model_factories`), so that its factory builds the model."""
        module = (self.bundle.text.get("model_factories") or {}).get(model.partition(":")[0])
        if module is None:
            return
        try:
            self.bundle.import_module(module)
        except BundleRefused:
            raise
        except Exception as exc:  # user code: report, do not crash the runtime with a traceback
            raise ModelProblem(f"cannot use model '{model}': importing '{module}' failed: {type(exc).__name__}: {exc}") from None

    def _agent(self, spec: WorkerSpec) -> Any:
        agents = self._created_agents if spec.name in self._created else self._agents
        agent = agents.get(spec.name)
        if agent is None:
            from pydantic_ai import Agent

            output_type: Any = str
            if spec.output is not None:
                output_type = self._class(spec.output.module, spec.output.qualname)
            agent = Agent(
                output_type=output_type,
                instructions=spec.instructions,
                deps_type=CallContext,
                name=spec.name,
                defer_model_check=True,
                capabilities=_native_tools(spec.server_side_tools) or None,
            )
            agents[spec.name] = agent
        return agent

    def _toolsets(self, spec: WorkerSpec) -> Any:
        """A call's toolsets behind the gate (a durable run wraps the gated tools in steps)."""
        from .toolset_builder import build_toolsets

        return build_toolsets(self, spec)

    async def _run(self, spec: WorkerSpec, frame: CallFrame, prompt: Any, message_history: list[Any] | None = None) -> Any:
        model, label = self._model(spec, frame)
        settings = spec.model_settings or self.bundle.defaults.get("model_settings")
        try:
            async with CallScope(self, frame, self._toolsets(spec)) as scope:
                if self.listening:
                    from .events import WorkerStarted

                    self.emit(WorkerStarted(spec.name, frame.depth, label))
                with _tool_call_order(model):
                    result = await self._agent(spec).run(
                        prompt,
                        deps=scope.context,
                        model=model,
                        toolsets=[scope.toolsets] if scope.toolsets is not None else None,
                        usage=self.usage,
                        usage_limits=self.usage_limits,
                        model_settings=settings,
                        message_history=message_history,
                        event_stream_handler=self._stream_handler(frame) if self._streams(model) else None,
                    )
        except ToolsetProblem as exc:
            raise RunFailed(f"worker '{spec.name}': {exc}") from None
        frame.messages = result.all_messages()
        if self.config.on_message is not None:
            self.config.on_message(spec.name, frame.depth, frame.messages)
        if self.listening:
            from .events import WorkerFinished, jsonable

            self.emit(WorkerFinished(spec.name, frame.depth, jsonable(result.output), usage_dict(self.usage)))
        return result.output

    def _streams(self, model: Any) -> bool:
        """Whether this call streams: the run asks for it, someone listens, and the model can (a
        host's FunctionModel without a stream function cannot; it answers whole)."""
        return self.config.stream and self.listening and getattr(model, "stream_function", True) is not None

    def _stream_handler(self, frame: CallFrame) -> Any:
        """Hands the text of a streamed response to the listeners as `OutputDelta` events."""
        from pydantic_ai import PartDeltaEvent, PartStartEvent, TextPart, TextPartDelta

        from .events import OutputDelta

        async def handle(ctx: Any, events: Any) -> None:
            async for event in events:
                if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                    text = event.part.content
                elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                    text = event.delta.content_delta
                else:
                    continue
                if text:
                    self.emit(OutputDelta(frame.worker, frame.depth, text))

        return handle

    # --- whole runs

    def entry_input(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The input given, or else the bundle's entry.args when the run starts at the entry."""
        if args or kwargs or name != self.bundle.entry.get("worker"):
            return args, kwargs
        return (self.bundle.entry.get("args") or {},), {}

    async def run_async(self, *args: Any, worker: str | None = None, message_history: list[Any] | None = None,
                        confine_attachments: bool = False, **kwargs: Any) -> RunResult:
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
            name = worker or self.bundle.entry["worker"]
            args, kwargs = self.entry_input(name, args, kwargs)
            call = self._call(name, args, kwargs, None, confine_attachments, message_history)
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
        result = RunResult(output, frame.messages, usage_dict(self.usage))
        if self.listening:
            from .events import RunFinished, jsonable

            self.emit(RunFinished(jsonable(output), result.usage))
        return result

    def _failed(self, exc: BaseException) -> None:
        """The event stream's last word when the run does not finish."""
        if self.listening:
            from .events import RunFailedEvent

            try:
                self.emit(RunFailedEvent(failure_line(exc), usage_dict(self.usage)))
            except Exception:  # a listener that fails now (a closed pipe) must not hide why the run ended
                pass

    def run(self, *args: Any, worker: str | None = None, message_history: list[Any] | None = None,
            **kwargs: Any) -> RunResult:
        return asyncio.run(self.run_async(*args, worker=worker, message_history=message_history, **kwargs))

    def chat(self, thread: str | None = None, *, worker: str | None = None) -> Conversation:
        """A conversation with the entry worker (or `worker`) on this runtime: `send(message)` runs
        one turn with the history so far. `thread` (an id) keeps it in the bundle directory's
        `.llm-do/threads/ID.json` and continues it from there."""
        from .session import Conversation

        return Conversation(self, thread=thread, worker=worker)

    async def events(self, *args: Any, worker: str | None = None, **kwargs: Any) -> AsyncIterator[RuntimeEvent]:
        """Run while yielding every event; in `prompt` mode without a callback, the host answers each
        `ApprovalRequested` with `event.respond(ApprovalDecision(...))`."""
        self._stream = asyncio.Queue()
        task = asyncio.ensure_future(self.run_async(*args, worker=worker, **kwargs))
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


async def _no_frame(call: Any, label: str) -> tuple[Any, CallFrame]:
    """An entry function's output, with the frame a run's result reads messages from (none)."""
    return await call, CallFrame(label, 0)


def usage_dict(usage: Any) -> dict[str, int]:
    return {
        "requests": usage.requests,
        "tool_calls": usage.tool_calls,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
    }


def _tool_call_order(model: Any) -> AbstractContextManager[None]:
    """A scripted model's tool calls run one after another in the order given (spec/runtime.md);
    a real model's calls of one response may run concurrently, as pydantic-ai runs them."""
    if not getattr(model, "runs_tool_calls_in_order", False):
        return nullcontext()
    from pydantic_ai.tool_manager import ToolManager

    return ToolManager.parallel_execution_mode("sequential")


def _native_tools(configs: tuple[dict[str, Any], ...]) -> list[Any]:
    """`server_side_tools` of the .agent era as pydantic-ai native tools."""
    if not configs:
        return []
    from pydantic_ai.capabilities import NativeTool
    from pydantic_ai.native_tools import CodeExecutionTool, ImageGenerationTool, WebFetchTool, WebSearchTool

    out = []
    for cfg in configs:
        kind = cfg.get("tool_type")
        if kind == "web_search":
            tool = WebSearchTool(max_uses=cfg.get("max_uses"), blocked_domains=cfg.get("blocked_domains"),
                                 allowed_domains=cfg.get("allowed_domains"))
        elif kind == "web_fetch":
            tool = WebFetchTool()
        elif kind == "code_execution":
            tool = CodeExecutionTool()
        elif kind == "image_generation":
            tool = ImageGenerationTool()
        else:
            raise RunFailed(f"unknown server_side_tools tool_type '{kind}' (web_search, web_fetch, code_execution, image_generation)")
        out.append(NativeTool(tool))
    return out

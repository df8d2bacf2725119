"""How one worker call happens: find the worker, check the depth, turn the input into a prompt,
pick the model, build (once) the worker's pydantic-ai Agent, build the call's toolsets behind the
gate, and run the Agent with the run's shared usage.

`WorkerCaller` is the `Runtime`'s machinery for this; the `Runtime` (the composer) owns the
configuration and the state every call shares, and is what toolsets and tools see (`RunHost`).
What a durable run changes (the Agent's capabilities, the model fixed in advance, the tools
wrapped in steps) comes from the run's `Durability`, never from overriding a method here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any, Protocol, cast

from llm_do.bundle.errors import BundleRefused
from llm_do.bundle.views import WorkerSpec
from llm_do.toolkit import user_code

from .call_scope import CARRIED, CallContext, CallFrame, CallScope
from .errors import CallRefused, InputProblem, RunFailed, ToolsetProblem
from .inputs import WorkerInputProblem, normalize_input
from .metering import METERED_CALL, MeteredCall, RunMeter, metered
from .models import ModelProblem, build_model, choose_model, model_label
from .prompt import AttachmentProblem, build_prompt

if TYPE_CHECKING:
    from collections.abc import AsyncIterable

    from pydantic_ai import Agent
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.messages import AgentStreamEvent, ModelMessage, UserContent
    from pydantic_ai.models import Model
    from pydantic_ai.settings import ModelSettings
    from pydantic_ai.tools import RunContext
    from pydantic_ai.toolsets import AbstractToolset
    from pydantic_ai.usage import RunUsage, UsageLimits

    from .args import WorkerArgs
    from .call_scope import RunHost
    from .durability import Durability
    from .quarantine import Quarantine
    from .taint import FrameTaint

    class CallHost(RunHost, Protocol):
        """What the calls need of the run that makes them (implemented by `Runtime`)."""

        max_depth: int
        usage: RunUsage
        usage_limits: UsageLimits | None
        meter: RunMeter
        thread_taint: FrameTaint | None

        def check_services(self, worker: str) -> None: ...


class WorkerCaller:
    """The worker calls of one run (`runtime`): its workers (the bundle's and those created in this
    run), their input and output classes, models and Agents, and the call itself."""

    def __init__(self, runtime: CallHost, durability: Durability) -> None:
        self.runtime = runtime
        self.bundle = runtime.bundle
        self.durability = durability
        self._agents = durability.agent_cache(self.bundle)
        self._created: dict[str, WorkerSpec] = {}
        """Workers created in this run (`create_worker`), by name: only this run may call them."""
        self._created_agents: dict[str, Agent[CallContext, object]] = {}
        self._models = self.bundle.models
        self._classes: dict[tuple[str, str], type] = {}

    # --- the workers

    def spec(self, name: str) -> WorkerSpec | None:
        """The bundle's worker `name`, or the one created in this run, or None."""
        return self.bundle.worker(name) or self._created.get(name)

    def add_created(self, spec: WorkerSpec) -> None:
        self._created[spec.name] = spec
        self._created_agents.pop(spec.name, None)  # replaced (`create_worker(..., force=True)`): a new agent

    def created(self, name: str) -> bool:
        """Whether worker `name` was created in this run."""
        return name in self._created

    def created_names(self) -> set[str]:
        return set(self._created)

    # --- schemas

    def load_class(self, module: str, qualname: str) -> type:
        """A class of the project's verified Python (an input or output schema), imported once."""
        key = (module, qualname)
        if key not in self._classes:
            try:
                self._classes[key] = cast("type", user_code.resolve_attr(self.bundle.import_module(module), qualname))
            except BundleRefused:
                raise
            except Exception as exc:
                raise RunFailed(f"cannot load {module}:{qualname}: {type(exc).__name__}: {exc}") from None
        return self._classes[key]

    def input_class(self, spec: WorkerSpec) -> type[WorkerArgs]:
        return self.load_class(spec.input.module, spec.input.qualname)

    def output_class(self, spec: WorkerSpec) -> type:
        """The worker's output class; `str` for a worker whose output is text."""
        if spec.output is None:
            return str
        return self.load_class(spec.output.module, spec.output.qualname)

    # --- one call

    async def call(
        self, name: str, args: tuple[object, ...], kwargs: dict[str, object], parent: CallFrame | None, from_model: bool,
        message_history: list[ModelMessage] | None = None,
    ) -> tuple[object, CallFrame]:
        """Run worker `name` one level below `parent` (at depth 1 without one); its output and frame.
        `from_model`: the input comes from a model (or a client), so its attachments are confined."""
        runtime = self.runtime
        depth = 1 if parent is None else parent.depth + 1
        spec = self.spec(name)
        if spec is None:
            raise InputProblem(f"the bundle has no worker '{name}'")
        if depth > runtime.max_depth:
            raise CallRefused(f"calling '{name}' would run at depth {depth}, past max_depth {runtime.max_depth}; it was not called")
        if parent is None:
            runtime.check_services(name)
        elif spec.services:  # a worker a Python tool calls need not be reachable by the bundle's edges
            from .services import check_worker_services

            check_worker_services(name, spec.services, runtime.config.services or {})
        try:
            worker_args = normalize_input(name, self.input_class(spec), args, kwargs)
            prompt = build_prompt(worker_args, spec.attachments, self.bundle.root, confined=from_model, lock=self.bundle.path)
        except (WorkerInputProblem, AttachmentProblem) as exc:
            if parent is not None:
                raise CallRefused(str(exc)) from None
            raise InputProblem(str(exc)) from None
        frame = CallFrame(name, depth, parent)
        # taint (`taint`): down with the arguments, up with the output (or a failure's message)
        frame.taint = parent.taint if parent is not None else runtime.thread_taint or frame.taint
        if parent is not None and (carried := CARRIED.get()):  # arguments that held kept outputs
            frame.taint = frame.taint | carried
        if spec.server_side_tools:
            frame.taint = runtime.flow_guard.start(spec, frame.taint)
        output: object = None
        keeping = self._keeping(spec, parent) if spec.quarantined and from_model and parent is not None else None
        try:
            output = await self._call(spec, frame, prompt, message_history)
            if keeping is not None:  # its caller's model reads a token, and takes in nothing (`quarantine`)
                kept, token = keeping
                return kept.keep(token, output, returned_taint(spec, frame.taint, output)), frame
            return output, frame
        finally:
            if parent is not None:
                if frame.taint is not parent.taint and not (keeping is not None and output is not None):
                    parent.taint = parent.taint | returned_taint(spec, frame.taint, output)
            elif runtime.thread_taint is not None:
                runtime.thread_taint = frame.taint

    @staticmethod
    def _keeping(spec: WorkerSpec, parent: CallFrame) -> tuple[Quarantine, str]:
        """Where a quarantined worker's call from a model is kept (its caller's frame) and its token,
        reserved there now."""
        if parent.kept is None:
            from .quarantine import Quarantine

            parent.kept = Quarantine()
        return parent.kept, parent.kept.reserve(spec.name)

    async def _call(self, spec: WorkerSpec, frame: CallFrame, prompt: str | list[UserContent],
                    message_history: list[ModelMessage] | None) -> object:
        if self.runtime.mcp_servers is None and self.bundle.mcp_server_keys():
            return await self._run_with_mcp_servers(spec, frame, prompt, message_history)
        return await self._run(spec, frame, prompt, message_history)

    async def _run_with_mcp_servers(self, spec: WorkerSpec, frame: CallFrame, prompt: str | list[UserContent],
                                    message_history: list[ModelMessage] | None) -> object:
        """The outermost call of a bundle with MCP servers: they are started (the required ones
        now, before any model call), shared by every call below, and stopped when it ends."""
        from .toolsets.mcp import McpServers

        async with McpServers(self.bundle, remote=self.runtime.config.remote_mcp) as servers:
            self.runtime.mcp_servers = servers
            try:
                return await self._run(spec, frame, prompt, message_history)
            finally:
                self.runtime.mcp_servers = None

    def model(self, spec: WorkerSpec, frame: CallFrame | None = None) -> tuple[Model, str]:
        """The model of a call and its label: the one the run's durability fixed for the worker,
        else chosen now (and recorded in `frame`: its callees inherit it)."""
        fixed = self.durability.model_for(spec)
        if fixed is not None:
            return fixed
        config = self.runtime.config
        override = config.model_for(spec.name) if config.model_for else config.model
        inherited = frame.parent.model if frame is not None and frame.parent is not None else None
        try:
            chosen = choose_model(spec, self.bundle.defaults.get("model"), override, inherited, config.fallback_model)
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

    def agent(self, spec: WorkerSpec) -> Agent[CallContext, object]:
        """The worker's pydantic-ai Agent, built on first use: its instructions and output type,
        its native tools and whatever capabilities the run's durability adds (and the model, when
        the durability fixed one)."""
        agents = self._created_agents if spec.name in self._created else self._agents
        agent = agents.get(spec.name)
        if agent is None:
            from pydantic_ai import Agent

            fixed = self.durability.model_for(spec)
            capabilities = [*native_tools(spec.server_side_tools), *self.durability.agent_capabilities(spec)]
            agent = Agent(
                fixed[0] if fixed is not None else None,
                output_type=self.output_class(spec),
                instructions=spec.instructions,
                deps_type=CallContext,
                name=spec.name,
                defer_model_check=True,
                capabilities=capabilities or None,
            )
            agents[spec.name] = agent
        return agent

    def toolsets(self, spec: WorkerSpec) -> AbstractToolset[CallContext] | None:
        """A call's toolsets behind the gate (what the gate wraps, the durability may wrap first)."""
        from .toolset_builder import build_toolsets

        return build_toolsets(self.runtime, spec, self.durability.wrap_tools)

    async def _run(self, spec: WorkerSpec, frame: CallFrame, prompt: str | list[UserContent],
                   message_history: list[ModelMessage] | None = None) -> object:
        runtime = self.runtime
        model, label = self.model(spec, frame)
        if runtime.config.wrap_model is not None:
            model, label = runtime.config.wrap_model(model, frame, spec, label)
        model = metered(model)
        metering = METERED_CALL.set(MeteredCall(runtime.meter, frame, spec, label))
        settings = cast("ModelSettings | None", spec.model_settings or self.bundle.defaults.get("model_settings"))
        try:
            async with CallScope(runtime, frame, self.toolsets(spec)) as scope:
                if runtime.listening:
                    from .events import WorkerStarted

                    runtime.emit(WorkerStarted(spec.name, frame.depth, label))
                with _tool_call_order(model):
                    result = await self.agent(spec).run(
                        prompt,
                        deps=scope.context,
                        model=model,
                        toolsets=[scope.toolsets] if scope.toolsets is not None else None,
                        usage=runtime.usage,
                        usage_limits=runtime.usage_limits,
                        model_settings=settings,
                        message_history=message_history,
                        event_stream_handler=self._stream_handler(frame) if self._streams(model) else None,
                    )
        except ToolsetProblem as exc:
            raise RunFailed(f"worker '{spec.name}': {exc}") from None
        except _model_api_error() as exc:  # evaluated only when something was raised
            from .model_errors import model_failed

            raise model_failed(exc, spec.name, label) from exc
        finally:
            METERED_CALL.reset(metering)
        frame.messages = result.all_messages()
        if runtime.config.on_message is not None:
            from .host_callbacks import call_host

            call_host("message_callback", runtime.config.on_message, spec.name, frame.depth, frame.messages)
        output = result.output
        if frame.kept:  # tokens in its answer: the outputs they stand for, and what those carry
            from .quarantine import KeptOutputProblem, reveal_output

            try:
                output, carried = reveal_output(frame.kept, output)
            except KeptOutputProblem as exc:  # its caller (a Python tool) may read the failure: it carries the words' taint
                frame.taint = frame.taint | exc.carried
                raise RunFailed(f"worker '{spec.name}': its answer, with the kept outputs put in place of their "
                                f"tokens, {exc}") from None
            if carried:
                frame.taint = frame.taint | carried
        if runtime.listening:
            from .events import WorkerFinished, jsonable

            runtime.emit(WorkerFinished(spec.name, frame.depth, jsonable(output), usage_dict(runtime.usage)))
        return output

    def _streams(self, model: Model) -> bool:
        """Whether this call streams: the run asks for it, someone listens, and the model can (a
        host's FunctionModel without a stream function cannot; it answers whole)."""
        return self.runtime.config.stream and self.runtime.listening and getattr(model, "stream_function", True) is not None

    def _stream_handler(
        self, frame: CallFrame
    ) -> Callable[[RunContext[CallContext], AsyncIterable[AgentStreamEvent]], Awaitable[None]]:
        """Hands the text of a streamed response to the listeners as `OutputDelta` events."""
        from pydantic_ai import PartDeltaEvent, PartStartEvent, TextPart, TextPartDelta

        from .events import OutputDelta

        emit = self.runtime.emit

        async def handle(ctx: RunContext[CallContext], events: AsyncIterable[AgentStreamEvent]) -> None:
            async for event in events:
                if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
                    text = event.part.content
                elif isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
                    text = event.delta.content_delta
                else:
                    continue
                if text:
                    emit(OutputDelta(frame.worker, frame.depth, text))

        return handle


def returned_taint(spec: WorkerSpec, taint: FrameTaint, output: object) -> FrameTaint:
    """What a caller takes in from a callee that held `taint` and returned `output` (None: it failed,
    and its failure's message is read). A worker whose output can carry no free text (`declassifies`)
    hands up no untrusted content, once this output is checked against its schema (red team: a
    Python class may validate less than its JSON Schema says); its private data still goes up."""
    if not spec.declassifies or output is None or spec.output is None:
        return taint
    from pydantic_core import to_jsonable_python

    from llm_do.bundle.declassify import conforms
    from llm_do.bundle.flow import UNTRUSTED

    if not conforms(to_jsonable_python(output), spec.output.json_schema):
        return taint
    return frozenset(s for s in taint if s[0] != UNTRUSTED)


def _model_api_error() -> type[BaseException]:
    """pydantic-ai's `ModelAPIError`: a request to the model failed."""
    from pydantic_ai.exceptions import ModelAPIError

    return ModelAPIError


def usage_dict(usage: RunUsage) -> dict[str, int]:
    return {
        "requests": usage.requests,
        "tool_calls": usage.tool_calls,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
    }


def _tool_call_order(model: Model) -> AbstractContextManager[None]:
    """A scripted model's tool calls run one after another in the order given (spec/runtime.md);
    a real model's calls of one response may run concurrently, as pydantic-ai runs them."""
    if not getattr(model, "runs_tool_calls_in_order", False):
        return nullcontext()
    from pydantic_ai.tool_manager import ToolManager

    return ToolManager.parallel_execution_mode("sequential")


def native_tools(configs: tuple[dict[str, Any], ...]) -> list[AbstractCapability[CallContext]]:
    """`server_side_tools` of the .agent era as pydantic-ai native tools."""
    if not configs:
        return []
    from pydantic_ai.capabilities import NativeTool
    from pydantic_ai.native_tools import (
        AbstractNativeTool,
        CodeExecutionTool,
        ImageGenerationTool,
        WebFetchTool,
        WebSearchTool,
    )

    out: list[AbstractCapability[CallContext]] = []
    for cfg in configs:
        kind = cfg.get("tool_type")
        tool: AbstractNativeTool
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

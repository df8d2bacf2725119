"""Recording a run (`--record DIR`): every worker call's model is wrapped (pydantic-ai's
`WrapperModel`) by one that passes each request on unchanged and writes down what was asked and
answered; the run's approvals are heard from its event stream. Works with any model pydantic-ai
supports, since it wraps the model, not a provider's HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from pydantic_ai.models.wrapper import WrapperModel

from ..call_scope import RUNNING_TOOL_CALL, CallFrame
from .bundle_facts import code_fingerprints, project_model, worker_node_hash
from .call_sites import CallSites
from .cassette import ApprovalRecord, CallRecord, Cassette, Exchange, RemoteServer, SensitiveRead, ToolCallRecord
from .exchanges import RequestLog, shown_of
from .message_data import digested, response_data
from .paged_reads import redact_paged_reads
from .redaction import Redactor
from .remote_mcp import RecordingServer, finished
from .sensitive_reads import attached_read, sensitive_reads

if TYPE_CHECKING:
    from pydantic import JsonValue
    from pydantic_ai import RunContext
    from pydantic_ai.messages import ModelMessage, ModelResponse
    from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
    from pydantic_ai.settings import ModelSettings

    from llm_do.bundle.model import ToolsetNode
    from llm_do.bundle.views import WorkerSpec

    from ..bundle import LoadedBundle
    from ..config import McpServer, RuntimeConfig
    from ..events import RuntimeEvent


class Recorder:
    """The recording of one run (or of one conversation, a call per turn)."""

    def __init__(self, bundle: LoadedBundle, worker: str, script: str | None = None) -> None:
        self.bundle = bundle
        self.worker = worker
        self.script = script
        """The script the run plays (relative to the project), if it plays one from the project."""
        self.sites = CallSites()
        self.ids: dict[str, str] = {}
        """Every tool call id seen -> its stable name (for the history later calls are given)."""
        self.calls: dict[str, CallRecord] = {}
        self.inputs: list[Any] = []
        self.outputs: list[Any] = []
        self.failure: str | None = None
        self._asked: dict[str | None, dict[str, Any]] = {}
        self._project_models: dict[int, str | None] = {}
        """id of a running call's frame -> the model the project gives it (its callees inherit it)."""
        self.denied: list[str] = []
        """Tools whose calls were denied while recording (`tool (worker)`)."""
        self.remote: dict[str, RemoteServer] = {}
        """Remote MCP server name -> what it listed and answered."""
        self.alerts: dict[str, SensitiveRead] = {}
        """Path -> the first read of it the project keeps in (labelled private, or denied)."""

    def wrap(self, model: Model, frame: CallFrame, spec: WorkerSpec, label: str) -> tuple[Model, str]:
        """`RuntimeConfig.wrap_model`: the call's model, recording."""
        path = self.sites.path_of(frame)
        chosen = project_model(self.bundle, spec, self._project_models.get(id(frame.parent)))
        self._project_models[id(frame)] = chosen
        record = CallRecord(path=path, worker=spec.name, model=label, node=worker_node_hash(self.bundle, spec.name),
                            code=code_fingerprints(self.bundle, spec.name))
        self.calls[path] = record
        return RecordingModel(model, self, record, chosen), label

    def config(self, config: RuntimeConfig) -> RuntimeConfig:
        """`config`, recording too: every call's model wrapped, the events heard besides its own listener."""
        from dataclasses import replace

        heard, reach = config.on_event, config.remote_mcp

        def each(event: RuntimeEvent) -> None:
            if heard is not None:
                heard(event)
            self.on_event(event)

        async def remote_mcp(name: str, node: ToolsetNode, start: Callable[[], Awaitable[McpServer]]) -> McpServer:
            """The remote server as the run's own hook gives it (one that refuses to reach it, say), recording."""
            started = start if reach is None else (lambda: reach(name, node, start))
            return await self.remote_mcp(name, node, started)

        return replace(config, wrap_model=self.wrap, on_event=each, remote_mcp=remote_mcp)

    async def remote_mcp(self, name: str, node: ToolsetNode, start: Callable[[], Awaitable[McpServer]]) -> McpServer:
        """`RuntimeConfig.remote_mcp`: the remote server started, recording."""
        server = await start()
        record = self.remote[name] = RemoteServer(name=name)
        return RecordingServer(server, record, self.sites)

    def on_event(self, event: RuntimeEvent) -> None:
        """Approvals asked and answered, placed by the tool call they gate."""
        from ..events import ApprovalDecided, ToolCalled, ToolReturned

        if isinstance(event, ToolCalled):
            self._asked[RUNNING_TOOL_CALL.get()] = event.args
        elif isinstance(event, ToolReturned) and event.outcome == "ok":
            self._read(event.worker, event.tool, self._asked.get(RUNNING_TOOL_CALL.get()) or {})
        elif isinstance(event, ApprovalDecided):
            where = self.sites.where(RUNNING_TOOL_CALL.get())
            record = self.calls.get(where[0]) if where else None
            if not event.approved:
                self.denied.append(f"{event.tool} ({event.worker})")
            if record is None:
                return
            record.approvals.append(ApprovalRecord(
                at=where[1] if where else None, tool=event.tool, args=self._asked.get(RUNNING_TOOL_CALL.get()) or {},
                approved=event.approved, by=event.by, remember=event.by == "session", note=event.note,
                feedback=event.feedback))

    def _read(self, worker: str, tool: str, args: dict[str, Any]) -> None:
        """A call that returned: what it read, and the files it attached to a worker call (read by
        the caller's own reading tool, as the gate judged them)."""
        for path, why in sensitive_reads(self.bundle, worker, tool, args):
            self._alert(SensitiveRead(path=path, why=why, tool=tool, worker=worker))
        attachments = args.get("attachments")
        for attached in attachments if isinstance(attachments, list) else []:
            found = attached_read(self.bundle, worker, attached) if isinstance(attached, str) else None
            if found is not None:
                self._alert(SensitiveRead(path=found[0], why=found[1], tool=tool, worker=worker, attached=True))

    def _alert(self, read: SensitiveRead) -> None:
        if read.path not in self.alerts:
            self.alerts[read.path] = read

    def cassette(self, redactor: Redactor) -> Cassette:
        """The recording as a cassette: paged reads and then everything redacted, the files of the
        requests kept as digests (`digested`), each call's tool calls read from the result."""
        cassette = Cassette(project=self.bundle.text.get("name"), bundle_digest=self.bundle.text.get("digest"),
                            worker=self.worker, script=self.script, inputs=self.inputs, outputs=self.outputs,
                            failure=self.failure, calls=[self.calls[path] for path in sorted(self.calls)],
                            remote_mcp=[finished(self.remote[name]) for name in sorted(self.remote)],
                            alerts=[self.alerts[path] for path in sorted(self.alerts)])
        data = cassette.model_dump(mode="json")
        redact_paged_reads(data, redactor.finder)
        redacted = redactor.data(data)
        assert isinstance(redacted, dict)  # the data of a mapping is a mapping
        for call in redacted["calls"]:
            for exchange in call["requests"]:
                exchange["messages"] = digested(exchange["messages"])
        out = Cassette.model_validate(redacted)
        for record in out.calls:
            record.tool_calls = tool_calls_of(record.requests)
        return out


class RecordingModel(WrapperModel):
    """One call's model, recording each request and its response."""

    def __init__(self, wrapped: Model, recorder: Recorder, record: CallRecord, project_model: str | None) -> None:
        super().__init__(wrapped)
        self.recorder = recorder
        self.record = record
        self.project_model = project_model
        self.log = RequestLog(recorder.ids)

    async def request(self, messages: list[ModelMessage], model_settings: ModelSettings | None,
                      model_request_parameters: ModelRequestParameters) -> ModelResponse:
        new = self.log.new_messages(messages)
        response = await self.wrapped.request(messages, model_settings, model_request_parameters)
        self._note(messages, model_request_parameters, new, response, streamed=False)
        return response

    @asynccontextmanager
    async def request_stream(self, messages: list[ModelMessage], model_settings: ModelSettings | None,
                             model_request_parameters: ModelRequestParameters,
                             run_context: RunContext[object] | None = None) -> AsyncIterator[StreamedResponse]:
        new = self.log.new_messages(messages)
        async with self.wrapped.request_stream(messages, model_settings, model_request_parameters, run_context) as stream:
            yield stream
        self._note(messages, model_request_parameters, new, stream.get(), streamed=True)

    def _note(self, messages: list[ModelMessage], params: ModelRequestParameters, new: list[dict[str, JsonValue]],
              response: ModelResponse, *, streamed: bool) -> None:
        number = self.log.count + 1
        renamed = self.recorder.sites.note_response(self.record.path, number, response)
        self.recorder.ids.update(renamed)
        self.log.answered(messages, renamed)
        data = response_data(response, {**self.log.history_ids, **self.log.own_ids})
        self.record.requests.append(Exchange(shown=shown_of(self.project_model, messages, params), messages=new,
                                             response=data, streamed=streamed))


def tool_calls_of(requests: list[Exchange]) -> list[ToolCallRecord]:
    """The tool calls the responses made, each with the result the next requests carried back."""
    results: dict[str, dict[str, Any]] = {}
    for exchange in requests:
        for message in exchange.messages:
            for part in message.get("parts", []):
                if part.get("part_kind") in ("tool-return", "retry-prompt") and "tool_call_id" in part:
                    results[part["tool_call_id"]] = part
    out = []
    for number, exchange in enumerate(requests, 1):
        calls = [p for p in exchange.response.get("parts", []) if p.get("part_kind") == "tool-call"]
        for index, part in enumerate(calls, 1):
            result = results.get(part.get("tool_call_id", ""))
            outcome = None
            if result is not None:
                outcome = "retried" if result.get("part_kind") == "retry-prompt" else result.get("outcome", "success")
            out.append(ToolCallRecord(at=f"{number}.{index}", tool=part.get("tool_name", ""), args=part.get("args"),
                                      outcome=outcome, result=None if result is None else result.get("content")))
    return out

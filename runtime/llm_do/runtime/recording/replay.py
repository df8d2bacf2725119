"""Replaying a cassette: every worker call's model is one that answers each request with the recorded
response, after checking the request is the recorded one. What the model is shown (instructions,
tools, model) that changed makes the cassette **stale**: each change is noted (`Replayer.stale`) and
the replay goes on, so that every one is found; any other difference (a tool result changed, say) is
a mismatch (`ReplayMismatch`) with a diff of the two requests. The project's own tools run for real:
only the model's turns come from the cassette.

A request is compared as the cassette keeps it: redacted with the replay's redactor (which shows no
secret in a diff), its files as digests; a redacted part of the recorded one (`[redacted $NAME]`)
stands for whatever the live one holds there (`matches_redacted`), so a replay needs neither the
recording's secrets nor the pages a secret was split across."""

from __future__ import annotations

import difflib
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING

from pydantic_ai.models.function import FunctionModel

from ..call_scope import RUNNING_TOOL_CALL, CallFrame
from .bundle_facts import project_model
from .call_sites import CallSites
from .cassette import ApprovalRecord, CallRecord, Cassette, Shown
from .exchanges import RequestLog, shown_of
from .message_data import digested, response_of
from .redaction import Redactor, matches_redacted
from .remote_replay import ReplayedServer, locked_changes
from .replay_errors import CassetteStale, ReplayMismatch

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage, ModelResponse
    from pydantic_ai.models import Model
    from pydantic_ai.models.function import AgentInfo, DeltaToolCalls

    from llm_do.bundle.model import ToolsetNode
    from llm_do.bundle.views import WorkerSpec

    from ..bundle import LoadedBundle
    from ..config import McpServer

__all__ = ["CassetteStale", "ReplayMismatch", "ReplayModel", "Replayer"]


class Replayer:
    """The replay of one cassette, for one run (or one conversation)."""

    def __init__(self, cassette: Cassette, bundle: LoadedBundle, redactor: Redactor | None = None) -> None:
        self.cassette = cassette
        self.bundle = bundle
        self.redactor = redactor or Redactor({}, [])
        self.stale: list[str] = []
        """What the models were shown that changed since the recording, as found so far."""
        self.sites = CallSites()
        self.ids: dict[str, str] = {}
        self.calls = {call.path: call for call in cassette.calls}
        self.models: dict[str, ReplayModel] = {}
        self.remote = {server.name: server for server in cassette.remote_mcp}
        self.servers: dict[str, ReplayedServer] = {}
        self._project_models: dict[int, str | None] = {}

    def wrap(self, model: Model, frame: CallFrame, spec: WorkerSpec, label: str) -> tuple[Model, str]:
        """`RuntimeConfig.wrap_model`: the call's model, replaying its recording."""
        path = self.sites.path_of(frame)
        record = self.calls.get(path)
        if record is None or record.worker != spec.name:
            recorded = ", ".join(sorted(self.calls)) or "none"
            raise ReplayMismatch(f"the run called worker '{spec.name}' as {path}, which the cassette did not record "
                                 f"(it recorded: {recorded})")
        chosen = project_model(self.bundle, spec, self._project_models.get(id(frame.parent)))
        self._project_models[id(frame)] = chosen
        replay = ReplayModel(self, record, chosen)
        self.models[path] = replay
        return replay, record.model

    async def remote_mcp(self, name: str, node: ToolsetNode, start: Callable[[], Awaitable[McpServer]]) -> McpServer:
        """`RuntimeConfig.remote_mcp`: the server's recording standing in for it (it is not started)."""
        record = self.remote.get(name)
        if record is None:
            recorded = ", ".join(sorted(self.remote)) or "none"
            raise ReplayMismatch(f"the run used remote MCP server '{name}', which the cassette did not record "
                                 f"(it recorded: {recorded})")
        changes = locked_changes(name, node, record)
        if changes:
            raise CassetteStale(changes)
        server = self.servers[name] = ReplayedServer(record, self.sites)
        return server

    def unused(self) -> list[str]:
        """Recorded calls (or requests of them, or remote MCP calls) the run did not ask for."""
        out = []
        for path, record in sorted(self.calls.items()):
            asked = self.models[path].log.count if path in self.models else 0
            if asked < len(record.requests):
                out.append(f"{path} ({asked} of {len(record.requests)} requests)")
        for name, remote in sorted(self.remote.items()):
            out += self.servers[name].unused() if name in self.servers else [f"{c.path}: {name}.{c.tool}" for c in remote.calls]
        return out

    def recorded_approval(self, tool: str) -> ApprovalRecord | None:
        """The recorded answer to the approval asked now (in the task of the tool call it gates)."""
        where = self.sites.where(RUNNING_TOOL_CALL.get())
        record = self.calls.get(where[0]) if where else None
        if record is None or where is None:
            return None
        return next((a for a in record.approvals if a.at == where[1] and a.tool == tool), None)


class ReplayModel(FunctionModel):
    """One call's recorded responses, in order; streamed as the scripted model streams its turns."""

    def __init__(self, replayer: Replayer, record: CallRecord, project_model: str | None) -> None:
        super().__init__(self._respond, stream_function=self._stream, model_name=record.model)
        self.replayer = replayer
        self.record = record
        self.project_model = project_model
        self.log = RequestLog(replayer.ids)

    async def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return self._next(messages, info)

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        from ..script import stream_chunks

        for chunk in stream_chunks(self._next(messages, info).parts):
            yield chunk

    def _next(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        record, number = self.record, self.log.count + 1
        if number > len(record.requests):
            raise ReplayMismatch(f"worker '{record.worker}' ({record.path}) made request {number}; the cassette recorded "
                                 f"{len(record.requests)}")
        exchange = record.requests[number - 1]
        now = shown_of(self.project_model, messages, info.model_request_parameters)
        changes = shown_changes(record.worker, exchange.shown, now)
        self.replayer.stale += [change for change in changes if change not in self.replayer.stale]
        # (a cassette recorded before files were kept as digests holds their data: digested here too)
        recorded, new = digested(exchange.messages), digested(self.replayer.redactor.data(self.log.new_messages(messages)))
        if f"instructions of {record.worker} changed" in changes:  # said once, not again as a difference
            recorded, new = _without_instructions(recorded), _without_instructions(new)
        if not matches_redacted(recorded, new):
            raise ReplayMismatch(f"request {number} of worker '{record.worker}' ({record.path}) differs from the "
                                 f"recorded one:\n{request_diff(recorded, new)}")
        response = response_of(exchange.response)
        renamed = self.replayer.sites.note_response(record.path, number, response)
        self.replayer.ids.update(renamed)
        self.log.answered(messages, renamed)
        return response


def _without_instructions(messages: object) -> object:
    if not isinstance(messages, list):
        return messages
    return [{k: v for k, v in m.items() if k != "instructions"} if isinstance(m, dict) else m for m in messages]


def _differ(then: object, now: object) -> bool:
    return not matches_redacted(then, now)


def shown_changes(worker: str, then: Shown, now: Shown) -> list[str]:
    """What the model of `worker` is shown differently, each in the words `llm-do diff` uses."""
    out = []
    if _differ(then.model, now.model):
        out.append(f"model of {worker} changed ({then.model} -> {now.model})")
    if _differ(then.instructions, now.instructions):
        out.append(f"instructions of {worker} changed")
    before = {(t.kind, t.name): t for t in then.tools}
    after = {(t.kind, t.name): t for t in now.tools}
    for key in sorted(before.keys() | after.keys()):
        what = "output schema" if key[0] == "output" else f"tool {key[1]}"
        if key not in after:
            out.append(f"{what} of {worker} removed")
        elif key not in before:
            out.append(f"{what} of {worker} added")
        else:
            if _differ(before[key].description, after[key].description):
                out.append(f"description of {what} offered to {worker} changed")
            if _differ(before[key].parameters, after[key].parameters):
                schema = "output schema" if key[0] == "output" else f"input schema of tool {key[1]}"
                out.append(f"{schema} offered to {worker} changed")
    return out


def request_diff(recorded: object, live: object) -> str:
    """A unified diff of two requests' messages as indented JSON."""
    def lines(value: object) -> list[str]:
        return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False).splitlines()

    return "\n".join(difflib.unified_diff(lines(recorded), lines(live), "recorded", "replayed", lineterm="", n=2))

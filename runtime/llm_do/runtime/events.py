"""What a run reports as it goes: one event type per happening, each serializable to a JSON line."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .approvals.decisions import ApprovalDecision, ApprovalRequest


@dataclass
class RuntimeEvent:
    kind = "event"
    call: int | None = field(default=None, kw_only=True)
    """The served call whose run sent it (`llm-do serve`: calls run concurrently and their events
    share one stream); written only when set."""

    def to_dict(self) -> dict[str, object]:
        data = {"event": self.kind, **{f.name: getattr(self, f.name) for f in fields(self)
                                       if not f.name.startswith("_") and f.name != "call"}}
        return data if self.call is None else {**data, "call": self.call}


@dataclass
class WorkerStarted(RuntimeEvent):
    kind = "worker_started"
    worker: str
    depth: int
    model: str


@dataclass
class WorkerFinished(RuntimeEvent):
    kind = "worker_finished"
    worker: str
    depth: int
    output: Any
    usage: dict[str, int]


@dataclass
class OutputDelta(RuntimeEvent):
    """A piece of a worker's text as the model streams it. Sent only in runs that stream
    (`RuntimeConfig.stream`: chat and the progress display); the whole text still arrives in
    `WorkerFinished`."""

    kind = "output_delta"
    worker: str
    depth: int
    text: str


@dataclass
class ToolCalled(RuntimeEvent):
    kind = "tool_called"
    worker: str
    depth: int
    tool: str
    args: dict[str, Any]
    approval: str


@dataclass
class FlowGuarded(RuntimeEvent):
    """Sent after `ToolCalled` when the calling frame holds private data and untrusted content and
    the call can send data out (`taint`): `action` is `ask` (the call is asked, and denied when
    nobody can be asked) or `accepted` (project.json's `flows.accept` covers the flow)."""

    kind = "flow_guarded"
    worker: str
    depth: int
    tool: str
    action: str
    egress: list[str]
    """The call's capabilities that send data out."""
    private: list[dict[str, str]]
    """Where the frame's private data came from: `{"capability", "worker", "tool"}` each."""
    untrusted: list[dict[str, str]]
    """Where its untrusted content came from (`input`: the run's input)."""
    accepted: str | None
    """The accepting entry's reason, when `action` is `accepted`."""
    reason: str
    """The one line the approver and the model read."""


@dataclass
class ToolReturned(RuntimeEvent):
    kind = "tool_returned"
    worker: str
    depth: int
    tool: str
    outcome: str
    """ok, failed, denied, revised or crashed"""
    result: str


@dataclass
class ApprovalRequested(RuntimeEvent):
    """Sent before a decision is made; a host driving `Runtime.events()` answers it with `respond`."""

    kind = "approval_requested"
    worker: str
    depth: int
    tool: str
    args: dict[str, Any]
    toolset: str | None = None
    """The bundle key of the tool's toolset (None for a call to another worker)."""
    normalized_args: dict[str, Any] | None = None
    """The arguments as the rules judge them (`ApprovalRequest.normalized_args`)."""
    question: str = ""
    """The description every approver gets (`ApprovalRequest.describe()`): what a host shows."""
    _respond: Callable[[ApprovalDecision], None] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def of(cls, request: ApprovalRequest, _respond: Callable[[ApprovalDecision], None] | None = None) -> ApprovalRequested:
        """The event for an `approvals.ApprovalRequest`, with the same description it gives."""
        return cls(request.worker, request.depth, request.tool, request.args, request.toolset, request.normalized_args,
                   request.describe(), _respond=_respond)

    def respond(self, decision: ApprovalDecision) -> None:
        if self._respond is None:
            raise RuntimeError("this request is answered by the run's approval mode or callback")
        self._respond(decision)


@dataclass
class ApprovalDecided(RuntimeEvent):
    kind = "approval_decided"
    worker: str
    depth: int
    tool: str
    approved: bool
    by: str
    note: str | None
    feedback: str | None = None
    """Set when the answer was "revise": what the model is asked to change (the call did not run)."""


@dataclass
class RequestPriced(RuntimeEvent):
    """A model response and what it cost (USD, exact, as text): sent when the run has a budget
    (`--max-cost`), and for models that reach a provider when someone listens (`metering`)."""

    kind = "request_priced"
    worker: str
    depth: int
    model: str
    cost: str | None
    """None: it could not be priced (no price, or the provider left out its usage)."""
    run_cost: str | None
    """What the run's responses cost so far; None once one could not be priced."""
    budget_left: str | None = None
    """What is left of the budget (of every run it serves), with `--max-cost`."""


@dataclass
class RunFinished(RuntimeEvent):
    kind = "run_finished"
    output: Any
    usage: dict[str, int]


@dataclass
class RunFailedEvent(RuntimeEvent):
    """The last event of a run that did not finish (an error, the timeout, an interrupt)."""

    kind = "run_failed"
    error: str
    usage: dict[str, int]


def jsonable(value: object) -> object:
    """Outputs are strings or pydantic models; events carry them as JSON values."""
    dump = getattr(value, "model_dump", None)
    return dump(mode="json") if callable(dump) else value


class JsonLinesSink:
    """Writes each event as one JSON line (the `--events` file)."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def __call__(self, event: RuntimeEvent) -> None:
        self.stream.write(json.dumps(event.to_dict(), ensure_ascii=False, default=str) + "\n")
        self.stream.flush()

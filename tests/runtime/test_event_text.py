"""One mapping from a runtime event to text (`llm_do.runtime.event_text.describe`): every event
kind the runtime sends has its words, in the trace's form and the progress notification's."""

from __future__ import annotations

import inspect

from llm_do.runtime import events
from llm_do.runtime.event_text import Described, describe

SAMPLES = {
    "worker_started": events.WorkerStarted("main", 1, "test"),
    "worker_finished": events.WorkerFinished("helper", 2, "the notes", {}),
    "output_delta": events.OutputDelta("main", 1, "par"),
    "tool_called": events.ToolCalled("main", 1, "read_file", {"path": "a.txt"}, "allow"),
    "tool_returned": events.ToolReturned("main", 1, "read_file", "ok", "text"),
    "flow_guarded": events.FlowGuarded("main", 1, "post", "ask", ["egress"], [], [], None, "this frame holds ..."),
    "approval_requested": events.ApprovalRequested("main", 2, "write_file", {"path": "a.txt"}),
    "approval_decided": events.ApprovalDecided("main", 2, "write_file", False, "terminal", "not now"),
    "request_priced": events.RequestPriced("main", 1, "anthropic:claude-sonnet-4-5", "0.0042", "0.0042", "4.9958"),
    "run_finished": events.RunFinished("done", {"requests": 2}),
    "run_failed": events.RunFailedEvent("the run took too long", {}),
}


def test_every_event_kind_has_its_words() -> None:
    kinds = {cls.kind for _, cls in inspect.getmembers(events, inspect.isclass)
             if issubclass(cls, events.RuntimeEvent) and cls is not events.RuntimeEvent}
    assert kinds == set(SAMPLES)
    for kind, event in SAMPLES.items():
        described = describe(event.to_dict())
        generic = f" {kind}" in (described.trace or "")  # how a kind describe does not know is traced
        assert not generic, kind


def test_the_trace_and_the_progress_say_the_same_event() -> None:
    started = describe(SAMPLES["worker_started"].to_dict())
    assert (started.trace, started.progress) == ("▸ main (test)", "main@1: started on test")
    called = describe(SAMPLES["tool_called"].to_dict())
    assert (called.trace, called.progress) == ('  → read_file(path="a.txt")', "main@1: calling read_file")
    decided = describe(SAMPLES["approval_decided"].to_dict())
    assert (decided.trace, decided.progress) == ("    denied by terminal: not now", "main@2: write_file denied")
    guarded = describe(SAMPLES["flow_guarded"].to_dict())
    assert (guarded.trace, guarded.progress) == (
        "  ! post asked: this frame holds ...", "main@1: post asked: this call holds private data and untrusted content")
    assert describe(SAMPLES["output_delta"].to_dict()) == Described(None, None)  # the trace shows the text whole
    assert describe(SAMPLES["run_finished"].to_dict()).progress is None
    priced = describe(SAMPLES["request_priced"].to_dict())
    assert (priced.trace, priced.progress) == (
        "  cost $0.0042 (anthropic:claude-sonnet-4-5; the run so far $0.0042, $4.9958 of the budget left)", None)

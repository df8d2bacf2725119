"""A bug in a host's callback (`message_callback` / `on_message`, `approval_callback`, `on_event`)
ends the run as that callback's failure, with the signature it must have; never as the crash of
the tool it ran under (a worker call's `on_message` runs inside its caller's tool)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel

from llm_do.runtime import ApprovalDecision, RuntimeConfig, run_worker
from llm_do.runtime.errors import RunFailed
from tests.support.cli import worker

FILES = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker("description: m\ntoolsets: [helper]", "Delegate."),
    "helper.worker": worker("description: h\ntoolsets: [filesystem_project]", "Write."),
}
TURNS = {
    "main": [[ToolCallPart("helper", {"input": "go"})], [TextPart("main done")]],
    "helper": [[ToolCallPart("write_file", {"path": "out.txt", "content": "x"})], [TextPart("helper done")]],
}


@pytest.fixture
def bundle(build: Callable[..., Path]) -> Path:
    return build(FILES)


def models() -> Callable[[str], FunctionModel]:
    turns = {name: list(t) for name, t in TURNS.items()}
    return lambda name: FunctionModel(lambda messages, info: ModelResponse(parts=turns[name].pop(0)))


def failure(bundle: Path, **config: Any) -> str:
    with pytest.raises(RunFailed) as caught:
        run_worker(bundle, "go", config=RuntimeConfig(model_for=models(), **config))
    return str(caught.value)


def test_a_message_callback_of_the_wrong_signature_is_named_not_the_worker_call_it_ran_under(bundle: Path) -> None:
    message = failure(bundle, approval_mode="approve_all", on_message=lambda messages: None)
    assert message.startswith("the message_callback raised TypeError: ")
    assert "takes 1 positional argument but 3 were given" in message
    assert message.endswith("it is called as message_callback(worker: str, depth: int, messages: list[ModelMessage]) "
                            "-> None (RuntimeConfig.on_message), called when each worker call finishes")
    assert "tool 'helper'" not in message and "ModelRetry" not in message


def test_the_seed_keyword_names_the_same_callback(bundle: Path) -> None:
    def on_message(worker: str, depth: int, messages: list[Any]) -> None:
        raise KeyError("oops")

    with pytest.raises(RunFailed, match=r"^the message_callback raised KeyError: 'oops'; it is called as"):
        run_worker(registry=bundle, input_data="go", message_callback=on_message,
                   config=RuntimeConfig(model_for=models(), approval_mode="approve_all"))


def test_an_async_message_callback_is_refused_not_left_unawaited(bundle: Path) -> None:
    async def on_message(worker: str, depth: int, messages: list[Any]) -> None:
        pass

    message = failure(bundle, approval_mode="approve_all", on_message=on_message)
    assert message.startswith("the message_callback returned an awaitable: it must be a plain function")


@pytest.mark.parametrize(("callback", "says"), [
    (lambda: ApprovalDecision(True), "raised TypeError"),
    (lambda request: True, "returned bool, not an ApprovalDecision"),
])
def test_an_approval_callback_that_fails_is_named(bundle: Path, callback: Any, says: str) -> None:
    message = failure(bundle, approval_mode="prompt", approval_callback=callback)
    assert message.startswith(f"the approval_callback {says}")
    assert "it is called as approval_callback(request: ApprovalRequest) -> ApprovalDecision" in message
    assert "tool '" not in message


def test_an_async_approval_callback_that_raises_is_named(bundle: Path) -> None:
    async def callback(request: Any) -> ApprovalDecision:
        raise RuntimeError("no database")

    message = failure(bundle, approval_mode="prompt", approval_callback=callback)
    assert message.startswith("the approval_callback raised RuntimeError: no database; it is called as")


def test_an_event_sink_that_raises_is_named(bundle: Path) -> None:
    def on_event(event: Any) -> None:
        if type(event).__name__ == "ToolCalled":
            raise ValueError("sink full")

    message = failure(bundle, approval_mode="approve_all", on_event=on_event)
    assert message.startswith("the on_event raised ValueError: sink full; it is called as on_event(event: RuntimeEvent)")


def test_callbacks_that_fit_run_as_before(bundle: Path) -> None:
    heard: list[tuple[str, int]] = []
    result = run_worker(bundle, "go", config=RuntimeConfig(
        model_for=models(), approval_mode="prompt", approval_callback=lambda request: ApprovalDecision(True),
        on_message=lambda worker, depth, messages: heard.append((worker, depth))))
    assert result.output == "main done"
    assert heard == [("helper", 2), ("main", 1)]

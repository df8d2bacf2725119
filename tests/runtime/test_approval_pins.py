"""Approval behaviours a security regression would change, each pinned on its own: a denial for the
session is never cached as an approval, the run's mode answers before any callback or terminal,
an opaque toolset's approval travels with its tools, and a tool the bundle does not know is asked.
(The terminal prompt's answers and session approval through it are tested with the prompt.)"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel

from llm_do.runtime import ApprovalDecision, ApprovalRequest, Runtime, RuntimeConfig, run_worker
from tests.support.cli import run_cli, worker
from tests.support.events import of_kind, read_events
from tests.support.projects import build_project


def turns(*responses: list[Any]) -> FunctionModel:
    queue = list(responses)

    def respond(messages: list[Any], info: Any) -> ModelResponse:
        return ModelResponse(parts=queue.pop(0))

    return FunctionModel(respond)


def write(path: str) -> list[Any]:
    return [ToolCallPart("write_file", {"path": path, "content": "x"})]


WRITER = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker("toolsets: [filesystem_project]", "Write."),
}


# --- a denial is never remembered as an approval -----------------------------------------------------


def test_a_denial_for_the_session_is_asked_again_and_never_approves(build) -> None:
    bundle = build(WRITER)
    asked: list[str] = []

    def callback(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request.args["path"])
        return ApprovalDecision(False, "session", note="no")

    model = turns(write("a.txt"), write("a.txt"), [TextPart("done")])
    config = RuntimeConfig(model=model, approval_mode="prompt", approval_callback=callback)
    assert run_worker(bundle, "go", config=config).output == "done"
    assert asked == ["a.txt", "a.txt"]
    assert not (bundle.parent / "a.txt").exists()


def test_a_hosts_denial_for_the_session_is_asked_again_and_never_approves(build) -> None:
    from llm_do.runtime.events import ApprovalRequested

    bundle = build(WRITER)
    runtime = Runtime.load(bundle, RuntimeConfig(model=turns(write("a.txt"), write("a.txt"), [TextPart("done")]),
                                                 approval_mode="prompt"))
    asked: list[str] = []

    async def host() -> None:
        async for event in runtime.events("go"):
            if isinstance(event, ApprovalRequested):
                asked.append(event.args["path"])
                event.respond(ApprovalDecision(False, "session"))

    asyncio.run(host())
    assert asked == ["a.txt", "a.txt"]
    assert not (bundle.parent / "a.txt").exists()


def test_an_approver_has_no_callback_and_no_terminal_unless_given(capsys) -> None:
    """`Approver(mode)` alone asks nobody: in prompt mode it denies and says so on stderr."""
    from llm_do.runtime.approvals.decisions import Approver

    request = ApprovalRequest("main", 1, "write_file", {"path": "a.txt"})
    decision, by = asyncio.run(Approver("prompt").decide(request))
    assert (decision.approved, by) == (False, "no-terminal")
    assert "no terminal to ask" in (decision.note or "")
    assert "llm-do: denied write_file (main@1)" in capsys.readouterr().err


def test_requests_and_decisions_are_immutable_and_decide_once_by_default() -> None:
    """A callback cannot change the request the gate goes on to run, nor a decision once given."""
    import dataclasses

    request = ApprovalRequest("main", 1, "write_file", {"path": "a.txt"})
    decision = ApprovalDecision(False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.tool = "read_file"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        decision.approved = True  # type: ignore[misc]
    # The defaults a callback relies on: approved once, no note (the model is told "not approved").
    assert (ApprovalDecision(True).remember, ApprovalDecision(True).note) == ("once", None)


# --- the ready-made callbacks ---------------------------------------------------------------------------


@pytest.mark.parametrize(("callback", "written"), [("approve_all", True), ("reject_all", False), ("strict", False)])
def test_the_ready_made_callbacks_answer_as_named(build, callback: str, written: bool) -> None:
    import llm_do.runtime as api

    bundle = build(WRITER)
    recorded: list[Any] = []
    config = RuntimeConfig(model=turns(write("a.txt"), [TextPart("done")]), approval_mode="prompt",
                           approval_callback=getattr(api, callback), on_event=recorded.append)
    assert run_worker(bundle, "go", config=config).output == "done"
    assert (bundle.parent / "a.txt").exists() is written
    [decided] = [e for e in recorded if e.kind == "approval_decided"]
    assert (decided.approved, decided.by) == (written, "callback")
    if not written:
        assert decided.note == "calls that need approval are rejected in this run"


def test_a_request_describes_itself_as_every_approver_is_asked() -> None:
    """One line per argument, one-line values whole (a path is never cut), the toolset named;
    text of several lines as its size and first lines (tests/runtime/test_approval_question.py)."""
    request = ApprovalRequest("main", 1, "write_file", {"path": "p" * 300, "content": "x" * 200})
    assert request.describe() == f"worker 'main' (depth 1) wants to call write_file\n  path: {'p' * 300}\n  content: {'x' * 200}"
    assert ApprovalRequest("main", 1, "t", {"v": "café"}, "tools.TOOLS").describe() == (
        "worker 'main' (depth 1) wants to call t (Python tools of tools.py)\n  v: café")
    normalized = ApprovalRequest("main", 1, "t", {"v": "./a"}, None, {}, {"v": "a"})
    assert normalized.describe() == "worker 'main' (depth 1) wants to call t\n  v: a"


TWO_HELPERS = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker("toolsets: [helper, other]\napprovals:\n  - ask helper\n  - ask other", "Delegate."),
    "helper.worker": worker("", "Help."),
    "other.worker": worker("", "Help too."),
}


def test_a_session_approval_covers_only_its_own_tool(build) -> None:
    """`helper(input="x")` approved for the session does not approve `other(input="x")`."""
    bundle = build(TWO_HELPERS)
    asked: list[str] = []

    def callback(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request.tool)
        return ApprovalDecision(request.tool == "helper", "session")

    models = {"main": turns([ToolCallPart("helper", {"input": "x"})], [ToolCallPart("other", {"input": "x"})],
                            [ToolCallPart("helper", {"input": "x"})], [TextPart("done")]),
              "helper": turns([TextPart("helped")], [TextPart("helped again")]), "other": turns([TextPart("never")])}
    recorded: list[Any] = []
    config = RuntimeConfig(model_for=models.__getitem__, approval_mode="prompt", approval_callback=callback,
                           on_event=recorded.append)
    assert run_worker(bundle, "go", config=config).output == "done"
    assert asked == ["helper", "other"]
    assert [e.worker for e in recorded if e.kind == "worker_started"] == ["main", "helper", "helper"]
    decided = [(e.tool, e.approved, e.by) for e in recorded if e.kind == "approval_decided"]
    assert decided == [("helper", True, "callback"), ("other", False, "callback"), ("helper", True, "session")]


def test_a_session_approval_does_not_depend_on_the_order_of_arguments() -> None:
    from llm_do.runtime.approvals.decisions import Approver

    approver = Approver("prompt")
    approver.remember(ApprovalRequest("main", 1, "t", {"a": 1, "b": 2}))
    assert approver.remembered(ApprovalRequest("main", 1, "t", {"b": 2, "a": 1}))
    assert not approver.remembered(ApprovalRequest("main", 1, "t", {"a": 1, "b": 3}))
    assert not approver.remembered(ApprovalRequest("main", 1, "u", {"a": 1, "b": 2}))


# --- the run's mode answers first ---------------------------------------------------------------------


@pytest.mark.parametrize("interactive", [False, True])
def test_reject_all_denies_without_asking_anyone(build, capsys, interactive: bool) -> None:
    """Neither the callback nor the terminal is asked, and the decision is the mode's (no "no
    terminal" message on stderr, which is what prompt mode without a terminal says)."""
    bundle = build(WRITER)
    asked: list[ApprovalRequest] = []
    recorded: list[Any] = []

    def callback(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision(True)

    config = RuntimeConfig(model=turns(write("a.txt"), [TextPart("done")]), approval_mode="reject_all",
                           approval_callback=None if interactive else callback, interactive=interactive,
                           on_event=recorded.append)
    assert run_worker(bundle, "go", config=config).output == "done"
    assert asked == []
    assert not (bundle.parent / "a.txt").exists()
    [decided] = [e for e in recorded if e.kind == "approval_decided"]
    assert (decided.approved, decided.by, decided.note) == (False, "mode", "the run rejects calls that need approval (reject_all)")
    [returned] = [e for e in recorded if e.kind == "tool_returned"]
    assert returned.outcome == "denied" and "reject_all" in returned.result
    assert capsys.readouterr().err == ""


def test_approve_all_approves_without_asking_the_callback(build) -> None:
    bundle = build(WRITER)
    asked: list[ApprovalRequest] = []
    recorded: list[Any] = []

    def callback(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision(False)

    config = RuntimeConfig(model=turns(write("a.txt"), [TextPart("done")]), approval_mode="approve_all",
                           approval_callback=callback, on_event=recorded.append)
    assert run_worker(bundle, "go", config=config).output == "done"
    assert asked == []
    assert (bundle.parent / "a.txt").exists()
    assert [(e.approved, e.by) for e in recorded if e.kind == "approval_decided"] == [(True, "mode")]


# --- tools the bundle cannot list ---------------------------------------------------------------------

TOOLS_PY = '''
    import os
    from pathlib import Path

    from pydantic_ai import ModelRetry, ToolReturn
    from pydantic_ai.toolsets import FunctionToolset

    HERE = Path(__file__).parent


    def poke(name: str) -> str:
        """Leave a mark that this tool ran."""
        (HERE / f"ran-{name}.txt").write_text("ran")
        return f"poked {name}"


    def extra(name: str) -> str:
        """A tool the build never saw."""
        (HERE / f"ran-extra-{name}.txt").write_text("ran")
        return f"extra {name}"


    def fussy(name: str) -> str:
        """Asks the model to call it again."""
        raise ModelRetry(f"call fussy with another name than {name!r}")


    def broken(name: str) -> str:
        """Crashes."""
        raise ValueError(f"kaboom {name}")


    def info(name: str) -> dict:
        """A structured result."""
        return {"name": name, "size": 2}


    class Handle:
        """Something only Python can hold."""


    def handle(name: str) -> object:
        """Returns what no model can be sent."""
        return Handle()


    def tagged(name: str) -> ToolReturn:
        """Sends text to the model and keeps a handle for the program (metadata is not sent)."""
        return ToolReturn(f"tagged {name}", metadata=Handle())


    def make_dynamic(ctx):
        return FunctionToolset([poke])


    listed = FunctionToolset([poke, fussy, broken, info, handle, tagged])
    if os.environ.get("LLM_DO_TEST_EXTRA_TOOL"):
        listed.add_function(extra)  # the same file, another tool list: the bundle knows only `poke`

    TOOLSETS = {"dynamic": make_dynamic, "listed": listed}
'''


def python_project(rule: str, toolset: str) -> dict[str, Any]:
    approvals = f"\napprovals:\n  - {rule}" if rule else ""
    return {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"],
                         "entry": {"worker": "main"}},
        "tools.py": TOOLS_PY,
        "main.worker": worker(f"toolsets: [{toolset}]{approvals}", "Poke."),
    }


@pytest.fixture(scope="module")
def _templates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Built once (each build imports tools.py in a subprocess): the opaque toolset under each rule,
    and the listed one allowed by its toolset rule."""
    base = tmp_path_factory.mktemp("approval-pins")
    projects = {"deny": ("deny dynamic", "dynamic"), "allow": ("allow dynamic", "dynamic"), "ask": ("", "dynamic"),
                "listed": ("allow listed", "listed")}
    return {key: build_project(base / key, python_project(*args)) for key, args in projects.items()}


@pytest.fixture
def bundle_of(_templates: dict[str, Path], tmp_path: Path):
    def copy(key: str) -> Path:
        shutil.copytree(_templates[key].parent, tmp_path / key)
        return tmp_path / key / "bundle.lock"

    return copy


def poke_script(script) -> Path:
    return script({"workers": {"main": [{"tool_calls": [{"tool": "poke", "args": {"name": "p"}}]}, {"text": "done"}]}})


@pytest.mark.process
def test_an_opaque_toolsets_approval_is_in_the_bundle(bundle_of) -> None:
    import json

    for key, approval in (("deny", "deny"), ("allow", "allow"), ("ask", "ask")):
        node = json.loads(bundle_of(key).read_text())["workers"]["main"]
        assert node["tools"] == {}, key  # nothing listed: the approval travels with the toolset use
        assert [u.get("opaque_approval") for u in node["toolsets"]] == [approval], key


@pytest.mark.process
def test_a_deny_on_an_opaque_toolset_holds_under_approve_all(bundle_of, script, tmp_path: Path) -> None:
    bundle = bundle_of("deny")
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", bundle, "go", "--script", poke_script(script), "--approve-all", "--events", events)
    assert result.exit_code == 0, result.stderr
    assert not (bundle.parent / "ran-p.txt").exists()
    evs = read_events(events)
    assert [(e["tool"], e["approval"]) for e in of_kind(evs, "tool_called")] == [("poke", "deny")]
    assert [e["outcome"] for e in of_kind(evs, "tool_returned")] == ["denied"]
    assert of_kind(evs, "approval_decided") == []


@pytest.mark.process
def test_an_allow_on_an_opaque_toolset_runs_without_asking(bundle_of, script, tmp_path: Path) -> None:
    bundle = bundle_of("allow")
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", bundle, "go", "--script", poke_script(script), "--reject-all", "--events", events)
    assert result.exit_code == 0, result.stderr
    assert (bundle.parent / "ran-p.txt").exists()
    assert [e["approval"] for e in of_kind(read_events(events), "tool_called")] == ["allow"]


@pytest.mark.process
def test_an_opaque_toolsets_tools_are_asked_by_default(bundle_of, script, tmp_path: Path) -> None:
    bundle = bundle_of("ask")
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", bundle, "go", "--script", poke_script(script), "--reject-all", "--events", events)
    assert result.exit_code == 0, result.stderr
    assert not (bundle.parent / "ran-p.txt").exists()
    evs = read_events(events)
    assert [e["approval"] for e in of_kind(evs, "tool_called")] == ["ask"]
    assert [(e["approved"], e["by"]) for e in of_kind(evs, "approval_decided")] == [(False, "mode")]


@pytest.mark.process
def test_a_tool_with_neither_a_bundle_entry_nor_metadata_is_asked(bundle_of, monkeypatch: pytest.MonkeyPatch) -> None:
    """A listed toolset that grows a tool at run time: the bundle's `allow listed` covers only the
    tools it listed; the new one gets the Python default, `ask`, whoever answers. (The lock is no
    longer the build of its sources where the tool is there: it runs as built, with the warning.)"""
    from llm_do.runtime import StaleLockWarning

    bundle = bundle_of("listed")
    monkeypatch.setenv("LLM_DO_TEST_EXTRA_TOOL", "1")
    asked: list[str] = []
    recorded: list[Any] = []

    def callback(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request.tool)
        return ApprovalDecision(False, note="not this one")

    model = turns([ToolCallPart("poke", {"name": "p"}), ToolCallPart("extra", {"name": "e"})], [TextPart("done")])
    config = RuntimeConfig(model=model, approval_mode="prompt", approval_callback=callback, on_event=recorded.append,
                           as_built=True)
    with pytest.warns(StaleLockWarning, match="toolset 'listed' differs"):
        assert run_worker(bundle, "go", config=config).output == "done"
    assert {e.tool: e.approval for e in recorded if e.kind == "tool_called"} == {"poke": "allow", "extra": "ask"}
    assert asked == ["extra"]
    assert (bundle.parent / "ran-p.txt").exists()
    assert not (bundle.parent / "ran-extra-e.txt").exists()


# --- what the gate reports -------------------------------------------------------------------------


@pytest.mark.process
def test_a_tool_asking_for_a_retry_is_a_failed_result_and_the_run_goes_on(bundle_of, script, tmp_path: Path) -> None:
    """`ModelRetry` from a tool is the tool's answer to the model, not a crash; and in a scripted run
    not a script error either (unlike arguments that fail validation)."""
    bundle = bundle_of("listed")
    s = script({"workers": {"main": [{"tool_calls": [{"tool": "fussy", "args": {"name": "a"}}]},
                                     {"tool_calls": [{"tool": "poke", "args": {"name": "b"}}]}, {"text": "done"}]}})
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", bundle, "go", "--script", s, "--strict-script", "--events", events)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "done"
    returned = [(e["tool"], e["outcome"], e["result"]) for e in of_kind(read_events(events), "tool_returned")]
    assert returned == [("fussy", "failed", "call fussy with another name than 'a'"), ("poke", "ok", "poked b")]


def test_a_tool_result_in_an_event_is_cut_at_2000_characters(build, script, tmp_path: Path) -> None:
    bundle = build({**WRITER, "long.txt": "x" * 2500, "exact.txt": "y" * 2000})
    s = script({"workers": {"main": [{"tool_calls": [{"tool": "read_file", "args": {"path": "long.txt"}},
                                                     {"tool": "read_file", "args": {"path": "exact.txt"}}]},
                                     {"text": "done"}]}})
    events = tmp_path / "events.jsonl"
    assert run_cli("exec", bundle, "go", "--script", s, "--events", events).exit_code == 0
    results = [e["result"] for e in of_kind(read_events(events), "tool_returned")]
    assert [len(r) for r in results] == [2000, 2000]
    assert results[0] == "x" * 2000 and results[1] == "y" * 2000


def test_the_model_receives_what_the_tool_returned_through_the_gate(build) -> None:
    bundle = build({**WRITER, "notes.txt": "the notes"})
    seen: list[list[Any]] = []
    queue = [[ToolCallPart("read_file", {"path": "notes.txt"})], [TextPart("done")]]

    def respond(messages: list[Any], info: Any) -> ModelResponse:
        seen.append(list(messages))
        return ModelResponse(parts=queue.pop(0))

    assert run_worker(bundle, "go", config=RuntimeConfig(model=FunctionModel(respond))).output == "done"
    from pydantic_ai.messages import ToolReturnPart

    [returned] = [p for p in seen[1][-1].parts if isinstance(p, ToolReturnPart)]
    assert returned.tool_name == "read_file" and returned.outcome == "success"
    assert "the notes" in returned.model_response_str()


def test_a_failing_tool_is_a_failed_result_and_the_run_goes_on(build, script, tmp_path: Path) -> None:
    bundle = build(WRITER)
    s = script({"workers": {"main": [{"tool_calls": [{"tool": "read_file", "args": {"path": "missing.txt"}}]},
                                     {"text": "done"}]}})
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", bundle, "go", "--script", s, "--events", events)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "done"
    [returned] = of_kind(read_events(events), "tool_returned")
    assert (returned["outcome"], returned["result"]) == ("failed", "'missing.txt' does not exist")


@pytest.mark.process
def test_a_crashing_tool_ends_the_run_naming_tool_worker_and_error(bundle_of, script, tmp_path: Path) -> None:
    bundle = bundle_of("listed")
    s = script({"workers": {"main": [{"tool_calls": [{"tool": "broken", "args": {"name": "now"}}]}, {"text": "done"}]}})
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", bundle, "go", "--script", s, "--events", events)
    assert result.exit_code == 1
    line = next(i for i, text in enumerate(TOOLS_PY.lstrip().splitlines(), 1) if "kaboom" in text)
    assert result.stderr == (f"llm-do: run failed: tool 'broken' of worker 'main' raised ValueError: kaboom now (tools.py:{line}); "
                             "a tool that raises ModelRetry instead tells the model and the run goes on\n")
    returned = [(e["tool"], e["outcome"], e["result"]) for e in of_kind(read_events(events), "tool_returned")]
    assert returned == [("broken", "crashed", "ValueError: kaboom now")]


@pytest.mark.process
def test_a_result_the_model_cannot_be_sent_ends_the_run_naming_tool_worker_and_type(bundle_of, script) -> None:
    bundle = bundle_of("listed")
    s = script({"workers": {"main": [{"tool_calls": [{"tool": "handle", "args": {"name": "h"}}]}, {"text": "done"}]}})
    result = run_cli("exec", bundle, "go", "--script", s)
    assert result.exit_code == 1
    assert result.stderr.startswith("llm-do: run failed: tool 'handle' of worker 'main' returned a value of type Handle, "
                                    "which cannot be sent to the model: ")
    assert result.stderr.count("\n") == 1  # one line, no traceback


@pytest.mark.process
def test_a_tool_return_whose_metadata_only_python_holds_reaches_the_model(bundle_of, script, tmp_path: Path) -> None:
    """ToolReturn's metadata is for the program, never sent: it need not be something JSON can hold."""
    bundle = bundle_of("listed")
    s = script({"workers": {"main": [{"tool_calls": [{"tool": "tagged", "args": {"name": "t"}}]}, {"text": "done"}]}})
    events = tmp_path / "events.jsonl"
    result = run_cli("exec", bundle, "go", "--script", s, "--events", events)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "done"
    assert [e["outcome"] for e in of_kind(read_events(events), "tool_returned")] == ["ok"]


@pytest.mark.process
def test_a_structured_result_is_shown_as_json_in_events(bundle_of, script, tmp_path: Path) -> None:
    bundle = bundle_of("listed")
    s = script({"workers": {"main": [{"tool_calls": [{"tool": "info", "args": {"name": "café"}}]}, {"text": "done"}]}})
    events = tmp_path / "events.jsonl"
    assert run_cli("exec", bundle, "go", "--script", s, "--events", events).exit_code == 0
    [returned] = of_kind(read_events(events), "tool_returned")
    assert returned["result"] == '{"name": "café", "size": 2}'


def test_what_the_model_is_told_when_a_call_is_refused(build) -> None:
    bundle = build({**WRITER, "main.worker": worker("toolsets: [filesystem_project]\napprovals:\n  - deny read_file",
                                                     "Write.")})
    recorded: list[Any] = []

    def callback(request: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision(False)

    model = turns([ToolCallPart("read_file", {"path": "a.txt"}), ToolCallPart("write_file", {"path": "a.txt", "content": "x"})],
                  [TextPart("done")])
    config = RuntimeConfig(model=model, approval_mode="prompt", approval_callback=callback, on_event=recorded.append)
    assert run_worker(bundle, "go", config=config).output == "done"
    assert {e.tool: (e.outcome, e.result) for e in recorded if e.kind == "tool_returned"} == {
        "read_file": ("denied", "'read_file' is denied by the project's approval rules; it did not run"),
        "write_file": ("denied", "the call to 'write_file' was denied (not approved); it did not run"),
    }

"""The approval gate: one gate over every tool at every depth, the run's mode, the project's rules,
session approvals, and what the model is told when a call is denied."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import TextPart, ToolCallPart

from llm_do.runtime import ApprovalDecision, ApprovalRequest, Runtime, RuntimeConfig, run_worker
from tests.support.approvals import NESTED_WRITE, WRITE, exec_, project, tool_returns, turns, write_part
from tests.support.cli import worker
from tests.support.events import of_kind, read_events

# --- the run's mode -------------------------------------------------------------------------------


def test_prompt_mode_without_a_terminal_denies_and_the_model_is_told(build, script, tmp_path: Path) -> None:
    bundle = build(project())
    events = tmp_path / "events.jsonl"
    result = exec_(bundle, script(WRITE), events=events)
    assert result.exit_code == 0, result.stderr
    assert not (bundle.parent / "out.txt").exists()
    assert result.stdout.strip() == "done"  # the run went on to the script's next turn
    [denied] = of_kind(read_events(events), "tool_returned", tool="write_file")
    assert denied["outcome"] == "denied"
    assert "terminal" in denied["result"] and "--approve-all" in denied["result"]


def test_prompt_mode_without_a_terminal_tells_the_user_on_stderr(build, script) -> None:
    """The person running `llm-do exec` in CI learns that a call was denied (and how to allow it)."""
    bundle = build(project())
    result = exec_(bundle, script(WRITE))
    assert result.exit_code == 0
    assert not (bundle.parent / "out.txt").exists()
    assert "write_file" in result.stderr and "denied" in result.stderr, result.stderr


def test_reject_all_leaves_no_file(build, script) -> None:
    bundle = build(project())
    result = exec_(bundle, script(WRITE), "--reject-all")
    assert result.exit_code == 0, result.stderr
    assert not (bundle.parent / "out.txt").exists()
    assert result.stdout.strip() == "done"


def test_approve_all_writes_the_file(build, script) -> None:
    bundle = build(project())
    result = exec_(bundle, script(WRITE), "--approve-all")
    assert result.exit_code == 0, result.stderr
    assert (bundle.parent / "out.txt").read_text() == "hi"


def test_a_deny_rule_holds_even_with_approve_all(build, script, tmp_path: Path) -> None:
    bundle = build(project("toolsets: [filesystem_project]\napprovals: [deny write_file]"))
    events = tmp_path / "events.jsonl"
    result = exec_(bundle, script(WRITE), "--approve-all", events=events)
    assert result.exit_code == 0, result.stderr
    assert not (bundle.parent / "out.txt").exists()
    [called] = of_kind(read_events(events), "tool_called", tool="write_file")
    assert called["approval"] == "deny"
    [returned] = of_kind(read_events(events), "tool_returned", tool="write_file")
    assert returned["outcome"] == "denied"
    assert result.stdout.strip() == "done"


def test_an_allow_rule_needs_no_approval(build, script) -> None:
    bundle = build(project("toolsets: [filesystem_project]\napprovals: [allow write_file]"))
    result = exec_(bundle, script(WRITE), "--reject-all")
    assert result.exit_code == 0, result.stderr
    assert (bundle.parent / "out.txt").read_text() == "hi"


def test_the_last_matching_rule_decides(build, script) -> None:
    bundle = build(project("toolsets: [filesystem_project]\napprovals: [allow write_file, deny filesystem_project]"))
    result = exec_(bundle, script(WRITE), "--approve-all")
    assert result.exit_code == 0, result.stderr
    assert not (bundle.parent / "out.txt").exists()


@pytest.mark.parametrize(
    ("project_mode", "flag", "written"),
    [
        ("approve_all", None, True),
        ("reject_all", None, False),
        ("approve_all", "--reject-all", False),
        ("reject_all", "--approve-all", True),
    ],
)
def test_cli_flags_override_the_project_approval_mode(build, script, project_mode: str, flag: str | None,
                                                       written: bool) -> None:
    bundle = build(project(runtime={"approval_mode": project_mode}))
    result = exec_(bundle, script(WRITE), *([flag] if flag else []))
    assert result.exit_code == 0, result.stderr
    assert (bundle.parent / "out.txt").exists() is written


def test_approve_all_and_reject_all_together_is_a_usage_error(build, script) -> None:
    bundle = build(project())
    result = exec_(bundle, script(WRITE), "--approve-all", "--reject-all")
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert not (bundle.parent / "out.txt").exists()


# --- nesting ----------------------------------------------------------------------------------------


def test_a_nested_workers_asked_tool_is_gated(build, script, tmp_path: Path) -> None:
    bundle = build(project())
    events = tmp_path / "events.jsonl"
    result = exec_(bundle, script(NESTED_WRITE), "--reject-all", events=events)
    assert result.exit_code == 0, result.stderr
    assert not (bundle.parent / "out.txt").exists()
    evs = read_events(events)
    [decided] = of_kind(evs, "approval_decided", tool="write_file")
    assert (decided["worker"], decided["depth"], decided["approved"]) == ("helper", 2, False)
    [denied] = of_kind(evs, "tool_returned", tool="write_file")
    assert (denied["worker"], denied["depth"], denied["outcome"]) == ("helper", 2, "denied")
    # The helper's model saw the denial and finished; then the entry finished.
    assert [e["output"] for e in of_kind(evs, "worker_finished")] == ["helper done", "done"]


def test_a_nested_workers_write_runs_when_approved(build, script) -> None:
    bundle = build(project())
    result = exec_(bundle, script(NESTED_WRITE), "--approve-all")
    assert result.exit_code == 0, result.stderr
    assert (bundle.parent / "out.txt").read_text() == "hi"


def test_a_rule_of_the_caller_does_not_loosen_the_callees_gate(build, script) -> None:
    """`allow write_file` on main says nothing about helper's own write_file."""
    bundle = build(project("toolsets: [filesystem_project, helper]\napprovals: [allow write_file]"))
    result = exec_(bundle, script(NESTED_WRITE), "--reject-all")
    assert result.exit_code == 0, result.stderr
    assert not (bundle.parent / "out.txt").exists()


def test_ask_on_a_worker_call_gates_the_call_itself(build, script, tmp_path: Path) -> None:
    bundle = build(project("toolsets: [filesystem_project, helper]\napprovals: [ask helper]",
                           helper_front="toolsets: [filesystem_project]\napprovals: [allow write_file]"))
    events = tmp_path / "events.jsonl"
    result = exec_(bundle, script(NESTED_WRITE), "--reject-all", events=events)
    assert result.exit_code == 0, result.stderr
    evs = read_events(events)
    assert of_kind(evs, "worker_started", worker="helper") == []
    [denied] = of_kind(evs, "tool_returned", tool="helper")
    assert denied["outcome"] == "denied"
    assert not (bundle.parent / "out.txt").exists()
    assert result.stdout.strip() == "done"

    approved = exec_(bundle, script(NESTED_WRITE), "--approve-all")
    assert approved.exit_code == 0, approved.stderr
    assert (bundle.parent / "out.txt").read_text() == "hi"


def test_worker_calls_are_allowed_by_default(build, script, tmp_path: Path) -> None:
    bundle = build(project(helper_front="toolsets: [filesystem_project]\napprovals: [allow write_file]"))
    events = tmp_path / "events.jsonl"
    result = exec_(bundle, script(NESTED_WRITE), "--reject-all", events=events)
    assert result.exit_code == 0, result.stderr
    [called] = of_kind(read_events(events), "tool_called", tool="helper")
    assert called["approval"] == "allow"
    assert (bundle.parent / "out.txt").read_text() == "hi"


# --- what the model sees, and session approvals (Python API) ----------------------------------------


def test_a_denied_call_comes_back_to_the_model_as_a_tool_result(build) -> None:
    bundle = build(project("toolsets: [filesystem_project]"))
    seen: list[list[Any]] = []
    model = turns([write_part("out.txt")], [TextPart("after the denial")], seen=seen)
    result = run_worker(bundle, "go", config=RuntimeConfig(model=model, approval_mode="reject_all"))
    assert result.output == "after the denial"
    assert not (bundle.parent / "out.txt").exists()
    [ret] = tool_returns(seen[1], "write_file")
    assert "denied" in ret.model_response_str() and "did not run" in ret.model_response_str()


def test_a_callback_answers_requests_and_its_note_reaches_the_model(build) -> None:
    bundle = build(project("toolsets: [filesystem_project]"))
    asked: list[ApprovalRequest] = []

    def callback(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision(request.args["path"] == "yes.txt", note="only yes.txt today")

    seen: list[list[Any]] = []
    model = turns([write_part("yes.txt")], [write_part("no.txt")], [TextPart("done")], seen=seen)
    result = run_worker(bundle, "go", config=RuntimeConfig(model=model, approval_mode="prompt", approval_callback=callback))
    assert result.output == "done"
    assert [(r.worker, r.depth, r.tool, r.args["path"]) for r in asked] == [("main", 1, "write_file", "yes.txt"),
                                                                            ("main", 1, "write_file", "no.txt")]
    assert (bundle.parent / "yes.txt").exists()
    assert not (bundle.parent / "no.txt").exists()
    [ret] = tool_returns(seen[2], "write_file")[-1:]
    assert "only yes.txt today" in ret.model_response_str()


def test_an_async_callback_works_too(build) -> None:
    bundle = build(project("toolsets: [filesystem_project]"))

    async def callback(request: ApprovalRequest) -> ApprovalDecision:
        return ApprovalDecision(True)

    model = turns([write_part("a.txt")], [TextPart("done")])
    run_worker(bundle, "go", config=RuntimeConfig(model=model, approval_mode="prompt", approval_callback=callback))
    assert (bundle.parent / "a.txt").exists()


def test_session_approvals_are_cached_per_tool_and_arguments(build) -> None:
    bundle = build(project("toolsets: [filesystem_project]"))
    asked: list[dict[str, Any]] = []

    def callback(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(dict(request.args))
        return ApprovalDecision(True, "session")

    model = turns([write_part("a.txt")], [write_part("a.txt")], [write_part("b.txt")], [write_part("a.txt", "other")],
                  [TextPart("done")])
    result = run_worker(bundle, "go", config=RuntimeConfig(model=model, approval_mode="prompt", approval_callback=callback))
    assert result.output == "done"
    assert asked == [{"path": "a.txt", "content": "x"}, {"path": "b.txt", "content": "x"},
                     {"path": "a.txt", "content": "other"}]


def test_approval_once_is_asked_again(build) -> None:
    bundle = build(project("toolsets: [filesystem_project]"))
    asked: list[dict[str, Any]] = []

    def callback(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(dict(request.args))
        return ApprovalDecision(True)

    model = turns([write_part("a.txt")], [write_part("a.txt")], [TextPart("done")])
    run_worker(bundle, "go", config=RuntimeConfig(model=model, approval_mode="prompt", approval_callback=callback))
    assert len(asked) == 2


def test_a_session_approval_in_one_worker_does_not_approve_another_workers_call(build) -> None:
    """`main` approves `write_file(a.txt)` for the session; `helper`'s identical call is its own
    tool (its own toolset use) and is asked again; helper's second identical call is not."""
    bundle = build(project())
    asked: list[tuple[str, int]] = []

    def callback(request: ApprovalRequest) -> ApprovalDecision:
        asked.append((request.worker, request.depth))
        return ApprovalDecision(True, "session")

    main_model = turns([write_part("a.txt")], [ToolCallPart("helper", {"input": "same"})],
                       [ToolCallPart("helper", {"input": "again"})], [TextPart("done")])
    helper_model = turns([write_part("a.txt")], [TextPart("helper done")], [write_part("a.txt")], [TextPart("helper done")])
    config = RuntimeConfig(model_for=lambda w: main_model if w == "main" else helper_model, approval_mode="prompt",
                           approval_callback=callback)
    assert run_worker(bundle, "go", config=config).output == "done"
    assert asked == [("main", 1), ("helper", 2)]


def test_a_session_approval_does_not_cover_a_toolset_rooted_elsewhere(build) -> None:
    """Two workers whose `filesystem_project` is rooted in different directories: approving one
    for the session approves nothing of the other; the request names toolset and settings."""
    files = project("toolsets: [{filesystem_project: {path: a}}, helper]",
                    helper_front="toolsets: [{filesystem_project: {path: b}}]")
    bundle = build(files)
    asked: list[ApprovalRequest] = []

    def callback(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision(True, "session")

    main_model = turns([write_part("x.txt")], [ToolCallPart("helper", {"input": "go"})], [TextPart("done")])
    helper_model = turns([write_part("x.txt")], [TextPart("helper done")])
    config = RuntimeConfig(model_for=lambda w: main_model if w == "main" else helper_model, approval_mode="prompt",
                           approval_callback=callback)
    assert run_worker(bundle, "go", config=config).output == "done"
    assert [(r.worker, r.toolset, r.settings) for r in asked] == [
        ("main", "filesystem_project", {"path": "a"}), ("helper", "filesystem_project", {"path": "b"})]
    assert (bundle.parent / "a" / "x.txt").exists() and (bundle.parent / "b" / "x.txt").exists()


@pytest.mark.parametrize("other", [
    {"worker": "other"},
    {"toolset": "tools.TOOLS"},
    {"settings": {"path": "elsewhere"}},
    {"args": {"path": "b.txt", "content": "x"}},
])
def test_the_session_cache_is_keyed_by_worker_toolset_settings_tool_and_arguments(other: dict[str, Any]) -> None:
    """A Python tool that happens to be called `write_file`, the same tool rooted elsewhere, or the
    same tool in another worker is not what the person approved."""
    import asyncio

    from llm_do.runtime.approvals.decisions import Approver

    base = dict(worker="main", depth=1, tool="write_file", args={"path": "a.txt", "content": "x"},
                toolset="filesystem_project", settings={"path": "docs"})
    asked: list[ApprovalRequest] = []

    def callback(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision(True, "session")

    approver = Approver("prompt", callback)
    asyncio.run(approver.decide(ApprovalRequest(**base)))
    assert asyncio.run(approver.decide(ApprovalRequest(**{**base, "depth": 3})))[1] == "session"
    assert asyncio.run(approver.decide(ApprovalRequest(**{**base, **other})))[1] == "callback"
    assert len(asked) == 2


def test_a_session_approval_holds_for_another_spelling_of_the_same_path(build) -> None:
    """The key uses the toolset's normalized arguments: `./a.txt` is the file approved as `a.txt`."""
    bundle = build(project("toolsets: [filesystem_project]"))
    asked: list[ApprovalRequest] = []

    def callback(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision(True, "session")

    model = turns([write_part("a.txt")], [write_part("./a.txt")], [write_part("sub/../a.txt")], [TextPart("done")])
    run_worker(bundle, "go", config=RuntimeConfig(model=model, approval_mode="prompt", approval_callback=callback))
    assert [r.args["path"] for r in asked] == ["a.txt"]
    assert asked[0].normalized_args == {"path": "a.txt", "content": "x"}


def test_normalized_arguments_decide_the_session_key() -> None:
    """Two spellings of one path are one call when the toolset normalizes them."""
    from llm_do.runtime.approvals.decisions import ApprovalRequest as Request

    a = Request("main", 1, "write_file", {"path": "./a.txt"}, "fs", {}, {"path": "a.txt"})
    b = Request("main", 1, "write_file", {"path": "a.txt"}, "fs", {}, {"path": "a.txt"})
    assert a.session_key() == b.session_key()


def test_the_terminal_is_asked_when_interactive(build, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """On a terminal: `s` approves for the session (asked once for two identical calls), `n` denies."""
    bundle = build(project("toolsets: [filesystem_project]"))
    monkeypatch.setattr(sys, "stdin", io.StringIO("s\nn\n"))
    seen: list[list[Any]] = []
    model = turns([write_part("a.txt")], [write_part("a.txt")], [write_part("b.txt")], [TextPart("done")], seen=seen)
    result = run_worker(bundle, "go", config=RuntimeConfig(model=model, approval_mode="prompt", interactive=True))
    assert result.output == "done"
    err = capsys.readouterr().err
    assert err.count("wants to call write_file") == 2, err
    assert (bundle.parent / "a.txt").exists()
    assert not (bundle.parent / "b.txt").exists()
    assert "denied" in tool_returns(seen[3], "write_file")[-1].model_response_str()


def test_a_host_answers_approval_requests_from_the_event_stream_once_per_session(build) -> None:
    """A host driving `Runtime.events()` that approves for the session is not asked again for the
    same call, as with a callback or the terminal."""
    import asyncio

    from llm_do.runtime.events import ApprovalRequested

    bundle = build(project("toolsets: [filesystem_project]"))
    model = turns([write_part("a.txt")], [write_part("a.txt")], [TextPart("done")])
    runtime = Runtime.load(bundle, RuntimeConfig(model=model, approval_mode="prompt"))
    asked: list[dict[str, Any]] = []

    async def host() -> None:
        async for event in runtime.events("go"):
            if isinstance(event, ApprovalRequested):
                asked.append(dict(event.args))
                event.respond(ApprovalDecision(True, "session"))

    asyncio.run(host())
    assert (bundle.parent / "a.txt").exists()
    assert asked == [{"path": "a.txt", "content": "x"}]


def test_a_host_answers_a_nested_workers_request(build) -> None:
    import asyncio

    from llm_do.runtime.events import ApprovalRequested

    bundle = build(project())
    main_model = turns([ToolCallPart("helper", {"input": "write"})], [TextPart("done")])
    helper_model = turns([write_part("deep.txt")], [TextPart("helper done")])
    runtime = Runtime.load(bundle, RuntimeConfig(model_for=lambda w: main_model if w == "main" else helper_model,
                                                 approval_mode="prompt"))
    asked: list[tuple[str, int, str]] = []

    async def host() -> None:
        async for event in runtime.events("go"):
            if isinstance(event, ApprovalRequested):
                asked.append((event.worker, event.depth, event.tool))
                event.respond(ApprovalDecision(True))

    asyncio.run(host())
    assert asked == [("helper", 2, "write_file")]
    assert (bundle.parent / "deep.txt").exists()


def test_a_hosts_session_approval_holds_for_its_worker_only(build) -> None:
    """The event stream keys session approvals as the callback and the terminal do."""
    import asyncio

    from llm_do.runtime.events import ApprovalRequested

    bundle = build(project())
    main_model = turns([write_part("a.txt")], [write_part("a.txt")], [ToolCallPart("helper", {"input": "w"})],
                       [TextPart("done")])
    helper_model = turns([write_part("a.txt")], [TextPart("helper done")])
    runtime = Runtime.load(bundle, RuntimeConfig(model_for=lambda w: main_model if w == "main" else helper_model,
                                                 approval_mode="prompt"))
    asked: list[tuple[str, str | None]] = []

    async def host() -> None:
        async for event in runtime.events("go"):
            if isinstance(event, ApprovalRequested):
                asked.append((event.worker, event.toolset))
                event.respond(ApprovalDecision(True, "session"))

    asyncio.run(host())
    assert asked == [("main", "filesystem_project"), ("helper", "filesystem_project")]


# --- stdlib defaults through the runtime -----------------------------------------------------------


SHELL = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker("toolsets: [shell_readonly]", "Look around."),
    "mover.worker": worker("toolsets: [shell_file_ops]", "Move files."),
    "a.txt": "alpha\n",
}


def shell(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"tool": "shell", "args": {"command": command}}]}


def test_shell_readonly_ls_runs_without_approval(build, script, tmp_path: Path) -> None:
    bundle = build(SHELL)
    events = tmp_path / "events.jsonl"
    result = exec_(bundle, script({"workers": {"main": [shell("ls"), {"text": "done"}]}}), events=events)
    assert result.exit_code == 0, result.stderr
    evs = read_events(events)
    assert of_kind(evs, "approval_requested") == [] and of_kind(evs, "approval_decided") == []
    [ret] = of_kind(evs, "tool_returned", tool="shell")
    assert ret["outcome"] == "ok" and "a.txt" in ret["result"]


def test_shell_file_ops_asks_for_mv_and_allows_ls(build) -> None:
    bundle = build(SHELL)
    for mode, moved in (("reject_all", False), ("approve_all", True)):
        recorded: list[Any] = []
        model = turns([ToolCallPart("shell", {"command": "ls"})], [ToolCallPart("shell", {"command": "mv a.txt b.txt"})],
                      [TextPart("done")])
        config = RuntimeConfig(model=model, approval_mode=mode, on_event=recorded.append)
        assert run_worker(bundle, "go", worker="mover", config=config).output == "done"
        by_command = {e.args["command"]: e.approval for e in recorded if e.kind == "tool_called"}
        assert by_command == {"ls": "allow", "mv a.txt b.txt": "ask"}
        decided = [(e.tool, e.approved) for e in recorded if e.kind == "approval_decided"]
        assert decided == [("shell", moved)]  # only mv was asked
        assert (bundle.parent / "b.txt").exists() is moved
        assert (bundle.parent / "a.txt").exists() is not moved

"""`llm-do serve`: a bundle's workers as an MCP server, driven by the official `mcp` client over
stdio (the server a subprocess, as a host starts it) and over streamable HTTP on loopback.

The stdio servers whose start is not what a test checks are forks of the session's warm parent,
which imported the CLI once (tests/support/warm_cli.py): a process of their own, on the pipes the
client gave, without a second and a half of imports each. The test of stdout as the protocol and
of a client that disconnects, and the HTTP servers stopped by signals, start the real interpreter.

Every call is scripted; the server's stderr goes to a file the tests read."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from llm_do.runtime.approvals.decisions import ApprovalDecision
from llm_do.runtime.mcp.approvals import DECLINED, NO_CHOICE, decision_of
from tests.support.cli import one_line_error, run_cli, worker
from tests.support.events import of_kind, read_events
from tests.support.processes import alive
from tests.support.warm_cli import command

pytestmark = pytest.mark.process

SERVE = [sys.executable, "-m", "llm_do.cli.main", "serve"]
LIMIT = 90  # seconds for a whole scenario: the machine may be busy, a hang must still end


def real_serve(*args: str | Path) -> list[str]:
    """The argv of `llm-do serve ARGS` in a fresh interpreter, as a host starts it."""
    return [*SERVE, *map(str, args)]


def run(scenario: Any) -> Any:
    return asyncio.run(asyncio.wait_for(scenario, LIMIT))


@pytest.fixture
def serve(warm_llm_do: Path) -> Callable[..., list[str]]:
    """`serve(ARGS)`: the argv of `llm-do serve ARGS` as a fork of the session's warm parent."""
    return lambda *args: command(warm_llm_do, "serve", *args)


@asynccontextmanager
async def stdio_session(serve: Callable[..., list[str]], *args: str | Path, errlog: Path, cwd: Path | None = None,
                        elicitation: Any = None) -> AsyncIterator[ClientSession]:
    """A client session with `llm-do serve ARGS` started as a subprocess on stdio (`serve` makes
    its argv: the warm fork's, or SERVE's)."""
    argv = serve(*args)
    params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(cwd) if cwd else None)
    with errlog.open("w", encoding="utf-8") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write, elicitation_callback=elicitation) as session:
                await session.initialize()
                yield session


def text_of(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


def locked(bundle: Path, worker_name: str, side: str) -> dict[str, Any]:
    return json.loads(bundle.read_text(encoding="utf-8"))["workers"][worker_name][side]["json_schema"]


# --- listing and calling -------------------------------------------------------------------------


def test_tools_are_the_workers_with_their_locked_schemas(serve, py_bundle: Path, script, tmp_path: Path) -> None:
    async def scenario() -> list[types.Tool]:
        async with stdio_session(serve, py_bundle, "--all-workers", "--script", script({"workers": {}}),
                                 errlog=tmp_path / "err") as session:
            return (await session.list_tools()).tools

    tools = {t.name: t for t in run(scenario())}
    assert sorted(tools) == ["judge", "main"]
    assert tools["main"].input_schema == locked(py_bundle, "main", "input")
    assert tools["main"].output_schema is None
    assert tools["main"].description == "Use your tools."  # no description: its instructions
    assert tools["judge"].input_schema == locked(py_bundle, "judge", "input")
    assert tools["judge"].output_schema == locked(py_bundle, "judge", "output")
    assert tools["judge"].description == "Scores a topic."


def test_calls_are_answered_by_the_scripted_worker_in_order_with_progress(serve, py_bundle: Path, script,
                                                                          tmp_path: Path) -> None:
    turns = script({"workers": {"main": [{"text": "first"}, {"text": "second"}]}})
    progress: list[str] = []

    async def note(value: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    async def scenario() -> tuple[list[str], types.CallToolResult, types.CallToolResult]:
        async with stdio_session(serve, py_bundle, "--script", turns, "--strict-script", errlog=tmp_path / "err") as session:
            names = [t.name for t in (await session.list_tools()).tools]
            one = await session.call_tool("main", {"input": "hi"}, progress_callback=note)
            two = await session.call_tool("main", {"input": "again"})
            return names, one, two

    names, one, two = run(scenario())
    assert names == ["main"]  # without --workers, the entry worker only
    assert (text_of(one), one.is_error, one.structured_content) == ("first", False, None)
    assert text_of(two) == "second"  # one script for the server's lifetime: the next turn
    assert progress[0] == "main@1: started on script:main"
    assert progress[-1] == "main@1: finished"
    assert (tmp_path / "err").read_text() == ""  # a clean run says nothing; the script was used up


def test_bad_input_a_failed_run_and_outside_attachments_are_tool_errors(serve, py_bundle: Path, script,
                                                                          tmp_path: Path) -> None:
    turns = script({"workers": {"main": [{"tool_calls": [{"tool": "boom", "args": {}}]}]}})
    outside = tmp_path / "secret.txt"
    outside.write_text("not for the model")

    async def scenario() -> list[types.CallToolResult]:
        async with stdio_session(serve, py_bundle, "--script", turns, errlog=tmp_path / "err") as session:
            forged = await session.call_tool("main", {"input": "x"}, request_state="forged", input_responses={})
            assert forged.is_error and "request_state is unknown or has expired" in text_of(forged)
            return [await session.call_tool("main", {"inputs": "misspelt"}),
                    await session.call_tool("main", {"input": "read it", "attachments": [str(outside)]}),
                    await session.call_tool("main", {"input": "go"})]

    bad, confined, crashed = run(scenario())
    assert bad.is_error and "invalid input for worker 'main'" in text_of(bad)
    # a client's attachment paths are confined to the project, as a model's are
    assert confined.is_error and text_of(confined) == f"attachment '{outside}' is outside the project"
    assert crashed.is_error and text_of(crashed).startswith("run failed: ") and "kaboom" in text_of(crashed)
    err = (tmp_path / "err").read_text()
    assert "Traceback" not in err and "llm-do: main: run failed: " in err  # the server's operator is told too


def test_the_events_of_concurrent_calls_are_told_apart_by_their_call(serve, py_bundle: Path, script, tmp_path: Path) -> None:
    nap = {"tool_calls": [{"tool": "nap", "args": {"seconds": 1}}]}
    turns = script({"workers": {"main": [nap, nap, {"text": "done"}, {"text": "done"}]}})
    events = tmp_path / "events.jsonl"

    async def scenario() -> list[types.CallToolResult]:
        async with stdio_session(serve, py_bundle, "--script", turns, "--events", events,
                                 errlog=tmp_path / "err") as session:
            return list(await asyncio.gather(session.call_tool("main", {"input": "one"}),
                                             session.call_tool("main", {"input": "two"})))

    assert [text_of(r) for r in run(scenario())] == ["done", "done"]
    written = read_events(events)
    assert all(isinstance(e.get("call"), int) for e in written), written  # every event names its call
    calls = sorted({e["call"] for e in written})
    assert len(calls) == 2
    kinds = ["worker_started", "tool_called", "tool_returned", "worker_finished", "run_finished"]
    for call in calls:  # each call's events, picked out of the shared stream, are one whole run
        assert [e["event"] for e in written if e["call"] == call] == kinds
    # both naps ran at once: the second call started before the first one's nap returned
    order = [(e["call"], e["event"]) for e in written]
    assert order.index((calls[1], "worker_started")) < order.index((calls[0], "tool_returned"))


# --- approvals -----------------------------------------------------------------------------------

ADD = {"tool_calls": [{"tool": "add", "args": {"a": 1, "b": 2}}]}


def test_an_asked_tool_is_refused_under_the_default_policy(serve, py_bundle: Path, script, tmp_path: Path) -> None:
    turns = script({"workers": {"main": [ADD, {"text": "went on"}]}})
    events = tmp_path / "events.jsonl"

    async def scenario() -> types.CallToolResult:
        async with stdio_session(serve, py_bundle, "--script", turns, "--events", events, errlog=tmp_path / "err") as session:
            return await session.call_tool("main", {"input": "add"})

    result = run(scenario())
    assert (text_of(result), result.is_error) == ("went on", False)  # the model was told and went on
    [denied] = of_kind(read_events(events), "tool_returned", tool="add")
    assert denied["outcome"] == "denied"
    assert "approval was not given" in denied["result"]
    assert "llm-do: denied add (main@1): approval was not given" in (tmp_path / "err").read_text()


def test_approvals_via_client_asks_through_elicitation(serve, py_bundle: Path, script, tmp_path: Path) -> None:
    turns = script({"workers": {"main": [ADD, {"text": "one"}, ADD, {"text": "two"}]}})
    events = tmp_path / "events.jsonl"
    answers = [types.ElicitResult(action="accept", content={"approve": True}),
               types.ElicitResult(action="accept", content={"approve": False, "note": "not with those numbers"})]
    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        assert params.requested_schema["properties"]["approve"]["type"] == "boolean"
        return answers[len(asked) - 1]

    async def scenario() -> None:
        async with stdio_session(serve, py_bundle, "--approvals-via-client", "--script", turns, "--events", events,
                                 errlog=tmp_path / "err", elicitation=elicit) as session:
            await session.call_tool("main", {"input": "add"})
            await session.call_tool("main", {"input": "add again"})

    run(scenario())
    assert asked == ["Approve? worker 'main' (depth 1) wants to call add (Python tools of tools.py)\n  a: 1\n  b: 2"] * 2
    approved, denied = of_kind(read_events(events), "tool_returned", tool="add")
    assert (approved["outcome"], approved["result"]) == ("ok", "3")
    assert denied["outcome"] == "denied" and "not with those numbers" in denied["result"]
    decided = of_kind(read_events(events), "approval_decided", tool="add")
    assert [(d["approved"], d["by"]) for d in decided] == [(True, "callback"), (False, "callback")]


@pytest.mark.parametrize(
    "action, content, expected",
    [
        ("accept", {"approve": True}, ApprovalDecision(True, "once")),
        ("accept", {"approve": True, "remember": True}, ApprovalDecision(True, "session")),
        ("accept", {"approve": False}, ApprovalDecision(False, note=DECLINED)),
        ("accept", {"approve": False, "note": "use b=3"}, ApprovalDecision(False, note="use b=3")),
        ("accept", {"approve": "yes"}, ApprovalDecision(False, note=DECLINED)),
        ("accept", {}, ApprovalDecision(False, note=NO_CHOICE)),  # L7: no choice made is no approval
        ("accept", None, ApprovalDecision(False, note=NO_CHOICE)),
        ("accept", {"remember": True}, ApprovalDecision(False, note=NO_CHOICE)),
        ("decline", None, ApprovalDecision(False, note=DECLINED)),
        ("cancel", None, ApprovalDecision(False, note=DECLINED)),
    ],
)
def test_only_an_accepted_form_that_approves_approves(action: str, content: Any, expected: ApprovalDecision) -> None:
    assert decision_of(action, content) == expected


def test_a_client_of_the_2026_era_answers_in_its_next_call(serve, py_bundle: Path, script, tmp_path: Path) -> None:
    """`mcp.Client` speaks the 2026-07-28 protocol: no server-to-client requests, so the question
    comes back as an InputRequiredResult and the client calls again with the answer (SEP-2322)."""
    turns = script({"workers": {"main": [ADD, {"text": "one"}, ADD, {"text": "two"}]}})
    events = tmp_path / "events.jsonl"
    answers = [types.ElicitResult(action="accept", content={"approve": True}), types.ElicitResult(action="decline")]
    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return answers[len(asked) - 1]

    async def scenario() -> list[types.CallToolResult]:
        argv = serve(py_bundle, "--approvals-via-client", "--script", turns, "--events", events)
        params = StdioServerParameters(command=argv[0], args=argv[1:])
        with (tmp_path / "err").open("w") as err:
            async with Client(stdio_client(params, errlog=err), elicitation_callback=elicit) as client:
                return [await client.call_tool("main", {"input": "add"}),
                        await client.call_tool("main", {"input": "add again"})]

    one, two = run(scenario())
    assert (text_of(one), text_of(two)) == ("one", "two")
    assert len(asked) == 2
    approved, declined = of_kind(read_events(events), "tool_returned", tool="add")
    assert (approved["outcome"], approved["result"]) == ("ok", "3")
    assert declined["outcome"] == "denied" and DECLINED in declined["result"]


def test_the_client_is_asked_what_every_approver_is_asked_and_must_choose(build, script, tmp_path: Path) -> None:
    """Red team H1: the question names the file the write goes to, whole (never the model's
    spelling cut at 80 characters); L7: a form accepted without a choice approves nothing. In
    process, with the 2026-era client, whose question comes back in the call's result."""
    from llm_do.cli.options import RunOptions
    from llm_do.cli.session import prepare_run
    from llm_do.runtime.bundle import load_bundle
    from llm_do.runtime.mcp import server as mcp_server

    climb = "docs/" + "release-notes/" * 8 + "../" * 9 + "tools.py"
    write = {"tool_calls": [{"tool": "write_file", "args": {"path": climb, "content": "import os\n"}}]}
    root = build({"project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
                  "main.worker": worker("toolsets: [filesystem_project]", "Write."), "docs/readme.md": "notes\n"}).parent
    events = tmp_path / "events.jsonl"
    bundle = load_bundle(root / "bundle.lock")
    opts = RunOptions(script=script({"workers": {"main": [write, {"text": "one"}, write, {"text": "two"}]}}),
                      events=str(events))
    setup = prepare_run(bundle, opts, interactive=False)
    served = mcp_server.BundleServer(bundle, setup.config, ["main"], "client")
    answers = [types.ElicitResult(action="accept", content={}), types.ElicitResult(action="accept", content={"approve": True})]
    asked: list[str] = []

    async def elicit(context: Any, params: Any) -> types.ElicitResult:
        asked.append(params.message)
        return answers[len(asked) - 1]

    async def scenario() -> None:
        async with Client(served.server(), elicitation_callback=elicit) as client:
            await client.call_tool("main", {"input": "write"})
            assert not (root / "tools.py").exists()
            await client.call_tool("main", {"input": "write again"})

    try:
        run(scenario())
    finally:
        setup.close()
    assert asked == ["Approve? worker 'main' (depth 1) wants to call write_file (toolset filesystem_project)\n"
                     "  path: tools.py (in the project)\n  content: 10 bytes, 1 line\n    | import os"] * 2
    unchosen, approved = of_kind(read_events(events), "tool_returned", tool="write_file")
    assert unchosen["outcome"] == "denied" and NO_CHOICE in unchosen["result"]
    assert approved["outcome"] == "ok" and (root / "tools.py").read_text() == "import os\n"


def test_approvals_via_client_denies_when_the_client_cannot_be_asked(serve, py_bundle: Path, script, tmp_path: Path) -> None:
    turns = script({"workers": {"main": [ADD, {"text": "went on"}]}})
    events = tmp_path / "events.jsonl"

    async def scenario() -> None:
        async with stdio_session(serve, py_bundle, "--approvals-via-client", "--script", turns, "--events", events,
                                 errlog=tmp_path / "err") as session:  # no elicitation callback: not supported
            await session.call_tool("main", {"input": "add"})

    run(scenario())
    [denied] = of_kind(read_events(events), "tool_returned", tool="add")
    assert denied["outcome"] == "denied" and "does not support elicitation" in denied["result"]


# --- stopping ------------------------------------------------------------------------------------

NAP = {"tool_calls": [{"tool": "nap", "args": {"seconds": 60}}]}


def test_a_cancelled_call_stops_its_run_and_the_server_serves_the_next(serve, py_bundle: Path, script, tmp_path: Path) -> None:
    turns = script({"workers": {"main": [NAP, {"text": "next call"}]}})  # the stopped run asks for no more turns
    events = tmp_path / "events.jsonl"

    async def scenario() -> tuple[types.CallToolResult, float]:
        napping = asyncio.Event()

        async def note(value: float, total: float | None, message: str | None) -> None:
            if message == "main@1: calling nap":
                napping.set()

        async with stdio_session(serve, py_bundle, "--script", turns, "--events", events, errlog=tmp_path / "err") as session:
            call = asyncio.ensure_future(session.call_tool("main", {"input": "nap"}, progress_callback=note))
            await napping.wait()
            call.cancel()  # the client abandons the request: it sends notifications/cancelled
            with pytest.raises(asyncio.CancelledError):
                await call
            started = time.monotonic()
            after = await session.call_tool("main", {"input": "go"})
            return after, time.monotonic() - started

    after, took = run(scenario())
    assert text_of(after) == "next call"
    assert took < 30  # not behind the 60 s nap
    failed = of_kind(read_events(events), "run_failed")
    assert [f["error"] for f in failed] == ["the run was interrupted"]


def test_a_call_past_the_timeout_is_a_tool_error(serve, py_bundle: Path, script, tmp_path: Path) -> None:
    turns = script({"workers": {"main": [NAP]}})

    async def scenario() -> types.CallToolResult:
        async with stdio_session(serve, py_bundle, "--timeout", "1", "--script", turns, errlog=tmp_path / "err") as session:
            return await session.call_tool("main", {"input": "nap"})

    result = run(scenario())
    assert result.is_error
    assert text_of(result) == "run failed: the run took longer than 1 s and was stopped"


SPAWN_TOOLS = '''
    import os
    import subprocess
    import time
    from pathlib import Path


    def shout() -> str:
        """Print to stdout, as careless tools do."""
        print("noise from print", flush=True)
        os.write(1, b"noise on fd 1\\n")
        return "shouted"


    def spawn() -> str:
        """Start a process of its own session (out of reach of a process-group kill) and wait."""
        child = subprocess.Popen(["sleep", "120"], start_new_session=True)
        (Path(__file__).parent / "child.pid").write_text(str(child.pid))
        time.sleep(120)
        return "slept"


    TOOLS = {"shout": shout, "spawn": spawn}
'''

SPAWN_PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"],
                     "entry": {"worker": "main"}},
    "tools.py": SPAWN_TOOLS,
    "main.worker": worker("tools: [shout, spawn]\napprovals:\n  - allow shout\n  - allow spawn", "Spawn."),
}


@pytest.mark.skipif(sys.platform != "linux", reason="process checks read /proc")
def test_stdout_is_the_protocol_and_no_process_outlives_a_client_that_disconnects(build, script,
                                                                                  tmp_path: Path) -> None:
    bundle = build(SPAWN_PROJECT)
    pid_file = bundle.parent / "child.pid"
    turns = script({"workers": {"main": [{"tool_calls": [{"tool": "shout", "args": {}}]}, {"text": "after the noise"},
                                         {"tool_calls": [{"tool": "spawn", "args": {}}]}, {"text": "done"}]}})
    printed: list[types.CallToolResult] = []

    async def scenario() -> None:
        async with stdio_session(real_serve, bundle, "--script", turns, errlog=tmp_path / "err") as session:
            printed.append(await session.call_tool("main", {"input": "shout"}))
            call = asyncio.ensure_future(session.call_tool("main", {"input": "go"}))
            while not pid_file.exists():
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.2)
            assert not call.done()
            call.cancel()
        # leaving the block closed the server's stdin: the server ends

    run(scenario())
    assert text_of(printed[0]) == "after the noise"  # a tool that prints does not break the protocol
    assert "noise from print\nnoise on fd 1\n" in (tmp_path / "err").read_text()  # its output goes to stderr
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child), "the process a tool started outlived the server"


# --- streamable HTTP -----------------------------------------------------------------------------


def start_http(*args: str | Path, err: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`llm-do serve --http 127.0.0.1:0 ARGS` in the background; the URL it says it serves at."""
    stderr = err.open("wb")
    proc = subprocess.Popen([*SERVE, *map(str, args), "--http", "127.0.0.1:0"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=stderr)
    stderr.close()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for line in err.read_text().splitlines():
            if " at http://" in line:
                return proc, line.rpartition(" at ")[2]
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    proc.kill()
    raise AssertionError(f"the server did not start: {err.read_text()}")


@pytest.mark.parametrize(
    "approvals, stop, code",
    [("--approve-all", signal.SIGTERM, 0), ("--approvals-via-client", signal.SIGINT, 130)],
    ids=["approve-all-sigterm", "elicitation-ctrl-c"],
)
def test_http_on_loopback_lists_calls_and_stops_cleanly(py_bundle: Path, script, tmp_path: Path,
                                                        approvals: str, stop: int, code: int) -> None:
    turns = script({"workers": {"main": [ADD, {"text": "over http"}], "judge": [{"output": {"score": 3, "reason": "ok"}}]}})
    err, events = tmp_path / "err", tmp_path / "events.jsonl"
    proc, url = start_http(py_bundle, "--workers", "main,judge", approvals, "--script", turns, "--events", events,
                           err=err)
    assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")

    async def approve(context: Any, params: Any) -> types.ElicitResult:  # asked on the call's own stream
        return types.ElicitResult(action="accept", content={"approve": True})

    async def scenario() -> tuple[list[str], types.CallToolResult, types.CallToolResult]:
        async with streamable_http_client(url) as streams:
            async with ClientSession(streams[0], streams[1], elicitation_callback=approve) as session:
                await session.initialize()
                names = [t.name for t in (await session.list_tools()).tools]
                return (names, await session.call_tool("main", {"input": "hi"}),
                        await session.call_tool("judge", {"text": "x"}))

    try:
        names, text, structured = run(scenario())
    finally:
        proc.send_signal(stop)
        out, _ = proc.communicate(timeout=30)
    assert names == ["main", "judge"]
    assert text_of(text) == "over http"
    assert structured.structured_content == {"score": 3, "reason": "ok"}  # an output schema: structured content
    assert json.loads(text_of(structured)) == {"score": 3, "reason": "ok"}  # and the same as text
    [ran] = of_kind(read_events(events), "tool_returned", tool="add")  # the asked tool was approved and ran
    assert (ran["outcome"], ran["result"]) == ("ok", "3")
    [decided] = of_kind(read_events(events), "approval_decided", tool="add")
    assert decided["by"] == ("mode" if approvals == "--approve-all" else "callback")
    assert proc.returncode == code, err.read_text()
    assert out == b""  # nothing on stdout
    assert "Traceback" not in err.read_text()


# --- the command line ----------------------------------------------------------------------------

SIMPLE = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker("", "Work."),
    "helper.worker": worker("", "Help."),
}


@pytest.mark.parametrize(
    "args, words",
    [
        (["--events", "-"], "stdout carries the MCP protocol"),
        (["--http", "0.0.0.0:8000"], "not a loopback address"),
        (["--http", "somewhere"], "expected HOST:PORT"),
        (["--allow-remote"], "--allow-remote goes with --http"),
        (["--workers", "helpr"], "no worker 'helpr'; did you mean 'helper'?"),
        (["--workers", "main", "--all-workers"], "contradict"),
        (["--approvals-via-client", "--approve-all"], "--approvals-via-client asks the client"),
    ],
    ids=["events-stdout", "remote", "bad-address", "remote-without-http", "unknown-worker", "both-selections",
         "approvals-both"],
)
def test_usage_errors_are_one_line_and_exit_2(build, args: list[str], words: str) -> None:
    result = run_cli("serve", build(SIMPLE), *args)
    assert result.exit_code == 2, result.stderr
    assert words in one_line_error(result)
    assert result.stdout == ""


def test_a_tampered_bundle_is_refused_with_exit_3(build) -> None:
    bundle = build(SIMPLE)
    bundle.write_text(bundle.read_text().replace("Work.", "Worx."))
    result = run_cli("serve", bundle)
    assert result.exit_code == 3
    assert "refused" in one_line_error(result)


def test_a_directory_without_a_bundle_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli("serve", tmp_path)
    assert result.exit_code == 2
    assert "has no bundle.lock" in one_line_error(result)


def test_without_the_mcp_package_serve_says_which_extra_to_install(build, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # what `import mcp` finds when it is not installed
    result = run_cli("serve", build(SIMPLE))
    assert result.exit_code == 1
    assert one_line_error(result) == "llm-do: llm-do serve needs the `mcp` package: pip install 'llm-do[mcp]'"


def test_calls_run_concurrently_each_its_own_run(serve, py_bundle: Path, script, tmp_path: Path) -> None:
    turns = script({"workers": {"main": [{"tool_calls": [{"tool": "nap", "args": {"seconds": 3}}]}, {"text": "rested"}],
                                "judge": [{"output": {"score": 1, "reason": "quick"}}]}})
    finished: list[str] = []

    async def scenario() -> None:
        async with stdio_session(serve, py_bundle, "--all-workers", "--script", turns, errlog=tmp_path / "err") as session:

            async def call(name: str, args: dict[str, Any]) -> None:
                finished.append(text_of(await session.call_tool(name, args)))

            slow = asyncio.ensure_future(call("main", {"input": "nap"}))
            await asyncio.sleep(0.5)
            await asyncio.gather(slow, call("judge", {"text": "t"}))

    run(scenario())
    assert json.loads(finished[0]) == {"score": 1, "reason": "quick"}  # not behind the napping call
    assert finished[1] == "rested"


def test_a_question_nobody_answers_in_time_stops_its_run(py_bundle: Path, script, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """In-process (the wait is shortened): a 2026-era client that never comes back with an answer."""
    from llm_do.cli.options import RunOptions
    from llm_do.cli.session import prepare_run
    from llm_do.runtime.bundle import load_bundle
    from llm_do.runtime.mcp import server as mcp_server

    monkeypatch.setattr(mcp_server, "ANSWER_WAIT", 0.2)
    events = tmp_path / "events.jsonl"
    bundle = load_bundle(py_bundle)
    opts = RunOptions(script=script({"workers": {"main": [ADD, {"text": "never"}]}}), events=str(events))
    setup = prepare_run(bundle, opts, interactive=False)
    served = mcp_server.BundleServer(bundle, setup.config, ["main"], "client")

    async def never_asked(context: Any, params: Any) -> types.ElicitResult:
        raise AssertionError("the question goes back in the result")

    async def scenario() -> tuple[Any, types.CallToolResult]:
        async with Client(served.server(), elicitation_callback=never_asked) as client:
            first = await client.session.call_tool("main", {"input": "add"}, allow_input_required=True)
            await asyncio.sleep(0.6)  # past the wait: its timer, in this loop, fires first
            late = await client.session.call_tool("main", {"input": "add"}, request_state=first.request_state,
                                                  input_responses={}, allow_input_required=True)
            return first, late

    try:
        first, late = run(scenario())
    finally:
        setup.close()
    assert isinstance(first, types.InputRequiredResult)
    [(key, question)] = first.input_requests.items()
    assert question.params.message == "Approve? worker 'main' (depth 1) wants to call add (Python tools of tools.py)\n  a: 1\n  b: 2"
    assert late.is_error and "request_state is unknown or has expired" in text_of(late)
    assert [e["error"] for e in of_kind(read_events(events), "run_failed")] == ["the run was interrupted"]

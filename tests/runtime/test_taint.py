"""The taint guard's pure core (`llm_do.runtime.taint`), and where taint starts fresh: each run of a
Runtime, each chat thread, while a thread's turns carry it, on disk too.

The run-level project needs no Python: `public/` is published, so `write_file` of the project is
an egress, `read_file` a private read, and the run's input untrusted (the default).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import TextPart, ToolCallPart

from llm_do.bundle.views import SchemaSpec, ToolBinding, WorkerSpec
from llm_do.runtime import Runtime, RuntimeConfig
from llm_do.runtime.approvals import ApprovalRequest, Approver, approve_all
from llm_do.runtime.call_scope import CallFrame
from llm_do.runtime.taint import (
    EMPTY,
    INPUT_SOURCE,
    FlowGuard,
    Source,
    accepted,
    armed,
    as_json,
    check,
    egress_of,
    from_json,
)
from tests.support.approvals import turns
from tests.support.projects import PUBLISHING_PROJECT

READ = Source("private", "fs.read:project/**", "main", "read_file")
PAGE = Source("untrusted", "mcp:web:fetch", "browser", "fetch")


def _accept(worker: str, private: list[str], untrusted: list[str], egress: list[str]) -> Any:
    return {"worker": worker, "private": private, "untrusted": untrusted, "egress": egress, "reason": "ours"}


def test_a_frame_is_armed_only_with_both_legs() -> None:
    assert not armed(EMPTY)
    assert not armed(frozenset({READ}))
    assert not armed(frozenset({PAGE, INPUT_SOURCE}))
    assert armed(frozenset({READ, INPUT_SOURCE}))


def test_a_result_adds_its_private_and_untrusted_labels_and_egress_is_read_from_the_grants() -> None:
    grants: Any = ({"capability": "mcp:web:fetch", "tool": "fetch", "labels": ["untrusted", "egress"]},
                   {"capability": "custom:fetch", "tool": "fetch"}, {"capability": "custom:*", "toolset": "kit"})
    browser = _spec(name="browser", tools={"fetch": ToolBinding("web", None, "allow")}, grants=grants)
    assert browser.taken_in("fetch", "web") == frozenset({PAGE})  # plain tuples, equal to the Sources
    assert browser.tool_grants("listed_at_run", "kit") == [grants[2]]  # an opaque toolset's tool
    assert egress_of(grants) == ("mcp:web:fetch",)
    assert egress_of(grants[1:]) == ()


def test_an_acceptance_must_name_every_combination_for_the_frame_or_a_caller() -> None:
    taint = frozenset({READ, PAGE, INPUT_SOURCE})
    whole = _accept("main", ["fs.read:project/**"], ["mcp:web:fetch", "input"], ["*"])
    assert accepted([whole], ["poster", "main"], taint, ["egress"]) == whole
    assert accepted([whole], ["other"], taint, ["egress"]) is None  # another worker's acceptance
    partial = _accept("main", ["fs.read:project/**"], ["mcp:web:fetch"], ["*"])  # the input is left out
    assert accepted([partial], ["main"], taint, ["egress"]) is None
    assert accepted([partial, _accept("main", ["*"], ["input"], ["egress"])], ["main"], taint, ["egress"]) is not None


def test_check_says_where_each_leg_came_from() -> None:
    found = check(frozenset({READ, PAGE}), ["egress"], ["main"], [])
    assert found is not None and found.accepted is None
    assert found.reason() == ("this frame holds private data (from read_file of main) and untrusted content (from fetch "
                              "of browser), and the call can send data out (egress)")
    assert check(frozenset({READ, PAGE}), [], ["main"], []) is None  # no egress
    assert check(frozenset({READ}), ["egress"], ["main"], []) is None  # one leg


def test_every_frame_holds_the_runs_input_unless_it_is_trusted() -> None:
    frame = CallFrame("helper", 2, CallFrame("main", 1))
    assert FlowGuard({"inputs": "untrusted"}).held(frame) == frozenset({INPUT_SOURCE})
    assert FlowGuard(None).held(frame) == frozenset({INPUT_SOURCE})  # the default
    assert FlowGuard({"inputs": "trusted"}).held(frame) == EMPTY
    frame.taint = frozenset({tuple(READ)})  # as the gate adds it
    found = FlowGuard(None).check(frame, _spec(), "post", None)
    assert found is not None and found.untrusted == (INPUT_SOURCE,)
    assert FlowGuard({"inputs": "trusted"}).check(frame, _spec(), "post", None) is None


def test_a_worker_with_server_side_web_tools_holds_untrusted_content_from_its_start() -> None:
    web = _spec(server_side_tools=({"tool_type": "web_search"}, {"tool_type": "code_execution"}))
    assert FlowGuard(None).start(web, frozenset({READ})) == frozenset(
        {READ, Source("untrusted", "provider:web_search", "main", "web_search")})
    assert FlowGuard(None).start(_spec(), EMPTY) is EMPTY


def _spec(name: str = "main", tools: Any = None, grants: Any = None, server_side_tools: Any = ()) -> WorkerSpec:
    """A worker (`main`, whose tool `post` is an egress)."""
    return WorkerSpec(name, f"{name}.worker", None, None, None, None, "", SchemaSpec(None, "m", "Q", {}), None, (),
                      tools or {"post": ToolBinding("tools.TOOLS", None, "allow")}, (), False, None, server_side_tools,
                      {}, grants or ({"capability": "egress", "tool": "post", "labels": ["egress"]},), True, True)


def test_approving_everything_does_not_approve_a_guarded_flow() -> None:
    plain = ApprovalRequest("main", 1, "post", {"text": "x"})
    guarded = ApprovalRequest("main", 1, "post", {"text": "x"}, flow="this frame holds private data ...")
    assert approve_all(plain).approved
    denied = approve_all(guarded)
    assert not denied.approved and "this frame holds private data" in (denied.note or "")
    decision, by = asyncio.run(Approver("approve_all").decide(guarded))
    assert (decision.approved, by) == (False, "mode")


def test_a_threads_taint_survives_json_and_malformed_ones_are_refused() -> None:
    taint = frozenset({READ, INPUT_SOURCE})
    assert from_json(json.loads(json.dumps(as_json(taint)))) == taint
    with pytest.raises(ValueError, match="label, capability, worker, tool"):
        from_json([["private", "x"]])


# --- runs -----------------------------------------------------------------------------------------

PROJECT = PUBLISHING_PROJECT
READ_CALL = [ToolCallPart("read_file", {"path": "secret.txt"})]


def _write(name: str) -> list[Any]:
    return [ToolCallPart("write_file", {"path": f"public/{name}", "content": "the launch code is 0000"})]


def _runtime(bundle: Path, *responses: list[Any]) -> Runtime:
    return Runtime.load(bundle, RuntimeConfig(model=turns(*responses), approval_mode="approve_all"))


def test_each_run_of_a_runtime_starts_fresh(build) -> None:
    bundle = build(PROJECT)
    runtime = _runtime(bundle, READ_CALL, [TextPart("read")], _write("a.txt"), [TextPart("wrote")])
    runtime.run("read the secret")
    runtime.run("write it")  # the input only: nothing private in this run
    assert (bundle.parent / "public" / "a.txt").exists()


def test_a_chat_threads_turns_carry_their_taint_and_a_new_thread_starts_fresh(build) -> None:
    bundle = build(PROJECT)
    runtime = _runtime(bundle, READ_CALL, [TextPart("read")], _write("b.txt"), [TextPart("wrote")],
                       _write("a.txt"), [TextPart("tried")], _write("c.txt"), [TextPart("wrote")])
    conversation = runtime.chat()
    conversation.send("read the secret")
    runtime.chat().send("publish this")  # another thread, on the same runtime
    assert (bundle.parent / "public" / "b.txt").exists()
    conversation.send("publish it")  # the history holds the secret: asked, and nobody can be asked
    assert not (bundle.parent / "public" / "a.txt").exists()
    runtime.run("publish this")  # a plain run of the runtime: fresh
    assert (bundle.parent / "public" / "c.txt").exists()


def test_a_thread_on_disk_keeps_its_taint(build) -> None:
    bundle = build(PROJECT)
    _runtime(bundle, READ_CALL, [TextPart("read")]).chat(thread="t1").send("read the secret")
    stored = json.loads((bundle.parent / ".llm-do" / "threads" / "t1.json").read_text())
    assert ["private", "fs.read:project/**", "main", "read_file"] in stored["taint"]
    _runtime(bundle, _write("a.txt"), [TextPart("tried")]).chat(thread="t1").send("publish it")
    assert not (bundle.parent / "public" / "a.txt").exists()

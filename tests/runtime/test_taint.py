"""The taint guard's pure core (`llm_do.runtime.taint`), and where taint starts fresh: each run of a
Runtime, each chat thread, while a thread's turns carry it, on disk too.

The run-level project needs no Python: `public/` is published, so `write_file` of the project is
an egress, `read_file` a private read, and the run's input untrusted (the default).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import TextPart, ToolCallPart

from llm_do.bundle.views import SchemaSpec, ToolBinding, WorkerSpec
from llm_do.runtime import Runtime, RuntimeConfig
from llm_do.runtime.approvals.decisions import ApprovalDecision, ApprovalRequest, Approver, approve_all
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
from tests.support.cli import worker
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
    let = check(frozenset({READ, PAGE}), ["egress"], ["main"], [_accept("main", ["*"], ["*"], ["*"])], moves=".env into site")
    assert let is not None and let.accepted == "ours"
    assert let.reason() == (f"{found.reason()}: it moves .env into site, where others can read it; "
                            "project.json accepts this flow: ours")
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


# --- every call inside a run has a parent (red team L5) ----------------------------------------------

RELAY_TOOLS = '''
from pydantic_ai import RunContext


async def ask_reader(ctx: RunContext, q: str) -> str:
    """Ask the reader through the host API, without naming a parent."""
    return await ctx.deps.runtime.call_worker_async("reader", q)


def ask_reader_sync(ctx: RunContext, q: str) -> str:
    """The same from a sync tool, on its own thread, through a handle of the runtime."""
    return ctx.deps.runtime.worker("reader")(q)


TOOLS = [ask_reader, ask_reader_sync]
'''


@pytest.mark.parametrize("tool", ["ask_reader", "ask_reader_sync"])
def test_a_worker_a_tool_calls_without_a_parent_is_the_tools_callee(build, tool: str) -> None:
    """What reader takes in reaches main's frame, so main's write into public/ is asked (and
    denied: approve_all does not approve it), as through `ctx.deps.call_worker`."""
    bundle = build({**PROJECT, "project.json": {**PROJECT["project.json"], "python_files": ["tools.py"]},
                    "tools.py": RELAY_TOOLS,
                    "main.worker": worker(f"toolsets: [filesystem_project, reader]\ntools: [{tool}]\ncalls: [reader]\n"
                                          f"approvals: [allow write_file, allow {tool}]", "Talk."),
                    "reader.worker": worker("description: reads\ntoolsets: [filesystem_project_ro]", "Read.")})
    depths: list[int] = []
    runtime = Runtime.load(bundle, RuntimeConfig(
        model=turns([ToolCallPart(tool, {"q": "read secret.txt"})], READ_CALL, [TextPart("the launch code is 0000")],
                    _write("a.txt"), [TextPart("done")]),
        approval_mode="approve_all", on_message=lambda name, depth, _: depths.append(depth) if name == "reader" else None))
    runtime.run("go")
    assert depths == [2]  # one level below main, not a new top-level call
    assert not (bundle.parent / "public" / "a.txt").exists()


# --- what the mutants of the taint gate showed untested (mutation round 4, survivors 1 and 11) --------

def test_a_call_the_rules_deny_stays_denied_in_an_armed_frame(build) -> None:
    """The guard turns an egress into a question, never a denial into one: after the private read,
    the denied write is refused without asking anyone (an approver saying yes to all would have
    written it)."""
    bundle = build({**PROJECT, "main.worker": worker(
        "toolsets: [filesystem_project]\napprovals:\n  - allow write_file\n  - deny write_file(path ~ 'public/leak.txt')",
        "Talk.")})
    asked: list[ApprovalRequest] = []

    def yes(request: ApprovalRequest) -> Any:
        asked.append(request)
        return ApprovalDecision(True)

    Runtime.load(bundle, RuntimeConfig(model=turns(READ_CALL, _write("leak.txt"), [TextPart("done")]),
                                       approval_callback=yes)).run("go")
    assert asked == []
    assert not (bundle.parent / "public" / "leak.txt").exists()


def test_a_run_of_a_worker_with_server_side_web_tools_starts_it_holding_untrusted_content(build) -> None:
    """`flows.inputs: trusted`, so only `searcher`'s web_search is untrusted: main reads the secret
    and calls searcher (asked: R005, so the build passes), whose write into public/ must then be
    asked, and approve_all does not approve it."""
    bundle = build({
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"},
                         "flows": {"inputs": "trusted", "paths": {"public": "published"}}},
        "main.worker": worker("toolsets: [filesystem_project_ro, searcher]\napprovals: [ask searcher]", "Talk."),
        "searcher.worker": worker("description: searches\ntoolsets:\n  - filesystem_project: {path: public}\n"
                                  "server_side_tools:\n  - tool_type: web_search\napprovals: [allow write_file]", "Search."),
        "secret.txt": "the launch code is 0000\n",
        "public/index.html": "",
    })
    runtime = Runtime.load(bundle, RuntimeConfig(
        model=turns(READ_CALL, [ToolCallPart("searcher", {"input": "search, then publish"})],
                    [ToolCallPart("write_file", {"path": "leak.txt", "content": "the launch code is 0000"})],
                    [TextPart("could not publish")], [TextPart("done")]),
        approval_mode="approve_all"))
    runtime.run("go")
    assert not (bundle.parent / "public" / "leak.txt").exists()
    assert runtime.flow_denied == 1


# --- one matcher for the build and the run (red team L6) ------------------------------------------

def test_an_acceptance_the_build_found_inert_lets_nothing_through() -> None:
    taint = frozenset({READ, INPUT_SOURCE})
    entry = _accept("main", ["*"], ["input"], ["egress"])
    assert accepted([entry], ["main"], taint, ["egress"]) == entry
    assert accepted([{**entry, "inert": True}], ["main"], taint, ["egress"]) is None


POST_TOOLS = '''
from pathlib import Path

CAPABILITIES = {"post": ["net:example.com"]}


def post(text: str) -> str:
    """Send text out."""
    with open(Path(__file__).with_name("outbox.txt"), "a") as f:
        f.write(text + "\\n")
    return "sent"


TOOLS = [post]
'''


def test_an_acceptance_r006_calls_inert_does_not_let_the_egress_through(build) -> None:
    """reader's `post` (net:) is an untrusted leg the entry does not name, so the build finds the
    entry inert (R006); the run, whose frame holds only the read and the input when post is
    called, used to honour it all the same."""
    bundle = build({
        "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"],
                         "entry": {"worker": "main"},
                         "flows": {"accept": [{"worker": "reader", "private": ["*"], "untrusted": ["input"],
                                               "egress": ["net:example.com"], "reason": "test"}]}},
        "tools.py": POST_TOOLS, "secret.txt": "the launch code is 0000\n",
        "main.worker": worker("toolsets: [reader]", "Delegate."),
        "reader.worker": worker("description: reads\ntoolsets: [filesystem_project_ro]\ntools: [post]\n"
                                "approvals: [allow post]", "Read."),
    })
    runtime = Runtime.load(bundle, RuntimeConfig(
        model=turns([ToolCallPart("reader", {"input": "read it"})], READ_CALL,
                    [ToolCallPart("post", {"text": "the launch code is 0000"})], [TextPart("ok")], [TextPart("done")]),
        approval_mode="approve_all"))
    runtime.run("go")
    assert not (bundle.parent / "outbox.txt").exists()
    assert runtime.flow_denied == 1


# --- a call that moves files is judged on what it moves (red team M1) -----------------------------

MOVER = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"},
                     "flows": {"paths": {"site": "published", "inbox": "untrusted"}}},
    "main.worker": worker("toolsets: [shell_file_ops]\napprovals: [allow shell]", "Tidy up."),
    ".env": "OPENAI_API_KEY=sk-live-SECRET\n",
    "notes/a.txt": "a note\n",
    "inbox/page.html": "a page\n",
    "site/index.html": "hello\n",
}


@pytest.mark.parametrize(("command", "moved"), [
    ("mv .env site/env.txt", True),  # a private file, never read, into the published folder
    ("mv -t site notes", True),  # a folder of private files, the destination as a flag
    ("mv notes/a.txt notes/b.txt", False),  # private, but it stays unpublished
    ("mv inbox/page.html site/", False),  # into the published folder, but nothing private
    ("mv site/index.html site/home.html", False),
])
def test_a_move_into_a_published_folder_is_judged_on_what_it_moves(build, command: str, moved: bool) -> None:
    """The frame holds only the run's (untrusted) input; a move of a private file into site/ is
    private data leaving, so it is asked (and approve_all does not approve it); other moves run."""
    bundle = build(MOVER)
    events: list[Any] = []
    runtime = Runtime.load(bundle, RuntimeConfig(model=turns([ToolCallPart("shell", {"command": command})], [TextPart("done")]),
                                                 approval_mode="approve_all", on_event=events.append))
    before = sorted(p.relative_to(bundle.parent).as_posix() for p in bundle.parent.rglob("*") if p.is_file())
    runtime.run("tidy up")
    after = sorted(p.relative_to(bundle.parent).as_posix() for p in bundle.parent.rglob("*") if p.is_file())
    assert (after == before) is moved  # a guarded move did not happen
    guarded = [e for e in events if type(e).__name__ == "FlowGuarded"]
    assert runtime.flow_denied == (1 if moved else 0) and len(guarded) == (1 if moved else 0)
    if moved:
        assert guarded[0].reason.startswith("this frame holds private data (from shell of main) and untrusted content "
                                            "(from the run's input), and the call can send data out (fs.write:project/**): "
                                            "it moves ")
        assert guarded[0].reason.endswith(", where others can read it")


def test_what_a_move_carries_is_judged_by_the_folders_as_the_filesystem_resolves_them(tmp_path: Path) -> None:
    """`flows.paths` keys resolved through links at run time, as the build resolves them (red team
    M2); a destination outside the project, or a guard without a project, judges nothing."""
    for folder in ("site", "inbox", "notes/keys", "secrets"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "pub").symlink_to("site")
    root = os.path.realpath(tmp_path)
    spec = _spec(grants=({"capability": "fs.read:project/**", "tool": "post", "labels": ["private"]},))

    def moved(sources: list[str], target: str, paths: dict[str, str]) -> str | None:
        found = FlowGuard({"paths": paths}, tmp_path).moved_private(
            spec, "post", None, ([os.path.join(root, s) for s in sources], os.path.normpath(os.path.join(root, target))))
        return None if found is None else found[1]

    linked = {"pub": "published", "inbox": "untrusted", "secrets": "private"}
    assert moved(["secrets/key"], "site/key", linked) == "secrets/key into site/key"  # site is published through pub
    assert moved(["notes/a.txt"], "site", linked) == "notes/a.txt into site"  # unlabelled: private
    whole = {".": "published", "notes/keys": "private"}
    assert moved(["secrets/key"], ".", {**whole, "secrets": "private"}) == "secrets/key into ."  # the root is published
    assert moved(["notes"], "site", whole) == "notes into site"  # published, but it holds a private folder
    assert moved(["notes/a.txt"], "site", whole) is None  # published (the root is)
    guard = FlowGuard({"paths": linked}, tmp_path)
    assert moved(["inbox/page", "site/a"], "site/b", linked) is None  # nothing private moves
    assert moved(["secrets/key"], "secrets/old", linked) is None  # it stays private
    assert guard.moved_private(spec, "post", None, (["/elsewhere/key"], "/elsewhere/site")) is None
    found = guard.moved_private(spec, "post", None, ([os.path.join(root, "secrets/key")], os.path.join(root, "site")))
    assert found is not None and found[0] == Source("private", "fs.read:project/**", "main", "post")
    nowhere = FlowGuard({"paths": {"site": "published"}})  # no project: no move is judged, wherever it is
    assert nowhere.moved_private(spec, "post", None, ([os.path.abspath("a")], os.path.abspath("site"))) is None


def test_a_move_carries_out_the_private_source_its_tools_read_grant_names(tmp_path: Path) -> None:
    """The source is the tool's grant labelled private (what a `flows.accept` entry names), not its
    egress grant beside it."""
    for folder in ("site", "notes"):
        (tmp_path / folder).mkdir()
    root = os.path.realpath(tmp_path)
    spec = _spec(grants=({"capability": "fs.write:project/**", "tool": "post", "labels": ["egress"]},
                         {"capability": "fs.read:project/notes/**", "tool": "post", "labels": ["private"]}))
    found = FlowGuard({"paths": {"site": "published"}}, tmp_path).moved_private(
        spec, "post", None, ([os.path.join(root, "notes/a.txt")], os.path.join(root, "site")))
    assert found == (Source("private", "fs.read:project/notes/**", "main", "post"), "notes/a.txt into site")


def test_a_labelled_folder_a_link_takes_out_of_the_project_leaves_moves_judged(tmp_path: Path) -> None:
    """`flows.paths` names `mirror`, a link to a folder outside the project:
    it labels nothing inside, and a move of a private file into `site` is still judged."""
    project, outside = tmp_path / "proj", tmp_path / "elsewhere"
    for folder in (project / "site", project / "notes", outside):
        folder.mkdir(parents=True)
    (project / "mirror").symlink_to(outside)
    root = os.path.realpath(project)
    spec = _spec(grants=({"capability": "fs.read:project/**", "tool": "post", "labels": ["private"]},))
    guard = FlowGuard({"paths": {"mirror": "published", "site": "published"}}, project)
    found = guard.moved_private(spec, "post", None, ([os.path.join(root, "notes/a.txt")], os.path.join(root, "site")))
    assert found is not None and found[1] == "notes/a.txt into site"


KIT_TOOLS = '''
from pydantic_ai.toolsets import FunctionToolset


def stamp(text: str) -> str:
    """Stamp a text."""
    return f"stamped {text}"


def make_kit(ctx):
    return FunctionToolset([stamp])


TOOLSETS = {"kit": make_kit}
'''


def test_a_worker_that_can_publish_calls_a_tool_the_bundle_does_not_list_from_an_armed_frame(build) -> None:
    """main can write public/ (an egress) and holds the secret and the run's input when it calls
    `stamp` of an opaque toolset (made at run time: no entry in the bundle, no egress grant): it
    runs, unasked."""
    bundle = build({**PROJECT, "project.json": {**PROJECT["project.json"], "python_files": ["tools.py"]},
                    "tools.py": KIT_TOOLS,
                    "main.worker": worker("toolsets: [filesystem_project, kit]\napprovals: [allow write_file, allow kit]",
                                          "Talk.")})
    events: list[Any] = []
    runtime = Runtime.load(bundle, RuntimeConfig(
        model=turns(READ_CALL, [ToolCallPart("stamp", {"text": "x"})], [TextPart("done")]),
        approval_mode="reject_all", on_event=events.append))
    assert runtime.run("go").output == "done"
    assert [(e.tool, e.outcome, e.result) for e in events if type(e).__name__ == "ToolReturned"][1:] == [
        ("stamp", "ok", "stamped x")]


def test_a_flow_check_names_every_source_and_carries_them_as_json() -> None:
    """What the approver reads and the event stream carries (spec/runtime.md, `flow_guarded`): every
    source, the run's input as `{"capability": "input"}`, several of one leg listed with commas."""
    from llm_do.runtime.taint import INPUT_SOURCE, PRIVATE, Source, check

    taint = frozenset({INPUT_SOURCE, Source(PRIVATE, "fs.read:project/**", "main", "read_file"),
                       Source(PRIVATE, "mail.read", "main", "search_emails")})
    found = check(taint, ["net.send"], ["main"], [])
    assert found is not None
    assert found.to_json() == {
        "egress": ["net.send"],
        "private": [{"capability": "fs.read:project/**", "worker": "main", "tool": "read_file"},
                    {"capability": "mail.read", "worker": "main", "tool": "search_emails"}],
        "untrusted": [{"capability": "input"}],
        "accepted": None,
        "reason": "this frame holds private data (from read_file of main, search_emails of main) and untrusted "
                  "content (from the run's input), and the call can send data out (net.send)",
    }

"""No race between the gate's decision and the tool's effect (red team M1): calls of one model
response run concurrently, so a `mv` of a link can change where another call's path leads after
the gate judged it. The toolset normalizes the path again under its lock and refuses the call when
it changed; the write goes through the directory it resolved, never re-following a link."""

from __future__ import annotations

import asyncio
import shutil
from typing import Any

from pydantic_ai import TextPart, ToolCallPart

from llm_do.runtime import Runtime, RuntimeConfig, load_bundle, run_worker
from llm_do.runtime.bundle import LoadedBundle
from tests.support.approvals import turns
from tests.support.cli import worker

RACE_PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker(
        "toolsets: [filesystem_project, shell_file_ops]\napprovals:\n"
        "  - \"allow write_file(path ~ 'out/**')\"\n  - \"deny write_file(path ~ 'src/**')\"\n"
        "  - \"allow shell(argv[0] == 'mv')\"", "Main."),
}


def _race_once(loaded: LoadedBundle, calls: list[ToolCallPart]) -> list[Any]:
    """One run of `calls` on the bundle, loaded (and checked against its sources) once per test:
    the folders each run makes anew would otherwise make every load compile the project again."""
    root = loaded.root
    for folder in ("out", "src"):
        shutil.rmtree(root / folder, ignore_errors=True)
    (root / "out/d").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "out/lnk").symlink_to("../src")
    events: list[Any] = []
    config = RuntimeConfig(model=turns(calls, [TextPart("done")]), approval_mode="reject_all", on_event=events.append)
    assert Runtime(loaded, config).run("go").output == "done"
    return events


def test_a_link_moved_under_an_allowed_write_does_not_lead_it_past_a_deny(build) -> None:
    """The red team's response, run 20 times: `mv out/d out/old`, `mv out/lnk out/d` (a link to
    src/) and `write_file out/d/x.py`, concurrently, under reject_all. The write was allowed for
    `out/d/x.py`; by the time it holds the lock, that path leads into src/: it must not run."""
    bundle = build(RACE_PROJECT)
    loaded = load_bundle(bundle)
    calls = [ToolCallPart("shell", {"command": "mv out/d out/old"}), ToolCallPart("shell", {"command": "mv out/lnk out/d"}),
             ToolCallPart("write_file", {"path": "out/d/x.py", "content": "evil"})]
    for _ in range(20):
        events = _race_once(loaded, calls)
        assert list((bundle.parent / "src").iterdir()) == []
        written = [e for e in events if e.kind == "tool_returned" and e.tool == "write_file"]
        assert len(written) == 1
        assert written[0].outcome == "failed"
        assert "its target changed after it was approved (path: 'out/d/x.py' -> 'src/x.py')" in written[0].result


def test_a_write_that_holds_the_lock_first_writes_where_it_was_judged(build) -> None:
    """The same calls with the write first: it runs before the links move, into out/d/."""
    bundle = build(RACE_PROJECT)
    calls = [ToolCallPart("write_file", {"path": "out/d/x.py", "content": "fine"}),
             ToolCallPart("shell", {"command": "mv out/d out/old"}), ToolCallPart("shell", {"command": "mv out/lnk out/d"})]
    _race_once(load_bundle(bundle), calls)
    assert (bundle.parent / "out/old/x.py").read_text() == "fine"
    assert list((bundle.parent / "src").iterdir()) == []


ASKED_PROJECT = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker("toolsets: [filesystem_project, shell_file_ops]\napprovals:\n"
                          "  - \"allow shell(argv[0] == 'mv')\"", "Main."),
}


def test_no_lock_is_held_while_a_person_answers(build) -> None:
    """The write is asked; while the approver waits, the `mv` of the same response runs (it needs
    the filesystem lock), and the approved write then lands where it was asked about."""
    from llm_do.runtime import ApprovalDecision

    bundle = build(ASKED_PROJECT)
    root = bundle.parent
    (root / "b.txt").write_text("b")
    seen: list[bool] = []

    async def approver(request: Any) -> Any:
        for _ in range(500):
            if (root / "c.txt").exists():
                break
            await asyncio.sleep(0.01)
        seen.append((root / "c.txt").exists())  # the mv ran while the write waited for its answer
        return ApprovalDecision(True)

    calls = [ToolCallPart("write_file", {"path": "a.txt", "content": "x"}), ToolCallPart("shell", {"command": "mv b.txt c.txt"})]
    config = RuntimeConfig(model=turns(calls, [TextPart("done")]), approval_mode="prompt", approval_callback=approver)
    assert run_worker(bundle, "go", config=config).output == "done"
    assert seen == [True]
    assert (root / "a.txt").read_text() == "x"


def test_a_path_that_changes_while_a_person_answers_is_refused(build) -> None:
    """Approved for `out/d/x.py`; by the time the answer comes, out/d is a link to src/."""
    from llm_do.runtime import ApprovalDecision

    bundle = build(ASKED_PROJECT)
    root = bundle.parent
    (root / "out/d").mkdir(parents=True)
    (root / "src").mkdir()
    asked: list[dict[str, Any]] = []

    def approver(request: Any) -> Any:
        asked.append(dict(request.args))
        (root / "out/d").rename(root / "out/old")
        (root / "out/d").symlink_to("../src")
        return ApprovalDecision(True)

    events: list[Any] = []
    config = RuntimeConfig(model=turns([ToolCallPart("write_file", {"path": "out/d/x.py", "content": "evil"})],
                                       [TextPart("done")]),
                           approval_mode="prompt", approval_callback=approver, on_event=events.append)
    assert run_worker(bundle, "go", config=config).output == "done"
    assert asked == [{"path": "out/d/x.py", "content": "evil"}]
    assert list((root / "src").iterdir()) == []
    [returned] = [e for e in events if e.kind == "tool_returned"]
    assert returned.outcome == "failed" and "(path: 'out/d/x.py' -> 'src/x.py')" in returned.result

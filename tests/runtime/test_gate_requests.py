"""What the gate tells an approver and takes back from one: the toolset that owns the asked tool and
that toolset's settings (never another toolset's, of the same kind or beside an opaque one); an
edited call that does not validate is refused with a message, never run without arguments; a
decision that says `remember='session'` and `approve_for_session=True` together is accepted."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import TextPart, ToolCallPart

from llm_do.runtime import ApprovalDecision, ApprovalRequest, RuntimeConfig, run_worker
from tests.support.approvals import turns
from tests.support.cli import worker
from tests.support.projects import build_project


def asked_of(bundle: Path, calls: list[ToolCallPart], answer: ApprovalDecision | None = None) -> tuple[list[ApprovalRequest], list[Any]]:
    asked: list[ApprovalRequest] = []
    events: list[Any] = []

    def approver(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return answer or ApprovalDecision(False, note="only looking")

    model = turns(*[[c] for c in calls], [TextPart("done")])
    config = RuntimeConfig(model=model, approval_mode="prompt", approval_callback=approver, on_event=events.append)
    assert run_worker(bundle, "go", config=config).output == "done"
    return asked, events


def test_with_two_toolsets_of_one_kind_each_request_names_its_own_toolset_and_settings(build) -> None:
    """filesystem_project in a/ and shell_file_ops in b/ are both stdlib toolsets: the write is
    asked with a/'s settings, the mv with b/'s."""
    bundle = build({
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
        "main.worker": worker("toolsets:\n  - filesystem_project: {path: a}\n  - shell_file_ops: {path: b}", "Main."),
        "b/keep.txt": "k\n",
    })
    asked, _ = asked_of(bundle, [ToolCallPart("shell", {"command": "mv keep.txt kept.txt"}),
                                 ToolCallPart("write_file", {"path": "x.txt", "content": "x"})])
    assert [(r.tool, r.toolset, r.settings) for r in asked] == [
        ("shell", "shell_file_ops", {"path": "b"}), ("write_file", "filesystem_project", {"path": "a"})]


OPAQUE_TOOLS_PY = '''
from pathlib import Path

from pydantic_ai.toolsets import FunctionToolset


def poke(name: str) -> str:
    """Leave a mark that this tool ran."""
    (Path(__file__).parent / f"ran-{name}.txt").write_text("ran")
    return f"poked {name}"


def make(ctx):
    return FunctionToolset([poke])


TOOLSETS = {"dynamic": make}
'''


@pytest.mark.process
def test_an_opaque_toolsets_request_names_it_not_the_toolset_beside_it(tmp_path: Path) -> None:
    bundle = build_project(tmp_path / "proj", {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"],
                         "entry": {"worker": "main"}},
        "tools.py": OPAQUE_TOOLS_PY,
        "main.worker": worker("toolsets:\n  - filesystem_project: {path: a}\n  - dynamic", "Poke."),
    })
    asked, _ = asked_of(bundle, [ToolCallPart("poke", {"name": "p"}), ToolCallPart("write_file", {"path": "x.txt", "content": "x"})])
    assert [(r.tool, r.toolset, r.settings) for r in asked] == [
        ("poke", "dynamic", {}), ("write_file", "filesystem_project", {"path": "a"})]
    assert not (bundle.parent / "ran-p.txt").exists()


def test_an_edit_that_does_not_validate_is_refused_with_a_message_not_run_without_arguments(build) -> None:
    bundle = build({
        "project.json": {"version": 1, "worker_files": ["**/*.worker"], "entry": {"worker": "main"}},
        "main.worker": worker("toolsets: [worker_create]", "Create helpers."),
    })
    proposed = ToolCallPart("worker_create", {"name": "poet", "instructions": "Rhyme.", "description": "Rhymes."})
    asked, events = asked_of(bundle, [proposed], ApprovalDecision(True, args={"name": "bard"}))
    assert [r.tool for r in asked] == ["worker_create"]
    [returned] = [e for e in events if e.kind == "tool_returned"]
    assert returned.outcome == "denied"
    assert returned.result.startswith("the edited call to 'worker_create' does not validate: ")
    assert "instructions" in returned.result and "\n" not in returned.result
    assert sorted(p.name for p in bundle.parent.rglob("*.worker")) == ["main.worker"]  # nothing was created


@pytest.mark.parametrize(("remember", "for_session", "session"), [
    ("session", True, True), ("once", False, False), ("session", None, True), (None, True, True), (None, None, False)])
def test_a_decision_saying_the_same_twice_is_accepted(remember: Any, for_session: Any, session: bool) -> None:
    decision = ApprovalDecision(True, remember=remember, approve_for_session=for_session)
    assert decision.remember == ("session" if session else "once") and decision.approve_for_session is session


@pytest.mark.parametrize(("remember", "for_session"), [("session", False), ("once", True)])
def test_a_decision_contradicting_itself_is_refused(remember: str, for_session: bool) -> None:
    with pytest.raises(ValueError, match="contradicts"):
        ApprovalDecision(True, remember=remember, approve_for_session=for_session)  # type: ignore[arg-type]

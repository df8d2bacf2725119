"""Attachments a model passes to a worker call are reads by the calling worker (red team M4): only
files its own `read_file` would read, decided by its rules and the approval mode, before the callee
runs. Attachments a person or host passes are not judged so (tests/runtime/test_attachments.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic_ai import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.messages import ToolReturnPart
from pydantic_ai.models.function import FunctionModel

from llm_do.runtime import ApprovalDecision, ApprovalRequest, RuntimeConfig, run_worker
from tests.support.cli import worker


def attach_project(main_front: str) -> dict[str, Any]:
    return {
        "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
        "main.worker": worker(main_front, "Main."),
        "echo.worker": worker("description: repeats what it is given", "Repeat the attachment."),
        ".env": "OPENAI_API_KEY=sk-live-SECRET123\n",
        "notes/todo.md": "buy milk\n",
    }


class Run:
    """The entry worker attaches `paths` to one call of `echo`; `echo`'s model repeats what it got."""

    def __init__(self, bundle: Path, *paths: str, tool: str = "echo", extra: dict[str, Any] | None = None) -> None:
        self.echo_saw: list[bytes] = []
        self.returns: list[str] = []
        self.events: list[Any] = []
        call = ToolCallPart(tool, {"input": "repeat the attachment", "attachments": list(paths), **(extra or {})})
        self.turns = [[call], [TextPart("done")]]
        self.bundle = bundle

    def model_for(self, name: str) -> FunctionModel:
        def respond(messages: list[Any], info: Any) -> ModelResponse:
            parts = [p for m in messages for p in getattr(m, "parts", [])]
            if name != "main":
                self.echo_saw += [c.data for p in parts for c in getattr(p, "content", []) if hasattr(c, "data")]
                return ModelResponse(parts=[TextPart("ECHO")])
            self.returns = [_said(p) for p in parts if isinstance(p, ToolReturnPart)]
            return ModelResponse(parts=self.turns.pop(0))

        return FunctionModel(respond)

    def __call__(self, mode: str = "reject_all", callback: Any = None) -> Run:
        config = RuntimeConfig(model_for=self.model_for, approval_mode=mode, approval_callback=callback,
                               on_event=self.events.append)
        assert run_worker(self.bundle, "go", config=config).output == "done"
        return self


def _said(part: ToolReturnPart) -> str:
    """A tool's result as text; a failed one's error message alone."""
    return part.content if part.outcome == "failed" and isinstance(part.content, str) else part.model_response_str()


def test_the_red_team_attachment_of_env_from_a_confined_worker_is_refused(build) -> None:
    """The reproducer: main reads only notes/ and denies .env; attaching `.env` under reject_all."""
    bundle = build(attach_project("toolsets:\n  - filesystem_project: {path: notes}\n  - echo\n"
                                  "approvals:\n  - \"deny read_file(path ~ '**/.env*')\""))
    run = Run(bundle, ".env")()
    assert run.echo_saw == []
    assert run.returns == ["attachment '.env' is not a file worker 'main' may read (attachments are limited to what "
                           "its read_file reads); 'echo' was not called"]


def test_a_deny_rule_on_read_file_holds_for_attachments(build) -> None:
    bundle = build(attach_project("toolsets: [filesystem_project, echo]\n"
                                  "approvals:\n  - \"deny read_file(path ~ '**/.env*')\""))
    run = Run(bundle, "notes/../.env")(mode="approve_all")
    assert run.echo_saw == []
    assert run.returns == ["attachment 'notes/../.env': the project's approval rules deny read_file of it; 'echo' was not called"]


def test_a_worker_without_a_filesystem_toolset_attaches_nothing(build) -> None:
    bundle = build(attach_project("toolsets: [echo]"))
    run = Run(bundle, "notes/todo.md")(mode="approve_all")
    assert run.echo_saw == [] and "is not a file worker 'main' may read" in run.returns[0]


def test_a_file_the_worker_reads_without_asking_is_attached(build) -> None:
    bundle = build(attach_project("toolsets:\n  - filesystem_project_ro: {path: notes}\n  - echo"))
    run = Run(bundle, "notes/todo.md")()
    assert run.echo_saw == [b"buy milk\n"] and run.returns == ["ECHO"]


def test_a_suffix_the_worker_may_not_read_is_not_attached(build) -> None:
    bundle = build(attach_project("toolsets:\n  - filesystem_project_ro: {allowed_suffixes: [txt]}\n  - echo"))
    run = Run(bundle, "notes/todo.md")(mode="approve_all")
    assert run.echo_saw == [] and "is not a file worker 'main' may read" in run.returns[0]


def test_an_asked_read_is_asked_as_read_file_of_the_normalized_path(build) -> None:
    bundle = build(attach_project("toolsets: [filesystem_project, echo]\napprovals:\n  - ask read_file"))
    assert Run(bundle, "notes/todo.md")().echo_saw == []  # reject_all refuses the asked read
    asked: list[ApprovalRequest] = []

    def approve(request: ApprovalRequest) -> ApprovalDecision:
        asked.append(request)
        return ApprovalDecision(True)

    run = Run(bundle, "./notes//todo.md")(mode="prompt", callback=approve)
    assert [(r.worker, r.tool, r.toolset, r.normalized_args["path"]) for r in asked] == [
        ("main", "read_file", "filesystem_project", "notes/todo.md")]
    assert run.echo_saw == [b"buy milk\n"]


def test_a_denied_attachment_read_refuses_the_call_and_says_so(build) -> None:
    bundle = build(attach_project("toolsets: [filesystem_project, echo]\napprovals:\n  - ask read_file"))
    run = Run(bundle, "notes/todo.md")(mode="prompt", callback=lambda r: ApprovalDecision(False, note="private"))
    assert run.echo_saw == []
    assert run.returns == ["attachment 'notes/todo.md': read_file of it was denied (private); 'echo' was not called"]
    assert [(e.tool, e.outcome) for e in run.events if e.kind == "tool_returned"] == [("echo", "denied")]


def test_agent_call_attachments_are_reads_of_the_caller_too(build) -> None:
    """A created worker's call (`agent_call`) attaches under the same rule as a bundle worker's."""
    bundle = build(attach_project("toolsets:\n  - filesystem_project: {path: notes}\n  - dynamic_agents"))
    created = ToolCallPart("agent_create", {"name": "echo2", "instructions": "Repeat.", "description": "repeats"})
    run = Run(bundle, ".env", tool="agent_call", extra={"agent": "echo2"})
    run.turns.insert(0, [created])
    run(mode="approve_all")
    assert run.echo_saw == [] and run.returns[-1].startswith("attachment '.env' is not a file worker 'main' may read")


CUSTOM_INPUT_PY = '''
from llm_do.runtime import Attachment, WorkerArgs


class Document(WorkerArgs):
    name: str

    def prompt_messages(self):
        return ["Summarize it.", Attachment(self.name)]
'''


def test_a_custom_input_is_judged_on_the_attachments_its_prompt_makes(build) -> None:
    """A callee whose input class turns a field into an attachment: that path is judged too."""
    files = attach_project("toolsets:\n  - filesystem_project: {path: notes}\n  - echo")
    files["schemas.py"] = CUSTOM_INPUT_PY
    files["echo.worker"] = worker("schema_in_ref: schemas.py:Document", "Repeat the attachment.")
    bundle = build(files)
    for path, saw in ((".env", []), ("notes/todo.md", [b"buy milk\n"])):
        run = Run(bundle)
        run.turns[0] = [ToolCallPart("echo", {"name": path})]
        run(mode="approve_all")
        assert run.echo_saw == saw, path


def test_an_attachment_moved_while_its_read_is_asked_is_not_sent(build) -> None:
    """Approved as notes/todo.md; while the person answered, notes/todo.md became a link to .env
    (as a concurrent `mv` could make it): the callee's prompt reads nothing."""
    bundle = build(attach_project("toolsets: [filesystem_project, echo]\napprovals:\n  - ask read_file"))
    root = bundle.parent

    def approve_and_swap(request: ApprovalRequest) -> ApprovalDecision:
        (root / "notes/todo.md").unlink()
        (root / "notes/todo.md").symlink_to("../.env")
        return ApprovalDecision(True)

    run = Run(bundle, "notes/todo.md")(mode="prompt", callback=approve_and_swap)
    assert run.echo_saw == []
    assert run.returns == ["attachment 'notes/todo.md' changed after it was judged (another call moved a file or link); "
                           "the call was not made"]

"""The one approval gate: wraps all of a worker's tools (stdlib, Python, worker calls) at every
depth, so a denied tool never runs however deeply it is nested.

A tool's approval comes from the bundle (its default, changed by the worker's rules; a tool with
conditional rules is decided per call on its normalized arguments); `auto` asks the stdlib toolset
(shell: by command); tools of opaque toolsets carry theirs as metadata. What the gate may ask a
toolset (normalize, settle `auto`, always ask, show, edit) is declared in `toolkit.hooks`.
What the rules say lives in `llm_do.bundle.approval`, who answers an asked call in `approvals`; this
module is only where both are enforced.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NoReturn, cast

from pydantic_ai import RunContext
from pydantic_ai.exceptions import ModelRetry, ToolFailed
from pydantic_ai.toolsets import ToolsetTool, WrapperToolset

from llm_do.bundle.approval import (
    ALLOW,
    APPROVAL_METADATA_KEY,
    ASK,
    AUTO,
    DENY,
    PYTHON_TOOL_DEFAULT,
    TOOLSET_METADATA_KEY,
    Action,
    confined,
    decide,
)
from llm_do.bundle.views import WorkerSpec
from llm_do.toolkit.hooks import JUDGED, JudgedCall, hooks_of, offers_edit

from ..call_scope import CARRIED, NO_TAINT, RUNNING_TOOL_CALL, CallContext, CallFrame, RunHost
from ..errors import RUN_ENDING, RunFailed
from ..worker_calls_from_python import python_running, worker_caller

if TYPE_CHECKING:
    from ..approvals.decisions import ApprovalDecision, ApprovalRequest
    from ..taint import FrameTaint

RESULT_PREVIEW = 2000
_STRICTNESS: tuple[Action, ...] = (ALLOW, ASK, DENY)


@dataclass
class ApprovalGate(WrapperToolset[CallContext]):
    spec: WorkerSpec
    runtime: RunHost
    _listed: dict[str, ToolsetTool[CallContext]] = field(default_factory=dict, init=False, repr=False)
    """The worker's tools as last listed: among them, those that can read an attachment."""

    async def get_tools(self, ctx: RunContext[CallContext]) -> dict[str, ToolsetTool[CallContext]]:
        self._listed = await super().get_tools(ctx)
        return self._listed

    def decision_for(self, name: str, tool_args: Mapping[str, object], tool: ToolsetTool[CallContext],
                     normalized: Mapping[str, object] | None = None) -> Action:
        """What this call needs: the bundle's word for the tool (or an opaque tool's metadata),
        with `auto` settled by the toolset that owns the tool (`ToolsetHooks.approval_for`).
        `normalized`: the arguments as the toolset normalized them, if already done."""
        hooks = hooks_of(tool.toolset)
        binding = self.spec.tools.get(name)
        if binding is not None and binding.rules is not None:
            judged = hooks.normalize_args(name, tool_args) if normalized is None else normalized
            approval = decide(binding.rules, judged, binding.default or binding.approval)
        elif binding is not None:
            approval = binding.approval
        else:
            approval = (tool.tool_def.metadata or {}).get(APPROVAL_METADATA_KEY, PYTHON_TOOL_DEFAULT)
        if approval == AUTO:
            approval = hooks.approval_for(name, tool_args)
        if approval == ALLOW and hooks.always_asks(name):
            approval = ASK  # worker_create: no rule may let it through unasked
        return approval

    async def call_tool(self, name: str, tool_args: dict[str, object], ctx: RunContext[CallContext],
                        tool: ToolsetTool[CallContext]) -> object:
        running = RUNNING_TOOL_CALL.set(ctx.tool_call_id)
        try:
            return await self._call_tool(name, tool_args, ctx, tool)
        finally:
            RUNNING_TOOL_CALL.reset(running)

    async def _call_tool(self, name: str, tool_args: dict[str, Any], ctx: RunContext[CallContext], tool: ToolsetTool[CallContext]) -> Any:
        frame = ctx.deps.frame
        if not frame.kept:
            return await self._judged_call(name, tool_args, ctx, tool, NO_TAINT)
        # tokens of kept outputs (`quarantine`): the call is judged, asked and run with what they
        # stand for, and carries what those took in; whatever the model reads of the call (its
        # result, a refusal or failure that may quote its arguments) brings that into the frame
        from ..quarantine import KeptOutputProblem

        try:
            revealed, carried = frame.kept.reveal(tool_args)
        except KeptOutputProblem as exc:  # a typed argument that no longer fits its class
            frame.taint = frame.taint | exc.carried
            self._refuse(frame, name, f"the call to '{name}' with its kept outputs put in {exc}")
        if revealed is tool_args:
            return await self._judged_call(name, tool_args, ctx, tool, NO_TAINT)
        kept = False
        try:
            validated = self._validated(frame, name, cast("dict[str, Any]", revealed), tool,
                                       f"the call to '{name}' with its kept outputs put in")
            result = await self._judged_call(name, validated, ctx, tool, carried)
            kept = self._keeps(name)  # a quarantined callee's token hands nothing back
        finally:  # a result, a refusal, a failure, a crash's message: any may quote the words
            if not kept:
                frame.taint = frame.taint | carried
        return result

    async def _judged_call(self, name: str, tool_args: dict[str, Any], ctx: RunContext[CallContext],
                           tool: ToolsetTool[CallContext], carried: FrameTaint) -> Any:
        frame = ctx.deps.frame
        hooks = hooks_of(tool.toolset)
        normalized = hooks.normalize_args(name, tool_args)
        approval = self.decision_for(name, tool_args, tool, normalized)
        moves = hooks.moves(name, normalized) if self.spec.egress and approval != DENY else None
        flow = self.runtime.flow_guard.check(frame, self.spec, name, self._toolset_key(name, tool), moves, carried) \
            if self.spec.egress and approval != DENY and (frame.taint or carried or moves) \
            and not self._confined(name, normalized) else None
        if flow is not None and flow.accepted is None:
            approval = ASK  # private data and untrusted content in this frame: every egress is asked
        if self.runtime.listening:
            from ..events import FlowGuarded, ToolCalled

            self.runtime.emit(ToolCalled(frame.worker, frame.depth, name, tool_args, approval))
            if flow is not None:
                self.runtime.emit(FlowGuarded(frame.worker, frame.depth, name, "accepted" if flow.accepted else "ask",
                                              **flow.to_json()))
        if approval == DENY:
            self._refuse(frame, name, f"'{name}' is denied by the project's approval rules; it did not run")
        if approval == ASK:
            if (problem := hooks.refusal(name, tool_args, self.runtime)) is not None:  # doomed: nobody is asked
                self._returned(frame, name, "failed", problem)
                raise ToolFailed(problem)
            edited = await self._ask(frame, name, tool_args, tool, None if flow is None or flow.accepted else flow.reason())
            if edited is not None:  # a person edited the call before approving it
                tool_args = self._validated(frame, name, edited, tool, f"the edited call to '{name}'")
                normalized = hooks.normalize_args(name, tool_args)
        try:
            attached = hooks.attachments(name, tool_args)
        except ToolFailed as exc:
            self._refuse(frame, name, exc.message)
        files = await self._check_attachments(frame, name, attached) if attached else None
        # decided (and asked) outside any lock; a toolset that locks checks under it that its
        # normalized arguments are still these, the callee's prompt that it reads these files (`JUDGED`)
        judged = JUDGED.set(JudgedCall(name, normalized, files))
        carrying = CARRIED.set(carried)
        try:
            with python_running(worker_caller(self.spec.name, self.spec.source, self.spec.calls, frame)):
                result = await self.wrapped.call_tool(name, tool_args, ctx, tool)
        except (ToolFailed, ModelRetry) as exc:
            self._take_in(frame, name, tool)  # a failure's message is read by the model too
            self._returned(frame, name, "failed", str(exc))
            raise
        except RUN_ENDING:  # a nested call's failure, or the tool imported unverified project code
            raise
        except Exception as exc:  # a user tool crashed: end the run with one line saying where
            from ..tool_errors import tool_crashed

            self._returned(frame, name, "crashed", f"{type(exc).__name__}: {exc}")
            raise tool_crashed(exc, name, frame.worker, self.runtime.bundle.root) from exc
        finally:
            CARRIED.reset(carrying)
            JUDGED.reset(judged)
        self._take_in(frame, name, tool)
        if not isinstance(result, str):
            _check_serializable(result, name, frame.worker)
        if self.runtime.listening:
            from ..events import jsonable

            preview = result if isinstance(result, str) else json.dumps(jsonable(result), ensure_ascii=False, default=str)
            self._returned(frame, name, "ok", preview[:RESULT_PREVIEW])
        return result

    def _keeps(self, name: str) -> bool:
        """Whether `name` is a call of a quarantined worker: its model reads a token, nothing more."""
        callee = self.runtime.bundle.worker(name) if name in self.spec.calls else None
        return callee is not None and callee.quarantined

    def _confined(self, name: str, args: dict[str, Any]) -> bool:
        """The call is allowed by a rule that confines where it sends: no egress for the guard."""
        binding = self.spec.tools.get(name)
        return binding is not None and bool(binding.confined_by) and binding.rules is not None \
            and confined(binding.rules, binding.confined_by, args)

    def _take_in(self, frame: CallFrame, name: str, tool: ToolsetTool[CallContext]) -> None:
        """The tool returned (or failed) in `frame`: the private and untrusted labels of its grants
        join the frame's taint (`taint`)."""
        if self.spec.labelled:
            added = self.spec.taken_in(name, self._toolset_key(name, tool))
            if added and not added <= frame.taint:
                frame.taint = frame.taint | added

    def _toolset_key(self, name: str, tool: ToolsetTool[CallContext]) -> str | None:
        """The bundle key of the tool's toolset (None for a worker call)."""
        binding = self.spec.tools.get(name)
        return binding.toolset if binding is not None else (tool.tool_def.metadata or {}).get(TOOLSET_METADATA_KEY)

    def approval_request(self, frame: CallFrame, name: str, tool_args: dict[str, Any], tool: ToolsetTool[CallContext],
                         flow: str | None) -> ApprovalRequest:
        """The request naming exactly what would run: the worker, the toolset (its bundle key and
        this worker's settings for it), the tool, the arguments as the toolset normalizes them, and
        as every approver is shown them; `flow`: why the taint guard asks, if it does."""
        from ..approvals.decisions import ApprovalRequest

        key = self._toolset_key(name, tool)
        settings = next((dict(u.settings) for u in self.spec.toolsets if key is not None and u.toolset == key), {})
        hooks = hooks_of(tool.toolset)
        edit = (lambda: hooks.edit_args(name, tool_args)) if offers_edit(hooks) and self.spec.tools.get(name) is not None else None
        return ApprovalRequest(frame.worker, frame.depth, name, tool_args, key, settings, hooks.normalize_args(name, tool_args),
                               edit=edit, shown=hooks.shown_args(name, tool_args), flow=flow)

    async def _ask(self, frame: CallFrame, name: str, tool_args: dict[str, Any],
                   tool: ToolsetTool[CallContext], flow: str | None) -> dict[str, Any] | None:
        """Ask whoever answers for this run; a denial refuses the call. Returns the arguments a
        person edited before approving, if any."""
        request, decision = await self._answer(frame, name, tool_args, tool, flow)
        if decision.feedback is not None:
            self._revise(frame, name, decision.feedback)
        if not decision.approved:
            self._refuse(frame, name, f"the call to '{name}' was denied ({decision.note or 'not approved'}); it did not run")
        return decision.args if request.edit is not None else None  # only calls offered for editing

    async def _answer(self, frame: CallFrame, name: str, tool_args: dict[str, Any],
                      tool: ToolsetTool[CallContext], flow: str | None = None) -> tuple[ApprovalRequest, ApprovalDecision]:
        """The request for a call and whoever answers for this run's decision on it."""
        request = self.approval_request(frame, name, tool_args, tool, flow)
        decision, by = await self.runtime.request_approval(request)
        if self.runtime.listening:
            from ..events import ApprovalDecided

            self.runtime.emit(ApprovalDecided(frame.worker, frame.depth, name, decision.approved, by, decision.note,
                                              decision.feedback))
        return request, decision

    async def _check_attachments(self, frame: CallFrame, name: str, paths: list[str]) -> dict[str, str]:
        """Files a model attaches to a worker call are read by the calling worker: each must be one
        its own tools would read (`ToolsetHooks.reads`: its filesystem toolset's `read_file`),
        and is decided as that read would be (rules, `ask`, the approval mode); else the call is
        refused before the callee runs (red team M4). Returns each path -> the file judged."""
        root = os.path.realpath(self.runtime.bundle.root)
        files: dict[str, str] = {}
        for path in paths:
            absolute = files[path] = os.path.realpath(os.path.join(root, path))
            read = self._attachment_read(absolute)
            if read is None:
                inside = absolute == root or absolute.startswith(root + os.sep)
                where = (f"not a file worker '{frame.worker}' may read (attachments are limited to what its read_file reads)"
                         if inside else "outside the project")
                self._refuse(frame, name, f"attachment {path!r} is {where}; '{name}' was not called")
            reader, args, tool, approval = read
            if approval == DENY:
                self._refuse(frame, name, f"attachment {path!r}: the project's approval rules deny {reader} of it; "
                                          f"'{name}' was not called")
            if approval == ASK:
                _, decision = await self._answer(frame, reader, args, tool)
                if decision.feedback is not None:
                    self._revise(frame, name, decision.feedback)
                if not decision.approved:
                    self._refuse(frame, name, f"attachment {path!r}: {reader} of it was denied "
                                              f"({decision.note or 'not approved'}); '{name}' was not called")
            self._take_in(frame, reader, tool)  # the callee reads it: what it holds joins the call
        return files

    def _attachment_read(self, path: str) -> tuple[str, dict[str, Any], ToolsetTool[CallContext], Action] | None:
        """The least gated of this worker's tools that would read `path`: its name, the read's
        normalized arguments, the tool and the decision; None when no tool reads it."""
        best: tuple[str, dict[str, Any], ToolsetTool[CallContext], Action] | None = None
        for reader, tool in self._listed.items():
            args = hooks_of(tool.toolset).reads(reader, path)
            if args is None:
                continue
            approval = self.decision_for(reader, args, tool, args)
            if best is None or _STRICTNESS.index(approval) < _STRICTNESS.index(best[3]):
                best = (reader, args, tool, approval)
        return best

    def _validated(self, frame: CallFrame, name: str, args: dict[str, Any], tool: ToolsetTool[CallContext],
                   what: str) -> dict[str, Any]:
        """Arguments changed since the model's were validated (a person edited them, kept outputs
        were put in), validated as the model's were; the call is refused if they do not fit."""
        from pydantic import ValidationError

        try:
            validated: dict[str, Any] = tool.args_validator.validate_python(args)
            return validated
        except ValidationError as exc:
            problem = " ".join(str(exc).split())[:300]
        self._refuse(frame, name, f"{what} does not validate: {problem}")

    def _returned(self, frame: CallFrame, name: str, outcome: str, text: str) -> None:
        if self.runtime.listening:
            from ..events import ToolReturned

            self.runtime.emit(ToolReturned(frame.worker, frame.depth, name, outcome, text))

    def _revise(self, frame: CallFrame, name: str, feedback: str) -> NoReturn:
        """The tool does not run; the model reads the person's feedback as the call's result,
        marked as a revision request, so it can change the call and try again."""
        message = (f"revision requested: the user did not let '{name}' run and asks you to change the call "
                   f"and try again. Their feedback: {feedback}")
        self._returned(frame, name, "revised", feedback)
        raise ToolFailed(message)

    def _refuse(self, frame: CallFrame, name: str, message: str) -> NoReturn:
        """The tool does not run; the model is told why (a failed tool result) and goes on."""
        self._returned(frame, name, "denied", message)
        raise ToolFailed(message)


def _check_serializable(result: object, tool: str, worker: str) -> None:
    """A value the model cannot be sent would fail later, deep in pydantic-ai, naming no tool."""
    from pydantic_ai.messages import ToolReturn, ToolReturnPart
    from pydantic_core import PydanticSerializationError

    if isinstance(result, ToolReturn):
        return
    try:
        ToolReturnPart(tool, result).model_response_str()
    except PydanticSerializationError as exc:
        raise RunFailed(f"tool '{tool}' of worker '{worker}' returned a value of type {type(result).__name__}, which cannot be "
                        f"sent to the model: {' '.join(str(exc).split())}") from None

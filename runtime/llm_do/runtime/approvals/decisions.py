"""Approval decisions: the types a host uses, the ready-made callbacks, and the session cache.

A tool call that needs approval becomes an `ApprovalRequest`; whoever answers it returns an
`ApprovalDecision`: approve (once or for the session), deny, or revise with feedback for the
model. `approve_all` and `reject_all` answer without asking; `prompt` asks the callback, or the
terminal, or (with neither) denies and says so.
"""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from llm_do.bundle.approval import ApprovalMode

from ..run_label import RUN_LABEL

FLOW_ASKED = "accept the flow in project.json (flows.accept) to let such a call through unasked"


@dataclass(frozen=True)
class ApprovalRequest:
    """A call waiting for a decision: who makes it, what runs, with which arguments.

    `toolset` and `settings` say which tool this is: two workers' `write_file` differ when their
    toolsets are rooted elsewhere, and a Python tool named `write_file` is not the stdlib one."""

    worker: str
    depth: int
    tool: str
    args: dict[str, Any]
    """The arguments as the model gave them (validated)."""
    toolset: str | None = None
    """The bundle key of the toolset the tool belongs to (`filesystem_project`, `tools.TOOLS`);
    None for a call to another worker."""
    settings: dict[str, Any] = field(default_factory=dict)
    """The worker's settings for that toolset (`{"path": "docs"}`)."""
    normalized_args: dict[str, Any] | None = None
    """The arguments as the tool will use them (paths resolved below its root; the arguments as
    given where the toolset has no normalizer); session approvals compare these rather than the
    spelling the model chose. None in a request built without them: `args` is used."""
    edit: Callable[[], dict[str, Any] | None] | None = field(default=None, compare=False, repr=False)
    """Offered for calls a person may edit before approving them (`worker_create`): opens the
    editor and returns the edited arguments (None: unchanged); raises ValueError saying why an
    edit cannot be used."""
    shown: dict[str, Any] | None = field(default=None, compare=False, repr=False)
    """The arguments as every approver is shown them (`ToolsetHooks.shown_args`: paths and
    commands as the rules judge them, whole); None: the normalized arguments, else as given."""
    flow: str | None = None
    """Why the taint guard asks (`taint.FlowCheck.reason`): the calling frame holds private data
    and untrusted content and this call can send data out. Such a call is denied when nobody can
    be asked, `approve_all` included; None: asked for the rules' sake only."""

    def shown_args(self) -> dict[str, object]:
        """What `describe` shows of each argument."""
        if self.shown is not None:
            return self.shown
        return self.args if self.normalized_args is None else self.normalized_args

    def describe(self, full: bool = False) -> str:
        """The description every approver gets (`question`): the worker, its depth, the
        tool and its toolset, then each argument as the rules judge it, paths and commands whole,
        long text as its size and first lines (all of it with `full`)."""
        from .question import describe_call

        return describe_call(self, self.shown_args(), full)[0]

    def leaves_out(self) -> bool:
        """Whether `describe()` summarizes something `describe(full=True)` shows."""
        from .question import describe_call

        return describe_call(self, self.shown_args())[1]

    def session_key(self) -> str:
        """What "approve for this session" remembers: the worker, the toolset with its settings,
        the tool and its (normalized) arguments; never the tool's name alone."""
        args = self.args if self.normalized_args is None else self.normalized_args
        return json.dumps([self.worker, self.toolset, self.settings, self.tool, args], sort_keys=True, default=str)


@dataclass(frozen=True)
class ApprovalDecision:
    """An answer: approve (once or for the session), deny (with a `note`), or revise: deny with
    `feedback`, which the model reads as a request to change the call and try again.

    The seed API's `approve_for_session=True` is `remember="session"`; both spellings are kept in
    step, and a decision that says both and disagrees is refused, as is feedback on an approval."""

    approved: bool
    remember: Literal["once", "session"] | None = None
    """`session`: the same call (same worker, toolset and settings, tool and arguments) is approved
    for the rest of the run. Default: once."""
    note: str | None = None
    """Why, when denied: the model reads it."""
    feedback: str | None = None
    """Revise: what the person wants done differently. The tool does not run; the model gets the
    feedback as the tool's result, marked as a revision request."""
    approve_for_session: bool | None = None
    """The seed API's name for `remember="session"`."""
    args: dict[str, Any] | None = None
    """Approved with these arguments in place of the model's: a person edited the call."""

    def __post_init__(self) -> None:
        if self.remember is not None and self.approve_for_session is not None \
                and (self.remember == "session") != self.approve_for_session:
            raise ValueError(f"ApprovalDecision: remember={self.remember!r} contradicts approve_for_session={self.approve_for_session}")
        session = self.remember == "session" or bool(self.approve_for_session)
        object.__setattr__(self, "remember", "session" if session else "once")
        object.__setattr__(self, "approve_for_session", session)
        if self.feedback is not None:
            if self.approved:
                raise ValueError("ApprovalDecision: feedback asks for a revision, so the call cannot also be approved")
            if not self.feedback.strip():
                raise ValueError("ApprovalDecision: feedback is empty; deny with a note instead")

    @property
    def revised(self) -> bool:
        """Denied with feedback for the model (a revision request), rather than plainly denied."""
        return self.feedback is not None

    @classmethod
    def revise(cls, feedback: str) -> ApprovalDecision:
        """Do not run the call; tell the model what to change."""
        return cls(False, feedback=feedback)


ApprovalCallback = Callable[[ApprovalRequest], "ApprovalDecision | Awaitable[ApprovalDecision]"]


def request_callback(callback: Callable[..., Any]) -> ApprovalCallback:
    """A callback of llm-do's form (one `ApprovalRequest`) from either form: a callable of three
    required positional parameters is the seed API's `(tool_name, payload, reason)`, called with
    the tool, its arguments and the question (`describe()`); any other passes through."""
    try:
        parameters = inspect.signature(callback).parameters.values()
    except (TypeError, ValueError):
        return callback
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) != 3 or any(p.default is not p.empty for p in positional):
        return callback

    def ask(request: ApprovalRequest) -> Any:
        return callback(request.tool, dict(request.args), request.describe())

    return ask


def approve_all(request: ApprovalRequest) -> ApprovalDecision:
    """A callback that approves every request but those the taint guard asks (`flow`): approving
    without looking is what `--approve-all` does, and it does not approve them either."""
    if request.flow is not None:
        return ApprovalDecision(False, note=f"approve_all does not approve it: {request.flow}; {FLOW_ASKED}")
    return ApprovalDecision(True)


def reject_all(request: ApprovalRequest) -> ApprovalDecision:
    """A strict callback: every request that needs approval is denied."""
    return ApprovalDecision(False, note="calls that need approval are rejected in this run")


strict = reject_all

approve_all_callback = approve_all
"""The seed API's name for `approve_all`."""
strict_mode_callback = reject_all
"""The seed API's name for `reject_all`."""


@dataclass
class Approver:
    """Answers requests for one run: mode first, then the session cache, then whoever can ask.

    `interactive`: stdin is a terminal (the CLI's test), so a person can answer. In `prompt` mode
    with no callback and no one to answer the call is denied, and the person running it is told on
    stderr, whatever stderr is, as well as the model in the tool result. So is a call the taint
    guard asks under `approve_all`, which approves everything else (newcomer G3)."""

    mode: ApprovalMode
    callback: ApprovalCallback | None = None
    """Either form (`request_callback`)."""
    interactive: bool = False
    flow_denied: int = 0
    """Calls the taint guard asked that `approve_all` denied: the CLI says so at the end of the run."""
    _session: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.callback is not None:
            self.callback = request_callback(self.callback)

    def remember(self, request: ApprovalRequest) -> None:
        self._session.add(request.session_key())

    def remembered(self, request: ApprovalRequest) -> bool:
        return request.session_key() in self._session

    async def decide(self, request: ApprovalRequest) -> tuple[ApprovalDecision, str]:
        """The decision and who made it: mode, session, callback or terminal."""
        if self.mode == "approve_all":
            if request.flow is not None:
                self.flow_denied += 1
                _say_denied(request, f"{request.flow}; --approve-all does not approve it (accept the flow in "
                                     "project.json's flows.accept, or run where someone can answer)")
                return ApprovalDecision(False, note=f"--approve-all does not approve it: {request.flow}; {FLOW_ASKED}"), "mode"
            return ApprovalDecision(True), "mode"
        if self.mode == "reject_all":
            return ApprovalDecision(False, note="the run rejects calls that need approval (reject_all)"), "mode"
        if self.remembered(request):
            return ApprovalDecision(True, "session"), "session"
        if self.callback is not None:
            from ..host_callbacks import awaited, call_host, callback_failed

            decision = call_host("approval_callback", self.callback, request)
            if inspect.isawaitable(decision):
                decision = await awaited("approval_callback", decision)
            if not isinstance(decision, ApprovalDecision):
                raise callback_failed("approval_callback", f"returned {type(decision).__name__}, not an ApprovalDecision")
            by = "callback"
        elif self.interactive:
            from .terminal import Revision, ask_on_terminal

            answer = await ask_on_terminal(request)
            if isinstance(answer, dict):
                decision = ApprovalDecision(True, args=answer)
            elif answer in ("once", "session"):
                decision = ApprovalDecision(True, "session" if answer == "session" else "once")
            elif isinstance(answer, Revision):
                decision = ApprovalDecision.revise(answer.feedback)
            else:
                decision = ApprovalDecision(False, note="the user denied this call")
            by = "terminal"
        elif request.flow is not None:
            _say_denied(request, f"{request.flow}; no terminal to ask (--approve-all does not approve it; accept the flow "
                                 "in project.json's flows.accept)")
            return ApprovalDecision(False, note=f"there is no terminal to ask: {request.flow}; {FLOW_ASKED}"), "no-terminal"
        else:
            _say_denied(request, "approval needed and no terminal to ask; pass --approve-all to allow it")
            return ApprovalDecision(
                False, note="this call needs approval and there is no terminal to ask; the run was started without "
                "--approve-all"), "no-terminal"
        if decision.approved and decision.remember == "session":
            self.remember(request)
        return decision, by


def _say_denied(request: ApprovalRequest, why: str) -> None:
    """One line on stderr for a call denied with nobody asked, whatever stderr is."""
    sys.stderr.write(f"llm-do: {RUN_LABEL.get()}denied {request.tool} ({request.worker}@{request.depth}): {why}\n")
    sys.stderr.flush()

"""Approval decisions: the types a host uses, the ready-made callbacks, and the session cache.

A tool call that needs approval becomes an `ApprovalRequest`; whoever answers it returns an
`ApprovalDecision`. `approve_all` and `reject_all` answer without asking; `prompt` asks the
callback, or the terminal, or (with neither) denies and says so.
"""

from __future__ import annotations

import inspect
import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from .approval_policy import ApprovalMode


@dataclass(frozen=True)
class ApprovalRequest:
    worker: str
    depth: int
    tool: str
    args: dict[str, Any]

    def describe(self) -> str:
        shown = ", ".join(f"{k}={_short(v)}" for k, v in self.args.items())
        return f"{self.worker} wants to call {self.tool}({shown})"


@dataclass(frozen=True)
class ApprovalDecision:
    approved: bool
    remember: Literal["once", "session"] = "once"
    """`session`: the same tool with the same arguments is approved for the rest of the run."""
    note: str | None = None
    """Why, when denied: the model reads it."""


ApprovalCallback = Callable[[ApprovalRequest], "ApprovalDecision | Awaitable[ApprovalDecision]"]


def approve_all(request: ApprovalRequest) -> ApprovalDecision:
    """A callback that approves every request."""
    return ApprovalDecision(True)


def reject_all(request: ApprovalRequest) -> ApprovalDecision:
    """A strict callback: every request that needs approval is denied."""
    return ApprovalDecision(False, note="calls that need approval are rejected in this run")


strict = reject_all


def _short(value: Any, limit: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _key(request: ApprovalRequest) -> str:
    return json.dumps([request.tool, request.args], sort_keys=True, default=str)


@dataclass
class Approver:
    """Answers requests for one run: mode first, then the session cache, then whoever can ask.

    In `prompt` mode with no callback and no terminal the call is denied, and the person running
    it is told on stderr as well as the model in the tool result."""

    mode: ApprovalMode
    callback: ApprovalCallback | None = None
    interactive: bool = False
    _session: set[str] = field(default_factory=set)

    def remember(self, request: ApprovalRequest) -> None:
        self._session.add(_key(request))

    def remembered(self, request: ApprovalRequest) -> bool:
        return _key(request) in self._session

    async def decide(self, request: ApprovalRequest) -> tuple[ApprovalDecision, str]:
        """The decision and who made it: mode, session, callback or terminal."""
        if self.mode == "approve_all":
            return ApprovalDecision(True), "mode"
        if self.mode == "reject_all":
            return ApprovalDecision(False, note="the run rejects calls that need approval (reject_all)"), "mode"
        if self.remembered(request):
            return ApprovalDecision(True, "session"), "session"
        if self.callback is not None:
            decision = self.callback(request)
            if inspect.isawaitable(decision):
                decision = await decision
            by = "callback"
        elif self.interactive:
            decision, by = await ask_on_terminal(request), "terminal"
        else:
            sys.stderr.write(f"llm-do: denied {request.tool} ({request.worker}@{request.depth}): approval needed and no "
                             "terminal to ask; pass --approve-all to allow it\n")
            sys.stderr.flush()
            return ApprovalDecision(
                False, note="this call needs approval and there is no terminal to ask; the run was started without "
                "--approve-all"), "no-terminal"
        if decision.approved and decision.remember == "session":
            self.remember(request)
        return decision, by


async def ask_on_terminal(request: ApprovalRequest) -> ApprovalDecision:
    """Ask on stderr/stdin: approve once, approve for the session, or deny."""
    import asyncio

    prompt = f"\n{request.describe()}\n  [y] approve once  [s] approve for this session  [n] deny: "
    while True:
        sys.stderr.write(prompt)
        sys.stderr.flush()
        answer = (await asyncio.to_thread(sys.stdin.readline)).strip().lower()
        if answer in ("y", "yes"):
            return ApprovalDecision(True)
        if answer in ("s", "session"):
            return ApprovalDecision(True, "session")
        if answer in ("n", "no", ""):
            return ApprovalDecision(False, note="the user denied this call")

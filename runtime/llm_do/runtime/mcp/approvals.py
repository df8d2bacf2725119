"""Who answers an asked tool call when a bundle is served over MCP (`llm-do serve`).

A server has no terminal: stdin and stdout carry the protocol. So an asked call is denied unless
the server was started with `--approve-all` (settled by the approval mode before anyone is asked)
or with `--approvals-via-client`, where the client is asked through MCP elicitation, if it
declared that it supports it. Either way the model reads why a call did not run.

The client is asked the description every approver gets (`ApprovalRequest.describe()`: paths and
commands whole, as the rules judge them), and only an explicit `approve: true` approves: a client
that accepts the form without a choice (filling in defaults) approves nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from ..approvals.decisions import ApprovalDecision, ApprovalRequest

NOT_GIVEN = ("approval was not given: this MCP server asks no one (start `llm-do serve` with --approve-all, "
             "or with --approvals-via-client for a client that supports elicitation)")
NO_ELICITATION = "approval was not given: the MCP client cannot be asked (it does not support elicitation)"
DECLINED = "the client's user declined this call"
NO_CHOICE = "the client accepted the approval form without choosing to approve; the call was not approved"

ELICITATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {"type": "boolean", "title": "Approve", "description": "Run this call."},
        "remember": {"type": "boolean", "title": "Remember",
                     "description": "Approve the same call again, unasked, for the rest of this run.", "default": False},
        "note": {"type": "string", "title": "Note", "description": "When not approving: why, for the model to read."},
    },
    "required": ["approve"],
}
"""The form a client shows: flat, primitive properties only, as MCP elicitation requires. `approve`
has no default: a person chooses it."""


def _told(request: ApprovalRequest, note: str) -> ApprovalDecision:
    """A denial, said on stderr too (the server's operator reads that) and to the model."""
    sys.stderr.write(f"llm-do: denied {request.tool} ({request.worker}@{request.depth}): {note}\n")
    sys.stderr.flush()
    return ApprovalDecision(False, note=note)


def refuse_unasked(request: ApprovalRequest) -> ApprovalDecision:
    """The default policy: no one to ask, so an asked call is denied and the model told why."""
    return _told(request, NOT_GIVEN)


def decision_of(action: str, content: Mapping[str, object] | None) -> ApprovalDecision:
    """The client's answer to the approval form as a decision: only an accepted form that says
    `approve: true` approves; a declined or cancelled form, or one accepted without that choice,
    denies."""
    content = content or {}
    if action != "accept":
        return ApprovalDecision(False, note=DECLINED)
    if "approve" not in content:
        return ApprovalDecision(False, note=NO_CHOICE)
    if content["approve"] is True:
        return ApprovalDecision(True, "session" if content.get("remember") is True else "once")
    note = content.get("note")
    return ApprovalDecision(False, note=note if isinstance(note, str) and note.strip() else DECLINED)


class ClientApprover:
    """`--approvals-via-client`: asks the client that made the tool call. A client of the
    handshake era is asked on the call's own request (so over HTTP the question travels on its
    stream); one of the 2026-07-28 era in the call's result, answering in its next call
    (`ServedRun.ask`)."""

    def __init__(self, run: Any) -> None:
        self.run = run

    async def __call__(self, request: ApprovalRequest) -> ApprovalDecision:
        session = self.run.ctx.session
        capabilities = session.client_capabilities
        if capabilities is None or capabilities.elicitation is None:
            return _told(request, NO_ELICITATION)
        import mcp_types as types
        from mcp.shared.exceptions import MCPError

        message = f"Approve? {request.describe()}"
        try:
            if session.can_send_request:
                answer = await session.elicit_form(message, ELICITATION_SCHEMA, related_request_id=self.run.ctx.request_id)
            else:
                answer = await self.run.ask(types.ElicitRequest(
                    params=types.ElicitRequestFormParams(message=message, requested_schema=ELICITATION_SCHEMA)))
        except MCPError as exc:
            return _told(request, f"approval was not given: asking the client failed ({exc})")
        return decision_of(answer.action, answer.content)

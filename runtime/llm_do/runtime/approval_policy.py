"""The approval vocabulary, in one place: what a tool call may need, who may run it, and how a run
answers the calls that must be asked.

Standard library only: the compiler (rules, lowering), the stdlib descriptors, the bundle model and
the runtime gate all name these, and none of them should pull in more to do so.
"""

from __future__ import annotations

from typing import Final, Literal

Action = Literal["allow", "ask", "deny"]
"""What an approval rule says, and what a call finally gets."""

Approval = Literal["allow", "ask", "deny", "auto"]
"""A tool's approval in the bundle: an action, or `auto` (the toolset decides per call, e.g.
shell allows read-only commands and asks the rest)."""

ApprovalMode = Literal["prompt", "approve_all", "reject_all"]
"""How a run answers the calls that must be asked (`ask`); `deny` holds in every mode."""

ALLOW: Final = "allow"
ASK: Final = "ask"
DENY: Final = "deny"
AUTO: Final = "auto"

PYTHON_TOOL_DEFAULT: Final[Action] = ASK
"""Python tools (and tools of opaque toolsets) are asked unless a rule says otherwise: the
compiler cannot see what they do."""

WORKER_CALL_DEFAULT: Final[Action] = ALLOW
"""Calling another worker is allowed: what the callee may do is gated at its own tools."""

APPROVAL_METADATA_KEY: Final = "llm_do_approval"
"""Tool metadata carrying the approval of a tool the bundle could not list (opaque toolsets)."""

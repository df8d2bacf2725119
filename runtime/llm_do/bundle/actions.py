"""What an approval says, as types: below both the bundle's model, which declares them in its
nodes, and `approval`, which evaluates the rules (and names the model's rule tree): neither then
imports the other. Standard library only."""

from __future__ import annotations

from typing import Literal

Action = Literal["allow", "ask", "deny"]
"""What an approval rule says, and what a call finally gets."""

Approval = Literal["allow", "ask", "deny", "auto"]
"""A tool's approval in the bundle: an action, or `auto` (the toolset decides per call, e.g.
shell allows read-only commands and asks the rest)."""

ApprovalMode = Literal["prompt", "approve_all", "reject_all"]
"""How a run answers the calls that must be asked (`ask`); `deny` holds in every mode."""

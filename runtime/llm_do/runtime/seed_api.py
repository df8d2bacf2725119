"""The seed API's classes that llm-do's own API has no twin for: `WorkerSpec`,
`WorkerCreationDefaults` and `ApprovalController`.

The seed (the runtime API reference llm-do was designed from) is written
`from llm_do import run_worker, call_worker, create_worker, WorkerSpec, ApprovalController, ...`;
each name here is a thin layer over llm-do's API, so those calls run as written
(spec/legacy.md, "The seed API"). Loaded only when one of them is used.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .approvals.decisions import ApprovalDecision, ApprovalRequest, request_callback
from .errors import CallRefused, InputProblem


@dataclass(frozen=True)
class CreationSpec:
    """What `create_worker(spec=...)` writes: a worker's name, instructions, description and
    (optionally) model."""

    name: str
    instructions: str
    description: str = ""
    model: str | None = None


WorkerSpec = CreationSpec
"""The seed's name; not the bundle's `WorkerSpec` (`llm_do.bundle.views`), which describes a built
worker."""


@dataclass(frozen=True)
class WorkerCreationDefaults:
    """Defaults for `create_worker(defaults=...)`: the model of a spec that names none."""

    default_model: str | None = None


class ApprovalController:
    """The seed's approval gate for host code: `maybe_run(tool_name=, payload=, func=)` runs `func`
    when `tool_rules` lets the tool run: unlisted or `approval_required` false, it runs; `allowed`
    false, `CallRefused`; else `approval_callback` decides (a decision for the session is
    remembered for the same tool and payload), and a denial is `CallRefused` with its note.

    A rule is a mapping or an object with `allowed` and `approval_required` (the seed's
    `ToolRule`), or a bool meaning `approval_required`. Workers in a bundle are gated by their
    `approvals:` rules, not by this class."""

    def __init__(self, tool_rules: Mapping[str, Any] | None = None,
                 approval_callback: Callable[..., Any] | None = None) -> None:
        self.tool_rules = dict(tool_rules or {})
        self.approval_callback = approval_callback
        self._session: set[str] = set()

    def maybe_run(self, tool_name: str, payload: Mapping[str, Any], func: Callable[[], Any]) -> Any:
        allowed, required = _rule(self.tool_rules.get(tool_name))
        if not allowed:
            raise CallRefused(f"tool '{tool_name}' is not allowed by the tool rules")
        if required:
            request = ApprovalRequest(worker="host", depth=0, tool=tool_name, args=dict(payload))
            key = request.session_key()
            if key not in self._session:
                decision = self._decide(request)
                if not decision.approved:
                    why = decision.feedback or decision.note or "denied"
                    raise CallRefused(f"the call to '{tool_name}' was denied ({why}); it did not run")
                if decision.remember == "session":
                    self._session.add(key)
        return func()

    def _decide(self, request: ApprovalRequest) -> ApprovalDecision:
        if self.approval_callback is None:
            raise CallRefused(f"tool '{request.tool}' needs approval and the controller has no approval_callback")
        decision = request_callback(self.approval_callback)(request)
        if inspect.isawaitable(decision):
            raise InputProblem("ApprovalController.maybe_run takes a synchronous approval_callback")
        if not isinstance(decision, ApprovalDecision):
            raise InputProblem(f"the approval callback returned {type(decision).__name__}, not an ApprovalDecision")
        return decision


def _rule(rule: Any) -> tuple[bool, bool]:
    """(allowed, approval required) of one tool rule; no rule: allowed, no approval."""
    if rule is None:
        return True, False
    if isinstance(rule, bool):
        return True, rule
    get = rule.get if isinstance(rule, Mapping) else lambda key, default: getattr(rule, key, default)
    return bool(get("allowed", True)), bool(get("approval_required", False))

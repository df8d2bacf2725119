"""A capability's path and gates, and a flow's leg, in one line each, as `capabilities`, `diff`
and the R rules say them.

Text about an analysis result (`capabilities.Reach`, `trifecta.Leg`), below both the check that
warns about it (R001/R002) and the reports that list it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from llm_do.bundle.flow import INPUT

from .capabilities import ALLOW, Reach, Step

if TYPE_CHECKING:
    from .trifecta import Leg


def via_text(reach: Reach) -> str:
    """`write_file`, `helper -> write_file`, `model openai:gpt-4o`: the path after the worker."""
    final = reach.steps[-1]
    last = f"model {final.via}" if final.via_kind == "model" else f"toolset {final.via}" if final.via_kind == "toolset" \
        else final.via
    return " -> ".join([*reach.path[1:], last])


def _step_text(step: Step) -> str:
    text = f"{step.worker}.{step.via}"
    if step.gate.rules:
        return f"{text} by {rules_text(step.gate.rules, step.gate.paths_in)}"
    return text + (" by a rule" if step.gate.by == "rule" else "")


def rules_text(rules: tuple[str, ...] | list[str], paths_in: str | None) -> str:
    """`allow write_file; deny write_file(path ~ 'secret*') (paths in docs/)`: the rules, and the
    root their path conditions are relative to."""
    where = f" (paths in {paths_in})" if paths_in else ""
    return "; ".join(rules) + where


def gate_text(reach: Reach) -> str:
    """`no approval`, or the strongest gate and every gated step: `ask at helper.write_file`."""
    if reach.gate == ALLOW:
        return "no approval"
    return f"{reach.gate} at " + ", ".join(_step_text(s) for s in reach.gated_steps)


def leg_text(leg: Leg) -> str:
    """`private fs.read:project/** via reader -> read_file [no approval]`; `untrusted: the run's input`."""
    if leg.capability == INPUT:
        return f"{leg.label}: the run's input"
    return f"{leg.label}: {leg.capability} via {via_text(leg.reach)} [{gate_text(leg.reach)}]"

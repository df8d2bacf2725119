"""A worker's lethal trifecta in words, as `capabilities` prints it (text and Markdown)."""

from __future__ import annotations

from llm_do.bundle.flow import INPUT

from ..flows.trifecta import Flow, Leg
from ..reach_text import gate_text, via_text

STATUS = {"armed": "ARMED: egress with no approval on the way", "gated": "egress behind approval",
          "accepted": "accepted in project.json"}


def leg_text(leg: Leg) -> str:
    """`private fs.read:project/** via reader -> read_file [no approval]`; `untrusted: the run's input`."""
    if leg.capability == INPUT:
        return f"{leg.label}: the run's input"
    return f"{leg.label}: {leg.capability} via {via_text(leg.reach)} [{gate_text(leg.reach)}]"


def flow_lines(flow: Flow) -> list[str]:
    status = STATUS[flow.status] + (", through a server-side tool no approval can gate" if flow.provider and not flow.accepted else "")
    lines = [f"  trifecta ({status})"] + [f"    {leg_text(leg)}" for leg in flow.legs]
    if flow.accepted is not None:
        lines.append(f"    accepted: {flow.accepted.reason}")
    return lines


def flow_markdown(flow: Flow) -> list[str]:
    lines = [f"**Lethal trifecta** ({STATUS[flow.status]}):", ""] + [f"- {_md(leg_text(leg))}" for leg in flow.legs]
    if flow.accepted is not None:
        lines.append(f"- accepted because: {_md(flow.accepted.reason)}")
    return lines


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("*", "\\*").replace("_", "\\_").replace("<", "&lt;")

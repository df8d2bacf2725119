"""A worker's lethal trifecta in words, as `capabilities` prints it (text and Markdown)."""

from __future__ import annotations

from ..flows.text import leg_text
from ..flows.trifecta import Flow

STATUS = {"armed": "ARMED: egress with no approval on the way", "gated": "egress behind approval",
          "accepted": "accepted in project.json"}


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

"""A worker's lethal trifecta in words, as `capabilities` prints it (text and Markdown): each leg
by its least gated path, then every other capability that gives it (what an acceptance names)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..analysis.reach_text import leg_text
from ..analysis.trifecta import Flow, Leg

STATUS = {"armed": "ARMED: egress with no approval on the way", "gated": "egress behind approval",
          "accepted": "accepted in project.json"}


def every_leg(flow: Flow, legs: Mapping[str, Sequence[Leg]] | None) -> list[Leg]:
    """The flow's three legs, each followed by the other capabilities that give it."""
    out: list[Leg] = []
    for leg in flow.legs:
        out.append(leg)
        out += [other for other in (legs or {}).get(leg.label, ()) if other.capability != leg.capability]
    return out


def flow_lines(flow: Flow, legs: Mapping[str, Sequence[Leg]] | None = None) -> list[str]:
    status = STATUS[flow.status] + (", through a server-side tool no approval can gate" if flow.provider and not flow.accepted else "")
    lines = [f"  trifecta ({status})"] + [f"    {leg_text(leg)}" for leg in every_leg(flow, legs)]
    if flow.accepted is not None:
        lines.append(f"    accepted: {flow.accepted.reason}")
    return lines


def flow_markdown(flow: Flow, legs: Mapping[str, Sequence[Leg]] | None = None) -> list[str]:
    lines = [f"**Lethal trifecta** ({STATUS[flow.status]}):", ""] + [f"- {_md(leg_text(leg))}" for leg in every_leg(flow, legs)]
    if flow.accepted is not None:
        lines.append(f"- accepted because: {_md(flow.accepted.reason)}")
    return lines


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("*", "\\*").replace("_", "\\_").replace("<", "&lt;")

"""One leg of a flow in words, as `capabilities`, `diff` and the lint say it."""

from __future__ import annotations

from llm_do.bundle.flow import INPUT

from ..reach_text import gate_text, via_text
from .trifecta import Leg


def leg_text(leg: Leg) -> str:
    """`private fs.read:project/** via reader -> read_file [no approval]`; `untrusted: the run's input`."""
    if leg.capability == INPUT:
        return f"{leg.label}: the run's input"
    return f"{leg.label}: {leg.capability} via {via_text(leg.reach)} [{gate_text(leg.reach)}]"

"""Stage 5, check: run every rule of `rules` over the resolved project."""

from __future__ import annotations

from ..call_graph import call_graph
from ..diagnostics import Diagnostic
from ..rules import ALL_RULES
from .resolve import ResolvedProject


def check(project: ResolvedProject) -> list[Diagnostic]:
    graph = call_graph(project)
    out: list[Diagnostic] = []
    for rule in ALL_RULES:
        out.extend(rule(project, graph))
    return out

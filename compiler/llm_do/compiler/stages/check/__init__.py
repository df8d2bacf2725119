"""Stage 5, check: run every rule over the resolved project.

Each rule is a module here with one pure function `(project, graph) -> diagnostics`
(`Rule` below); `ALL_RULES` is the order they run in. The codes each raises are the `codes`
constants it names (`codes.UNDECLARED_RECURSION`).
"""

from __future__ import annotations

from typing import Protocol

from ...analysis.call_graph import CallGraph, call_graph
from ...diagnostics import Diagnostic
from ..resolved import ResolvedProject
from .capabilities import check_capabilities
from .entry_args import check_entry_args
from .flow_paths import check_flow_paths
from .graph_cycles import check_cycles
from .graph_depth import check_depth
from .graph_reachability import check_reachability
from .models import check_models
from .portability import check_portability
from .python_calls import check_python_calls
from .python_flows import check_undeclared_calls
from .python_imports import check_python_imports
from .quarantine import check_quarantine


class CheckRule(Protocol):
    def __call__(self, project: ResolvedProject, graph: CallGraph, /) -> list[Diagnostic]: ...


ALL_RULES: tuple[CheckRule, ...] = (
    check_python_imports,
    check_python_calls,
    check_entry_args,
    check_models,
    check_cycles,
    check_depth,
    check_reachability,
    check_capabilities,
    check_undeclared_calls,
    check_flow_paths,
    check_portability,
    check_quarantine,
)


def check(project: ResolvedProject) -> list[Diagnostic]:
    graph = call_graph(project)
    out: list[Diagnostic] = []
    for rule in ALL_RULES:
        out.extend(rule(project, graph))
    return out

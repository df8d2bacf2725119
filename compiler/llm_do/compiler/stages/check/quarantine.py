"""R015: a quarantined worker that no worker's model calls (spec/language.md, "Quarantined
callees"). Quarantine is about calls from a model: a run's answer goes to the user whole and
Python code gets the output itself, so on a worker only those reach the key changes nothing."""

from __future__ import annotations

from ... import codes
from ...analysis.call_graph import CallGraph
from ...diagnostics import Diagnostic, diagnostic
from ..resolved import ResolvedProject


def check_quarantine(project: ResolvedProject, graph: CallGraph) -> list[Diagnostic]:
    quarantined = sorted(name for name, w in project.workers.items() if w.parsed.front.quarantined)
    if not quarantined or any(w.calls_unknown for w in project.workers.values()):
        return []  # calls an error already reported dropped may be the ones that make it count
    called = {use.name for w in project.workers.values() for use in w.toolsets if use.kind == "worker"}
    called |= {name for w in project.workers.values() for name in w.maybe_calls}
    return [diagnostic(codes.QUARANTINED_UNCALLED,
                       f"'{name}' is quarantined, but no worker's model calls it: a run's answer and what Python code "
                       "gets from it are its output itself, so the key changes nothing",
                       project.workers[name].parsed.at("quarantined"),
                       hint=f"list '{name}' in the toolsets of the worker that should call it, or remove `quarantined`")
            for name in quarantined if name not in called]

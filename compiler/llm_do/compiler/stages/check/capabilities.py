"""R001 / R002 (and, through `flows`, R003-R006): what the entry can do with nobody asked, and privilege gained through delegation.

The rules run the same analysis as `llm-do capabilities` (`compiler.analysis.capabilities`), over views built from
the resolved project instead of a bundle, so lint and the bundle's readers never disagree.
"""

from __future__ import annotations

from llm_do.bundle.approval import PYTHON_TOOL_DEFAULT

from ... import codes
from ...analysis.call_graph import CallGraph
from ...analysis.capabilities import (
    ALLOW,
    OPEN,
    Analysis,
    Gate,
    Grant,
    Reach,
    WorkerView,
    add_attach_grants,
    entry_function_view,
    kind_of,
    plain_gate,
)
from ...analysis.capability_grants import worker_grants
from ...analysis.flows.declassifying import declassifies
from ...analysis.reach_text import via_text
from ...diagnostics import Diagnostic, Location, diagnostic
from ..resolved import ResolvedProject
from .flows import check_flows, inert_acceptances, project_flows

WRITE = "fs.write"
UNSURE_KEYS = frozenset({"toolsets", "tools", "approvals", "model", "compatible_models"})
"""Front matter keys that, dropped by an error, leave a worker's capabilities unknown."""


def project_views(project: ResolvedProject) -> dict[str, WorkerView]:
    views: dict[str, WorkerView] = {}
    shared: dict[tuple[str, str, str, int, tuple[str, ...], tuple[str, ...] | None], Grant] = {}
    """Grants are values: thousands of workers share a few (capability, tool, gate) triples. The
    key names the gate by id (hashing a Gate hashes its fields); a stored Grant keeps its gate alive."""

    def grant_of(capability: str, via: str, via_kind: str, gate: Gate, labels: list[str] | None,
                 conditional: list[str] | None = None) -> Grant:
        key = (capability, via, via_kind, id(gate), tuple(labels or ()), None if conditional is None else tuple(conditional))
        found = shared.get(key)
        if found is None:
            found = shared[key] = Grant(capability, via, via_kind, gate, frozenset(labels or ()),
                                        None if conditional is None else frozenset(conditional))
        return found

    for name, worker in project.workers.items():
        gates = {t.name: Gate(t.approval, t.default_approval, tuple(r.text for r in t.rules)) if t.rules
                 else plain_gate(t.approval, t.default_approval) for t in worker.tools.values()}
        view = WorkerView(calls={callee: gates.get(callee, OPEN) for callee in worker.calls}, declassifies=declassifies(worker))
        views[name] = view
        if worker.parsed.incomplete & UNSURE_KEYS:
            continue  # an error dropped part of what it can do or of its approvals: that error says it
        opaque = {u.name: plain_gate(u.opaque_approval, PYTHON_TOOL_DEFAULT) for u in worker.toolsets if u.opaque_approval}
        unknown = worker.unknown_names
        out = view.grants
        for grant in worker_grants(project, worker):
            tool_name = grant.get("tool")
            if tool_name is not None:
                if unknown and (tool_name in unknown or (tool_name in worker.tools and worker.tools[tool_name].group in unknown)):
                    continue  # a tool of a toolset whose settings are invalid: that error says it all
                out.append(grant_of(grant["capability"], tool_name, "tool", gates[tool_name], grant.get("labels"),
                                    grant.get("conditional_labels")))
            elif "toolset" in grant:
                out.append(grant_of(grant["capability"], grant["toolset"], "toolset", opaque[grant["toolset"]], grant.get("labels")))
            else:
                out.append(grant_of(grant["capability"], grant["model"], "model", OPEN, None))
        add_attach_grants(view, gates)
    function = project.entry_function
    if function is not None:
        views[function.label] = entry_function_view(function.calls)
    return views


def project_inert_acceptances(project: ResolvedProject) -> frozenset[int]:
    """The `flows.accept` entries that accept nothing (`flows.inert_acceptances`), analysed now
    when the check did not (its flow rules silenced)."""
    if project.inert_acceptances is not None or not project.manifest.flows.accept:
        return project.inert_acceptances or frozenset()
    return inert_acceptances(project, project_flows(project, project_views(project)))


def check_capabilities(project: ResolvedProject, graph: CallGraph) -> list[Diagnostic]:
    if project.entry not in project.workers and project.entry_function is None:
        return []
    silenced = {c.upper() for c in project.manifest.suppress}
    views = project_views(project)
    flows = check_flows(project, views, silenced)  # R003-R006
    if {codes.UNAPPROVED_SIDE_EFFECT.code, codes.WRITE_THROUGH_DELEGATION.code} <= silenced:
        return flows  # nothing more to report: skip the analysis (the build of a big project pays for it)
    analysis = Analysis(views)
    out = [] if codes.UNAPPROVED_SIDE_EFFECT.code in silenced else _unapproved_side_effects(project, analysis)
    through = [] if codes.WRITE_THROUGH_DELEGATION.code in silenced else _write_through_delegation(project, views, analysis)
    return flows + out + through


def _owner_location(project: ResolvedProject, reach: Reach) -> Location:
    owner = project.workers[reach.path[-1]]
    final = reach.steps[-1]
    tool = owner.tools.get(final.via) if final.via_kind == "tool" else None
    if tool is not None:
        return tool.at
    use = next((u for u in owner.toolsets if u.name == final.via), None)
    return use.at if use is not None else owner.parsed.name_location


def _unapproved_side_effects(project: ResolvedProject, analysis: Analysis) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for reach in analysis.reaches(project.entry):
        if reach.gate != ALLOW or not analysis.side_effect(reach.capability):
            continue
        owner, final = reach.path[-1], reach.steps[-1]
        first = reach.path[1] if len(reach.path) > 1 else None
        hint = f"add `ask {final.via}` to the approvals of '{owner}'"
        if first is not None and project.entry_function is None:
            hint += f", or `ask {first}` to those of '{project.entry}'"
        out.append(diagnostic(
            codes.UNAPPROVED_SIDE_EFFECT,
            f"the entry '{project.entry}' can use {reach.capability} with no approval on the way: "
            f"{' -> '.join(reach.path)} -> {final.via}",
            _owner_location(project, reach), hint=hint,
        ))
    return out


def _write_through_delegation(project: ResolvedProject, views: dict[str, WorkerView], analysis: Analysis) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    write_kinds = [(c, analysis.holders(c)) for c in analysis.propagating() if kind_of(c) == WRITE]
    if not write_kinds:
        return out
    for name in sorted(project.workers):
        writes = [c for c, holders in write_kinds if name in holders]
        if not writes:
            continue
        if any(kind_of(g.capability) == WRITE and g.gate.level is not None for g in views[name].grants):
            continue  # it can write by itself
        first = analysis.reach(name, writes[0])
        assert first is not None
        more = f" (and {len(writes) - 1} more)" if len(writes) > 1 else ""
        worker = project.workers[name]
        out.append(diagnostic(
            codes.WRITE_THROUGH_DELEGATION,
            f"'{name}' has no write tool of its own but can write through '{first.path[1]}': "
            f"{first.capability} via {via_text(first)}{more}",
            worker.calls.get(first.path[1]) or worker.parsed.name_location,
            hint=f"if '{name}' should not write, remove '{first.path[1]}' from its toolsets or gate the call with "
                 f"`ask {first.path[1]}`",
        ))
    return out

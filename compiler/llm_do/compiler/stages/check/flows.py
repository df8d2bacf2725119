"""R003 / R004 / R005 / R006: the lethal trifecta over call paths, and flow acceptances that match
nothing.

The rule runs `trifecta` over the same views as R001/R002 (`capabilities.project_views`),
with the server-side tools added as grants: lint, `capabilities` and `diff` see the same flows.
Which acceptances accept nothing is also what the bundle records (`flow.INERT`, written by
`lower`), so the run honours exactly the entries R006 leaves alone.
"""

from __future__ import annotations

import json

from llm_do.bundle.flow import ANY, INPUT, LABELS

from ... import codes
from ...analysis.capabilities import PROVIDER, Grant, WorkerView, kind_of, provider_grant
from ...analysis.reach_text import gate_text, via_text
from ...analysis.trifecta import Flow, FlowAnalysis, Leg, acceptances_of, leg_views
from ...diagnostics import Diagnostic, Location, Related, diagnostic
from ..resolved import ResolvedProject
from .flow_precision import PRECISION_CODES, check_flow_precision

UNNAMED_SHOWN = 3
"""Combinations an R006 names when every leg is named by some entry but no one entry names them."""


def project_flows(project: ResolvedProject, views: dict[str, WorkerView]) -> FlowAnalysis:
    """The flow analysis of a resolved project (`views`: `project_views`)."""
    extra: dict[str, list[Grant]] = {
        name: [provider_grant(t.tool_type) for t in w.parsed.front.server_side_tools]
        for name, w in project.workers.items() if w.parsed.front.server_side_tools}
    flows = project.manifest.flows
    accept = acceptances_of(a.model_dump() for a in flows.accept)
    return FlowAnalysis(leg_views(views, project.entry, flows.inputs, extra), accept)


def inert_acceptances(project: ResolvedProject, analysis: FlowAnalysis) -> frozenset[int]:
    """The indices of `flows.accept` entries that accept nothing (R006), found once per project
    (`analysis`: its `project_flows`): `lower` marks them in the bundle (`flow.INERT`) and the run
    does not honour them."""
    if project.inert_acceptances is None:
        entries = acceptances_of(a.model_dump() for a in project.manifest.flows.accept)
        project.inert_acceptances = frozenset(i for i, entry in enumerate(entries) if not analysis.accepts(entry))
    return project.inert_acceptances


def check_flows(project: ResolvedProject, views: dict[str, WorkerView], silenced: set[str]) -> list[Diagnostic]:
    if silenced >= {codes.ARMED_TRIFECTA.code, codes.GATED_TRIFECTA.code, codes.UNUSED_FLOW_ACCEPTANCE.code} | PRECISION_CODES and \
            not any(w.parsed.front.server_side_tools for w in project.workers.values()):
        return []
    analysis = project_flows(project, views)
    out: list[Diagnostic] = []
    gated: dict[tuple[str, str], list[str]] = {}
    """The workers of gated flows by the egress tool they pass: one note per tool, naming them."""
    provider = any(w.parsed.front.server_side_tools for w in project.workers.values())
    for worker in sorted(analysis.views, key=lambda w: (w != project.entry, w)):
        armed = analysis.armed(worker)
        if armed is None or not analysis.forms_here(worker):
            continue
        if armed or provider:
            flow = analysis.flow(worker)
            assert flow is not None
            if flow.accepted is not None:
                continue
            if flow.provider is not None:
                out.append(_diagnostic(codes.PROVIDER_TRIFECTA, project, flow, flow.provider))
                continue
            if flow.armed:  # one at each tool that gives an armed egress (newcomer G5)
                out += [_diagnostic(codes.ARMED_TRIFECTA, project, flow, egress) for egress in analysis.armed_egress(worker)]
                continue
        if codes.GATED_TRIFECTA.code not in silenced:
            gated.setdefault(analysis.egress_granter(worker), []).append(worker)
    for workers in gated.values():
        first = analysis.flow(workers[0])
        assert first is not None
        out.append(_diagnostic(codes.GATED_TRIFECTA, project, first, first.egress, len(workers) - 1))
    return out + _unmatched_acceptances(project, analysis) + check_flow_precision(project, analysis, silenced)


def _diagnostic(code: codes.Rule, project: ResolvedProject, flow: Flow, egress: Leg, more: int = 0) -> Diagnostic:
    private, untrusted, _ = flow.legs
    owner = egress.reach.path[-1]
    final = egress.reach.steps[-1]
    if code is codes.GATED_TRIFECTA:
        others = f" (and {more} more worker{'s' if more != 1 else ''} through the same egress)" if more else ""
        message = (f"'{flow.worker}'{others} holds the lethal trifecta, with its egress behind approval "
                   f"({gate_text(egress.reach)}): {_leg_text(private)}; {_leg_text(untrusted)}; {_leg_text(egress)}")
        hint = None
    else:
        how = ("a server-side tool the provider runs, which no approval can gate" if code is codes.PROVIDER_TRIFECTA
               else "no approval on the way")
        message = (f"'{flow.worker}' can be steered by untrusted content into sending private data out, with {how}: "
                   f"{_leg_text(private)}; {_leg_text(untrusted)}; {_leg_text(egress)}")
        hint = (f"drop `{final.via}` from '{owner}' or the private or untrusted leg"
                if code is codes.PROVIDER_TRIFECTA else f"add `ask {final.via}` to the approvals of '{owner}'")
        hint += f", or accept the flow in project.json (`flows.accept`: worker '{flow.worker}', the legs and a reason)"
    related = [Related.at(_leg_location(project, flow, leg), f"{leg.label} leg: {_leg_text(leg)}")
               for leg in (private, untrusted)]
    return diagnostic(code, message, _leg_location(project, flow, egress), hint=hint, related=related)


def _leg_text(leg: Leg) -> str:
    if leg.capability == INPUT:
        return f"{leg.label}: the run's input"
    return f"{leg.label}: {leg.capability} via {' -> '.join(leg.reach.path)} -> {via_text(leg.reach).rsplit(' -> ', 1)[-1]}"


def _leg_location(project: ResolvedProject, flow: Flow, leg: Leg) -> Location:
    owner_name = leg.reach.path[-1]
    owner = project.workers.get(owner_name)
    if owner is None:  # the entry function
        return project.loaded.at("entry", "function") if project.entry_function is not None else project.loaded.at()
    final = leg.reach.steps[-1]
    if kind_of(leg.capability) == PROVIDER:  # the `server_side_tools` item that names it
        items = owner.parsed.front.server_side_tools
        index = next((i for i, t in enumerate(items) if t.tool_type == final.via), None)
        if index is not None:
            return owner.parsed.at("server_side_tools", index)
    tool = owner.tools.get(final.via) if final.via_kind == "tool" else None
    if tool is not None:
        return tool.at
    use = next((u for u in owner.toolsets if u.name == final.via), None)
    return use.at if use is not None else owner.parsed.name_location


def _unmatched_acceptances(project: ResolvedProject, analysis: FlowAnalysis) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    inert = inert_acceptances(project, analysis)
    for i, entry in enumerate(project.manifest.flows.accept):
        if i not in inert:
            continue
        flow = analysis.flow(entry.worker) if entry.worker in analysis.views else None
        hint = "remove the entry, or name the legs `llm-do capabilities` shows"
        if flow is None:
            problem = "no such worker" if entry.worker not in analysis.views else "it holds no trifecta"
        else:
            problem = f"its legs are not all named: {_unnamed_text(analysis, entry.worker)}"
            hint = (f"remove the entry, or name every leg, as in {json.dumps(analysis.acceptance_for(entry.worker))} "
                    "(with your reason)")
        out.append(diagnostic(codes.UNUSED_FLOW_ACCEPTANCE, f"the flow acceptance for '{entry.worker}' matches nothing: {problem}",
                              project.loaded.at("flows", "accept", i, key=False), hint=hint))
    return out


def _unnamed_text(analysis: FlowAnalysis, worker: str) -> str:
    """What the worker's acceptances leave unnamed (newcomer G4): the capabilities of each leg no
    entry names, else the combinations no one entry names."""
    entries = analysis.acceptances(worker)
    legs = analysis.armed_legs(worker)
    missing = [f"{label} {c}" for label in LABELS for c in legs[label] if not any(ANY in a[label] or c in a[label] for a in entries)]
    if missing:
        return f"no entry names {', '.join(missing)}"
    unnamed = analysis.unnamed(worker)
    shown = "; ".join(f"private {p}, untrusted {u}, egress {e}" for p, u, e in unnamed[:UNNAMED_SHOWN])
    more = f" (and {len(unnamed) - UNNAMED_SHOWN} more)" if len(unnamed) > UNNAMED_SHOWN else ""
    return f"no one entry names the combination {shown}{more}"

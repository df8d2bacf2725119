"""R011 / R012 / R013 / R014: what makes the flow guard precise, said where it is written: the
callees that declassify (an output schema without free text) and the ones that do not, the
approval rules that confine an egress to known destinations, and `to:` declarations that name no
parameter (spec/language.md, "Declassifying callees" and "Known destinations")."""

from __future__ import annotations

from llm_do.bundle.flow import UNTRUSTED

from ... import codes
from ...analysis.capability_grants import tool_destinations
from ...analysis.flows.declassifying import free_text_reason
from ...analysis.trifecta import LEG, FlowAnalysis
from ...diagnostics import Diagnostic, diagnostic
from ..resolved import ResolvedProject, ResolvedWorker

PRECISION_CODES = frozenset(r.code for r in (codes.DECLASSIFYING_CALLEE, codes.CONFINED_EGRESS, codes.UNKNOWN_DESTINATION,
                                              codes.FREE_TEXT_CALLEE))


def check_flow_precision(project: ResolvedProject, analysis: FlowAnalysis, silenced: set[str]) -> list[Diagnostic]:
    callers: dict[str, list[str]] = {}
    for name, worker in project.workers.items():
        for callee in worker.calls:
            callers.setdefault(callee, []).append(name)
    out: list[Diagnostic] = []
    callee_notes = {codes.DECLASSIFYING_CALLEE.code, codes.FREE_TEXT_CALLEE.code}
    for name, worker in sorted(project.workers.items()):
        if worker.output_ref is not None and callers.get(name) and not callee_notes <= silenced:
            out += _callee_note(analysis, name, worker, sorted(callers[name]))
        out += _destination_notes(project, worker, silenced)
    return [d for d in out if d.code not in silenced]


def _callee_note(analysis: FlowAnalysis, name: str, worker: ResolvedWorker, callers: list[str]) -> list[Diagnostic]:
    reach = analysis.analysis.reach(name, LEG + UNTRUSTED)
    if reach is None:
        return []  # it reads nothing a third party wrote: nothing to declassify
    leg = f"{reach.capability.removeprefix(LEG)} via {' -> '.join(reach.path)} -> {reach.steps[-1].via}"
    ref = worker.output_ref.text if worker.output_ref is not None else ""
    at = worker.parsed.at("schema_out_ref")
    who = ", ".join(f"'{c}'" for c in callers)
    reason = free_text_reason(worker)
    if reason is None:
        return [diagnostic(codes.DECLASSIFYING_CALLEE,
                           f"'{name}' declassifies: its output ({ref}) can carry no free text, so {who} "
                           f"take{'s' if len(callers) == 1 else ''} in no untrusted content from it ({leg})", at)]
    return [diagnostic(codes.FREE_TEXT_CALLEE,
                       f"'{name}' hands untrusted content to {who}: {reason} in its output ({ref}), and it reads {leg}", at,
                       hint="give every field a number, boolean, enum, date or e-mail type, or a pattern without spaces")]


def _destination_notes(project: ResolvedProject, worker: ResolvedWorker, silenced: set[str]) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for tool in worker.tools.values():
        params = tool_destinations(project, worker, tool)
        if not params:
            continue
        known = _parameters(project, worker, tool.name)
        missing = [p for p in params if known is not None and p not in known]
        if missing and codes.UNKNOWN_DESTINATION.code not in silenced:
            out.append(diagnostic(codes.UNKNOWN_DESTINATION,
                                  f"'{tool.name}' declares it sends to {', '.join(missing)}, which "
                                  f"{'is no parameter' if len(missing) == 1 else 'are no parameters'} of it",
                                  tool.at, hint=f"its parameters: {', '.join(sorted(known or ())) or 'none'}"))
        if codes.CONFINED_EGRESS.code in silenced or not tool.rules:
            continue
        from ...analysis.flows.rule_confinement import (
            confining_rules,  # here: few tools both say where they send and have rules
        )

        for index in confining_rules(tool.rules, params):
            rule = tool.rules[index]
            out.append(diagnostic(codes.CONFINED_EGRESS,
                                  f"`{rule.text}` confines where '{tool.name}' sends ({', '.join(params)}): "
                                  "the calls it allows are no egress for the flow guard",
                                  worker.parsed.at("approvals", rule.index)))
    return out


def _parameters(project: ResolvedProject, worker: ResolvedWorker, tool: str) -> set[str] | None:
    python_tool = project.python_tool(worker.parsed.name, tool)
    params = python_tool.fact.parameters if python_tool is not None else None
    if not isinstance(params, dict):
        return None
    return set((params.get("properties") or {}).keys())

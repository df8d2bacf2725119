"""The lethal trifecta over call paths: which workers can read private data, take in content a
third party wrote and send data out, each leg by its least gated path, and whether the egress is
armed (reachable with nobody asked).

Each label is one more capability for `capabilities.Analysis` (`flow:private`, `flow:untrusted`,
`flow:egress`, and `flow:provider` for the egress of server-side tools, which no gate can ask):
four searches over the same calls, so the cost stays linear in workers and edges. The run's
input is a leg of the entry as `flows.inputs` labels it (untrusted unless project.json says it
is trusted or private). A declassifying worker seals its untrusted leg: its callers do not get it.

Every capability of a leg (`FlowAnalysis.legs`: what an acceptance must name, what `capabilities`
lists) is one more search per labelled capability (`flow:LABEL:CAPABILITY`), made only when an
acceptance is matched or the legs are listed. The armed egress tools of a reported flow
(`armed_egress`) come from one forward search from that worker.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from llm_do.bundle.approval import ASK
from llm_do.bundle.flow import EGRESS, INPUT, LABELS, PRIVATE, UNTRUSTED, covers, input_label
from llm_do.bundle.views import entry_name

from .capabilities import GATES, OPEN, PROVIDER, Analysis, Gate, Grant, Reach, Step, WorkerView, kind_of, plain_gate

LEG = "flow:"
ASK_RANK = GATES.index(ASK)
PROVIDER_LEG = "flow:provider"


@dataclass(frozen=True)
class Leg:
    label: str
    reach: Reach
    capability: str
    """The capability that gives the leg at the end of the path (`input`: the run's input)."""

    def to_json(self) -> dict[str, Any]:
        return {**self.reach.to_json(), "capability": self.capability}


@dataclass(frozen=True)
class Acceptance:
    """One `flows.accept` entry of project.json."""

    worker: str
    private: tuple[str, ...]
    untrusted: tuple[str, ...]
    egress: tuple[str, ...]
    reason: str

    def covers(self, private: str, untrusted: str, egress: str) -> bool:
        """`flow.covers`: the one matcher the build and the run's taint guard share."""
        return covers(self, private, untrusted, egress)

    def __getitem__(self, leg: str) -> tuple[str, ...]:
        return {PRIVATE: self.private, UNTRUSTED: self.untrusted, EGRESS: self.egress}[leg]

    def to_json(self) -> dict[str, Any]:
        return {"worker": self.worker, "private": list(self.private), "untrusted": list(self.untrusted),
                "egress": list(self.egress), "reason": self.reason}


def acceptances_of(entries: Iterable[Mapping[str, Any]]) -> list[Acceptance]:
    return [Acceptance(a["worker"], tuple(a["private"]), tuple(a["untrusted"]), tuple(a["egress"]), a["reason"])
            for a in entries]


@dataclass(frozen=True)
class Flow:
    """A worker holding all three legs."""

    worker: str
    legs: tuple[Leg, Leg, Leg]
    """private, untrusted, egress: each by its least gated path."""
    armed: bool
    """The egress is reachable with no `ask` on the way."""
    provider: Leg | None
    """An armed egress through a server-side tool, which no gate can ask before."""
    accepted: Acceptance | None = None
    forms_here: bool = True
    """False when every leg comes through the same callee, whose own flow is the one to report."""

    @property
    def egress(self) -> Leg:
        return self.legs[2]

    @property
    def status(self) -> str:
        if self.accepted is not None:
            return "accepted"
        return "armed" if self.armed else "gated"

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"worker": self.worker, "status": self.status,
                               "legs": {leg.label: leg.to_json() for leg in self.legs}}
        if self.provider is not None:
            doc["provider"] = self.provider.to_json()
        if self.accepted is not None:
            doc["accepted"] = self.accepted.to_json()
        return doc


def leg_views(views: Mapping[str, WorkerView], entry: str | None, inputs: str | None,
              extra: Mapping[str, list[Grant]] | None = None) -> dict[str, WorkerView]:
    """The views with one grant per label of each grant (`flow:LABEL`, the capability kept as
    `source`); the entry's input as an untrusted leg; `extra`: grants the views leave out
    (server-side tools, for the lint's views)."""
    out: dict[str, WorkerView] = {}
    shared: dict[tuple[int, str], Grant] = {}
    for name, view in views.items():
        legs: list[Grant] = []
        for grant in [*view.grants, *(extra or {}).get(name, ())]:
            for label in grant.labels:
                key = (id(grant), label)
                found = shared.get(key)
                if found is None:
                    found = shared[key] = Grant(LEG + label, grant.via, grant.via_kind, _leg_gate(grant, label),
                                                source=grant.capability)
                legs.append(found)
                if label == EGRESS and kind_of(grant.capability) == PROVIDER:
                    legs.append(Grant(PROVIDER_LEG, grant.via, grant.via_kind, grant.gate, source=grant.capability))
        if name == entry and (label := input_label(inputs)) is not None:
            legs.append(Grant(LEG + label, INPUT, "input", OPEN, source=INPUT))
        out[name] = WorkerView(calls=view.calls, grants=legs, seals=frozenset({LEG + UNTRUSTED}) if view.declassifies else frozenset())
    return out


def _leg_gate(grant: Grant, label: str) -> Gate:
    """The gate of one label of a grant: a label the calls its conditional rules allow cannot have
    comes only with the calls its approval without a condition decides (`ask`, or `deny`: no leg)."""
    if grant.conditional_labels is None or label in grant.conditional_labels:
        return grant.gate
    return plain_gate(grant.gate.approval, grant.gate.default)


class FlowAnalysis:
    """Every worker's trifecta, if it has one."""

    def __init__(self, views: dict[str, WorkerView], acceptances: Iterable[Acceptance] = ()) -> None:
        """`views`: from `leg_views`."""
        self.views = views
        self.analysis = Analysis(views)
        self._accept: dict[str, list[Acceptance]] = {}
        for a in acceptances:
            self._accept.setdefault(a.worker, []).append(a)
        self._flows: dict[str, Flow | None] = {}
        self._holders = {label: self.analysis.holders(LEG + label) for label in LABELS}
        self._detail: Analysis | None = None
        self._legs: dict[str, dict[str, list[Leg]]] = {}

    def flow(self, worker: str) -> Flow | None:
        """The worker's trifecta, or None."""
        if worker not in self._flows:
            self._flows[worker] = self._flow(worker)
        return self._flows[worker]

    def _flow(self, worker: str) -> Flow | None:
        if not self._holds(worker):
            return None
        reaches = [self.analysis.reach(worker, LEG + label) for label in LABELS]
        legs = tuple(Leg(label, r, self._source(r)) for label, r in zip(LABELS, reaches) if r is not None)
        private, untrusted, egress = legs
        armed = egress.reach.gate != ASK
        provider_reach = self.analysis.reach(worker, PROVIDER_LEG)
        provider = Leg(EGRESS, provider_reach, self._source(provider_reach)) \
            if provider_reach is not None and provider_reach.gate != ASK else None
        flow = Flow(worker, (private, untrusted, egress), armed, provider, forms_here=self.forms_here(worker))
        if worker in self._accept and not self.unnamed(worker):
            return Flow(worker, flow.legs, armed, provider, self._accept[worker][0], flow.forms_here)
        return flow

    def forms_here(self, worker: str) -> bool:
        """False when every leg's least gated path starts with the same call, to a worker that
        holds the trifecta itself: its flow is the one to report."""
        hops = {least[1] for label in LABELS if (least := self.analysis.least(worker, LEG + label)) is not None}
        return len(hops) != 1 or None in hops or not self._holds(str(next(iter(hops))))

    def armed(self, worker: str) -> bool | None:
        """Whether the worker's trifecta is armed (None: it holds none), without building paths."""
        if not self._holds(worker):
            return None
        least = self.analysis.least(worker, LEG + EGRESS)
        return least is not None and least[0] < ASK_RANK

    def egress_granter(self, worker: str) -> tuple[str, str]:
        """The worker and the tool (or toolset) that give the egress leg's least gated path."""
        found = self.analysis.granter(worker, LEG + EGRESS)
        assert found is not None
        return found[0], found[1].via

    def _holds(self, worker: str) -> bool:
        return all(worker in self._holders[label] for label in LABELS)

    def flows(self) -> list[Flow]:
        return [f for w in sorted(self.views) if (f := self.flow(w)) is not None]

    def _source(self, reach: Reach) -> str:
        owner = self.views[reach.path[-1]]
        final = reach.steps[-1]
        return next(g.source for g in owner.grants
                    if g.capability == reach.capability and g.via == final.via and g.via_kind == final.via_kind)

    # --- every capability of a leg

    def legs(self, worker: str) -> dict[str, list[Leg]]:
        """Every capability that gives the worker each leg (the run's input as `input`), each by
        its least gated path, least gated first: what an acceptance must name."""
        found = self._legs.get(worker)
        if found is None:
            detail = self._detailed()
            found = {label: [] for label in LABELS}
            for capability in detail.capabilities(worker):
                label, _, source = capability[len(LEG):].partition(":")
                reach = detail.reach(worker, capability) if label in found else None
                if reach is not None:
                    found[label].append(Leg(label, reach, source))
            for legs in found.values():
                legs.sort(key=lambda leg: (GATES.index(leg.reach.gate), len(leg.reach.path), leg.capability))
            self._legs[worker] = found
        return found

    def _detailed(self) -> Analysis:
        """One search per labelled capability (`flow:LABEL:CAPABILITY`), each leg grant's gate kept."""
        if self._detail is None:
            detailed = {name: [Grant(f"{g.capability}:{g.source}", g.via, g.via_kind, g.gate, source=g.source)
                               for g in view.grants if g.capability != PROVIDER_LEG] for name, view in self.views.items()}
            by_leg: dict[str, set[str]] = {}  # a sealed leg (a declassifying worker's) seals each of its capabilities
            for name, view in self.views.items():
                for grant, detail in zip((g for g in view.grants if g.capability != PROVIDER_LEG), detailed[name]):
                    by_leg.setdefault(grant.capability, set()).add(detail.capability)
            self._detail = Analysis({name: WorkerView(view.calls, detailed[name], seals=frozenset(
                c for leg in view.seals for c in by_leg.get(leg, ()))) for name, view in self.views.items()})
        return self._detail

    def acceptances(self, worker: str) -> list[Acceptance]:
        """The worker's `flows.accept` entries."""
        return self._accept.get(worker, [])

    def armed_legs(self, worker: str) -> dict[str, list[str]]:
        """The capabilities of each leg an acceptance of the worker's flow must name: every private
        and untrusted one, and the egress ones reachable with nobody asked; when every egress is
        behind `ask`, those (the run's guard asks each one, and `--approve-all` answers no such
        question: an acceptance is how an unattended run lets them through)."""
        legs = self.legs(worker)
        armed = [leg.capability for leg in legs[EGRESS] if leg.reach.gate != ASK]
        return {**{label: [leg.capability for leg in legs[label]] for label in (PRIVATE, UNTRUSTED)},
                EGRESS: armed or [leg.capability for leg in legs[EGRESS]]}

    def unnamed(self, worker: str) -> list[tuple[str, str, str]]:
        """The combinations of an armed flow's legs that no acceptance of the worker names, in order."""
        entries = self.acceptances(worker)
        legs = self.armed_legs(worker)
        return [(p, u, e) for p in legs[PRIVATE] for u in legs[UNTRUSTED] for e in legs[EGRESS]
                if not any(a.covers(p, u, e) for a in entries)]

    def acceptance_for(self, worker: str) -> dict[str, Any]:
        """The `flows.accept` entry that would accept the worker's flow as it is now (its reason to write)."""
        legs = self.armed_legs(worker)
        return {"worker": worker, **{label: sorted(legs[label]) for label in LABELS}, "reason": "..."}

    def accepts(self, entry: Acceptance) -> bool:
        """Whether the entry takes part in accepting its worker's flow: R006 otherwise, and the run
        does not honour it (`flow.INERT`)."""
        flow = self.flow(entry.worker) if entry.worker in self.views else None
        return flow is not None and flow.accepted is not None

    # --- the armed egress tools of a flow

    def armed_egress(self, worker: str) -> list[Leg]:
        """Every tool (or opaque toolset) that gives the worker an egress with nobody asked on the
        way, each once, by its least gated path: one R003 each, so fixing one shows no new one."""
        paths = self._paths_from(worker)
        best: dict[tuple[str, str, str], Leg] = {}
        for owner, (path, steps, level) in paths.items():
            for grant in self.views[owner].grants:
                if grant.capability != LEG + EGRESS or grant.gate.level is None:
                    continue
                rank = max(level, grant.gate.rank)
                if rank >= ASK_RANK:
                    continue
                key = (owner, grant.via_kind, grant.via)
                reach = Reach(grant.capability, path, (*steps, Step(owner, grant.via, grant.via_kind, grant.gate)))
                known = best.get(key)
                if known is None or (GATES.index(known.reach.gate), known.capability) > (rank, grant.source):
                    best[key] = Leg(EGRESS, reach, grant.source)
        return sorted(best.values(), key=lambda leg: (GATES.index(leg.reach.gate), leg.reach.path, leg.reach.steps[-1].via))

    def _paths_from(self, worker: str) -> dict[str, tuple[tuple[str, ...], tuple[Step, ...], int]]:
        """Each worker the worker reaches through calls none of which is asked or denied: its least
        gated path (the workers, the call steps) and that path's level (an index in GATES)."""
        found: dict[str, tuple[tuple[str, ...], tuple[Step, ...], int]] = {worker: ((worker,), (), 0)}
        for level in range(ASK_RANK):
            frontier = sorted(found)
            while frontier:
                reached: list[str] = []
                for caller in frontier:
                    path, steps, _ = found[caller]
                    for callee, gate in sorted(self.views[caller].calls.items()):
                        if callee in found or callee not in self.views or gate.level is None or gate.rank > level:
                            continue
                        found[callee] = ((*path, callee), (*steps, Step(caller, callee, "tool", gate)),
                                         max(level, gate.rank))
                        reached.append(callee)
                frontier = sorted(reached)
        return found


def bundle_flows(bundle: Mapping[str, Any], views: dict[str, WorkerView]) -> FlowAnalysis:
    """The flow analysis of a bundle document (`views`: `views_of_bundle`, whose grants carry the
    labels the build wrote and the server-side tools); each leg's capabilities have their own
    searches (`FlowAnalysis.legs`)."""
    flows = bundle.get("flows") or {}
    return FlowAnalysis(leg_views(views, entry_name(bundle["entry"]), flows.get("inputs")),
                        acceptances_of(flows.get("accept") or ()))

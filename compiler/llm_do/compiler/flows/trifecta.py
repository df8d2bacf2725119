"""The lethal trifecta over call paths: which workers can read private data, take in content a
third party wrote and send data out, each leg by its least gated path, and whether the egress is
armed (reachable with nobody asked).

Each label is one more capability for `capabilities.Analysis` (`flow:private`, `flow:untrusted`,
`flow:egress`, and `flow:provider` for the egress of server-side tools, which no gate can ask):
four searches over the same calls, so the cost stays linear in workers and edges. The run's
input is an `untrusted` leg of the entry unless project.json says it is trusted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from llm_do.bundle.approval import ASK
from llm_do.bundle.flow import EGRESS, INPUT, LABELS, PRIVATE, UNTRUSTED, input_label
from llm_do.bundle.views import entry_name

from ..capabilities import GATES, OPEN, PROVIDER, Analysis, Gate, Grant, Reach, WorkerView, kind_of, plain_gate

LEG = "flow:"
ASK_RANK = GATES.index(ASK)
PROVIDER_LEG = "flow:provider"
ANY = "*"


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
        return all(ANY in names or name in names
                   for name, names in ((private, self.private), (untrusted, self.untrusted), (egress, self.egress)))

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

    def __init__(self, views: dict[str, WorkerView], acceptances: Iterable[Acceptance] = (),
                 capabilities: Analysis | None = None) -> None:
        """`views`: from `leg_views`. `capabilities`: the analysis of the plain views, needed only
        to match acceptances against every capability of each leg."""
        self.views = views
        self.analysis = Analysis(views)
        self._accept: dict[str, list[Acceptance]] = {}
        for a in acceptances:
            self._accept.setdefault(a.worker, []).append(a)
        self._capabilities = capabilities
        self._flows: dict[str, Flow | None] = {}
        self._holders = {label: self.analysis.holders(LEG + label) for label in LABELS}
        self._labelled: dict[str, set[str]] = {}

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
        if armed and worker in self._accept:
            accepted = self._accepted(worker, flow)
            if accepted is not None:
                return Flow(worker, flow.legs, armed, provider, accepted, flow.forms_here)
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

    def _accepted(self, worker: str, flow: Flow) -> Acceptance | None:
        """The acceptance that covers every armed combination of the worker's legs, if one does
        (several entries may cover parts: then the first one is named)."""
        sets = {label: self._sources(worker, label) for label in LABELS}
        armed_egress = [c for c, gate in sets[EGRESS] if gate != ASK]
        entries = self._accept[worker]
        for p, _ in sets[PRIVATE]:
            for u, _ in sets[UNTRUSTED]:
                for e in armed_egress:
                    if not any(a.covers(p, u, e) for a in entries):
                        return None
        return entries[0]

    def _sources(self, worker: str, label: str) -> list[tuple[str, str]]:
        """Every capability giving the worker the leg, with its least gate."""
        out: dict[str, str] = {}
        if self._capabilities is None:
            raise ValueError("acceptances need the capability analysis")
        labelled = self._labelled.get(label)
        if labelled is None:
            labelled = self._labelled[label] = {g.source for v in self.views.values() for g in v.grants if g.capability == LEG + label}
        for capability in self._capabilities.capabilities(worker):
            if capability in labelled:
                reach = self._capabilities.reach(worker, capability)
                if reach is not None:
                    out[capability] = reach.gate
        if any(g.source == INPUT and g.capability == LEG + label for g in self.views[worker].grants):
            out[INPUT] = OPEN.approval
        return sorted(out.items())


def bundle_flows(bundle: Mapping[str, Any], views: dict[str, WorkerView], capabilities: Analysis | None = None) -> FlowAnalysis:
    """The flow analysis of a bundle document (`views`: `views_of_bundle`, whose grants carry the
    labels the build wrote and the server-side tools)."""
    flows = bundle.get("flows") or {}
    accept = acceptances_of(flows.get("accept") or ())
    if accept and capabilities is None:
        capabilities = Analysis(views)
    return FlowAnalysis(leg_views(views, entry_name(dict(bundle)), flows.get("inputs")), accept, capabilities)

"""Taint at run time: what a call frame has taken in, and whether a call from it is an egress
that must be asked (spec/runtime.md, "Information flow").

A frame's taint is the set of `Source`s it took in: private data and untrusted content, each with
the capability and the tool that gave it (the run's input counts as untrusted unless project.json
says `flows.inputs: "trusted"`). It flows down to a callee with the arguments it is given (a
callee starts with its caller's taint) and up to the caller with what the callee returns. Once a
frame holds both, every call whose grant is labelled `egress` is asked, unless a flow the project
accepts (`flows.accept`, for the frame's worker or one of its callers) covers it.

Pure functions over the labels the build wrote on each grant, plus `FlowGuard`, the bundle's
policy the gate and the calls consult. Loaded only for a bundle with an `egress` label
(`LoadedBundle.guards_flows`): `exec` of any other bundle never imports it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from llm_do.bundle.flow import EGRESS, INPUT, PRIVATE, TRUSTED, UNTRUSTED

if TYPE_CHECKING:
    from llm_do.bundle.model import CapabilityGrant, FlowAcceptanceNode
    from llm_do.bundle.views import WorkerSpec

ANY = "*"
PROVIDER_UNTRUSTED = ("web_search", "web_fetch")
"""Server-side tools whose results the model reads inside its own response: a frame of a worker
that has one holds untrusted content from its start (no gate sees them return)."""


class CallFrame(Protocol):
    """What the guard reads and writes of a call's frame (`call_scope.CallFrame`)."""

    worker: str
    taint: frozenset[Any]

    @property
    def parent(self) -> CallFrame | None: ...


class Source(NamedTuple):
    """One thing a frame took in: its label (`private` or `untrusted`), the capability that gave
    it (`input` for the run's input), and the worker and tool that gave it."""

    label: str
    capability: str
    worker: str
    tool: str

    def describe(self) -> str:
        if self.capability == INPUT:
            return "the run's input"
        return f"{self.tool} of {self.worker}"

    def to_json(self) -> dict[str, str]:
        if self.capability == INPUT:
            return {"capability": INPUT}
        return {"capability": self.capability, "worker": self.worker, "tool": self.tool}


Taint = frozenset[Source]
EMPTY: Taint = frozenset()
INPUT_SOURCE = Source(UNTRUSTED, INPUT, "", INPUT)


def armed(taint: Taint) -> bool:
    """Whether a frame holding `taint` holds both legs a flow needs before its egress."""
    labels = {s.label for s in taint}
    return PRIVATE in labels and UNTRUSTED in labels


def tool_grants(spec: WorkerSpec, tool: str, toolset: str | None) -> list[CapabilityGrant]:
    """The grants of the worker's tool `tool`; a tool of an opaque toolset (listed only at run
    time, so not among the worker's `tools`) has its toolset's grants (`toolset` is its key)."""
    if tool in spec.tools:
        return [g for g in spec.grants if g.get("tool") == tool]
    return [g for g in spec.grants if toolset is not None and g.get("toolset") == toolset]


def taken_in(grants: Iterable[CapabilityGrant], worker: str, tool: str) -> Taint:
    """What a tool's result adds to its frame: a source per `private` or `untrusted` label of its
    grants."""
    return frozenset(Source(label, g["capability"], worker, tool)
                     for g in grants for label in g.get("labels") or () if label in (PRIVATE, UNTRUSTED))


def egress_of(grants: Iterable[CapabilityGrant]) -> tuple[str, ...]:
    """The capabilities of a tool's grants that can send data out."""
    return tuple(sorted({g["capability"] for g in grants if EGRESS in (g.get("labels") or ())}))


def accepted(entries: Sequence[FlowAcceptanceNode], workers: Sequence[str], taint: Taint,
             egress: Sequence[str]) -> FlowAcceptanceNode | None:
    """The acceptance that lets the call through: one entry for one of `workers` (the frame's
    worker, then its callers) under which every combination of a private and an untrusted source
    the frame holds with each egress capability is named (`*`: any), as the build matches them."""
    private = sorted({s.capability for s in taint if s.label == PRIVATE})
    untrusted = sorted({s.capability for s in taint if s.label == UNTRUSTED})
    for worker in workers:
        mine = [a for a in entries if a["worker"] == worker]
        if mine and all(any(_covers(a, p, u, e) for a in mine) for p in private for u in untrusted for e in egress):
            return mine[0]
    return None


def _covers(entry: FlowAcceptanceNode, private: str, untrusted: str, egress: str) -> bool:
    return all(ANY in names or name in names
               for name, names in ((private, entry["private"]), (untrusted, entry["untrusted"]), (egress, entry["egress"])))


class FlowCheck(NamedTuple):
    """Why a call from a frame is asked (or let through as accepted)."""

    egress: tuple[str, ...]
    """The capabilities of the call that send data out."""
    private: tuple[Source, ...]
    untrusted: tuple[Source, ...]
    accepted: str | None
    """The reason of the `flows.accept` entry that covers the flow; None: the call is asked."""

    def reason(self) -> str:
        """One line for the model, the approver and the event stream."""
        holds = (f"this frame holds private data (from {_listed(self.private)}) and untrusted content "
                 f"(from {_listed(self.untrusted)}), and the call can send data out ({', '.join(self.egress)})")
        if self.accepted is not None:
            return f"{holds}; project.json accepts this flow: {self.accepted}"
        return holds

    def to_json(self) -> dict[str, Any]:
        return {"egress": list(self.egress), "private": [s.to_json() for s in self.private],
                "untrusted": [s.to_json() for s in self.untrusted], "accepted": self.accepted, "reason": self.reason()}


def _listed(sources: Iterable[Source]) -> str:
    return ", ".join(dict.fromkeys(s.describe() for s in sources))


def check(taint: Taint, egress: Sequence[str], workers: Sequence[str],
          entries: Sequence[FlowAcceptanceNode]) -> FlowCheck | None:
    """The check of a call with egress capabilities `egress` from a frame holding `taint` (of
    `workers`: the frame's worker, then its callers); None when the call is no egress or the frame
    does not hold both legs."""
    if not egress or not armed(taint):
        return None
    entry = accepted(entries, workers, taint, egress) if entries else None
    ordered = sorted(taint)
    return FlowCheck(tuple(egress), tuple(s for s in ordered if s.label == PRIVATE),
                     tuple(s for s in ordered if s.label == UNTRUSTED), entry["reason"] if entry is not None else None)


def callers(frame: CallFrame) -> list[str]:
    """The frame's worker, then its callers' (the entry function's label last, if any)."""
    out: list[str] = []
    at: CallFrame | None = frame
    while at is not None:
        out.append(at.worker)
        at = at.parent
    return out


def as_json(taint: Taint) -> list[list[str]]:
    """A taint as a chat thread stores it."""
    return [list(s) for s in sorted(taint)]


def from_json(data: Any) -> Taint:
    """A taint a chat thread stored; anything malformed raises ValueError."""
    if not isinstance(data, list) or not all(isinstance(s, list) and len(s) == 4 and all(isinstance(x, str) for x in s)
                                             for s in data):
        raise ValueError("its taint is not a list of [label, capability, worker, tool]")
    return frozenset(Source(*s) for s in data)


class FlowGuard:
    """A bundle's flow policy, as the calls and the gate of every run of it consult it."""

    def __init__(self, flows: Mapping[str, Any] | None) -> None:
        flows = flows or {}
        self.inputs_trusted = flows.get("inputs") == TRUSTED
        self.acceptances: list[FlowAcceptanceNode] = list(flows.get("accept") or ())

    def start(self, spec: WorkerSpec | None, parent: CallFrame | None, carried: Taint = EMPTY) -> Taint:
        """A new frame's taint: its caller's (the arguments it is given come from there), or, for
        the outermost call, the run's input (untrusted unless trusted) and what a chat thread
        carried from its earlier turns; plus the untrusted content of the worker's server-side
        web tools."""
        if parent is not None:
            taint = parent.taint
        else:
            taint = carried if self.inputs_trusted else carried | {INPUT_SOURCE}
        if spec is not None:
            web = [t.get("tool_type") for t in spec.server_side_tools if t.get("tool_type") in PROVIDER_UNTRUSTED]
            if web:
                taint = taint | {Source(UNTRUSTED, f"provider:{kind}", spec.name, str(kind)) for kind in web}
        return taint

    def check(self, frame: CallFrame, spec: WorkerSpec, tool: str, toolset: str | None) -> FlowCheck | None:
        """Whether the call of `tool` from `frame` is an egress from a frame holding both legs."""
        if not armed(frame.taint):
            return None
        return check(frame.taint, egress_of(tool_grants(spec, tool, toolset)), callers(frame), self.acceptances)

    def returned(self, frame: CallFrame, spec: WorkerSpec, tool: str, toolset: str | None) -> None:
        """A tool of `frame` returned (or failed: its message can carry data too): its labels join
        the frame's taint."""
        added = taken_in(tool_grants(spec, tool, toolset), frame.worker, tool)
        if added and not added <= frame.taint:
            frame.taint = frame.taint | added

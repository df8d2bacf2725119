"""Taint at run time: what a call frame has taken in, and whether a call from it is an egress
that must be asked (spec/runtime.md, "Information flow").

A frame's taint is the set of `Source`s it took in: private data and untrusted content, each with
the capability and the tool that gave it. It flows down to a callee with the arguments it is given
(a callee starts with its caller's taint; `calls`) and up to the caller with what the callee
returns. The run's input is untrusted unless project.json says `flows.inputs: "trusted"`; every
frame of a run descends from it, so it is a source of every frame, added when a call is checked
rather than stored. Once a frame holds both, every call whose grant is labelled `egress` is
asked, unless a flow the project accepts (`flows.accept`, for the frame's worker or one of its
callers) covers it.

Pure functions over the labels the build wrote on each grant, plus `FlowGuard`, the bundle's
policy. What a tool's result adds to its frame is taken in by the gate without this module
(`WorkerSpec.taken_in`: plain `(label, capability, worker, tool)` tuples, equal to `Source`s); it is
imported only when a worker with an `egress` grant calls a tool from a frame that took something
in, so a run that cannot arm a flow never loads it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypedDict

from llm_do.bundle.flow import EGRESS, INERT, INPUT, PRIVATE, PUBLISHED, UNTRUSTED, covers, folder_label, input_label

if TYPE_CHECKING:
    from llm_do.bundle.model import CapabilityGrant, FlowAcceptanceNode
    from llm_do.bundle.views import WorkerSpec

PROVIDER_UNTRUSTED = ("web_search", "web_fetch")
"""Server-side tools whose results the model reads inside its own response: a frame of a worker
that has one holds untrusted content from its start (no gate sees them return)."""


class TaintedFrame(Protocol):
    """What the guard reads and writes of a call's frame (`call_scope.CallFrame`)."""

    worker: str
    taint: FrameTaint

    @property
    def parent(self) -> TaintedFrame | None: ...


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
FrameTaint = frozenset[tuple[str, str, str, str]]
"""What a call frame holds: `Source`s, and the plain tuples the gate adds (`WorkerSpec.taken_in`),
which equal the `Source`s they spell."""
EMPTY: Taint = frozenset()
INPUT_SOURCE = Source(UNTRUSTED, INPUT, "", INPUT)


def armed(taint: Taint) -> bool:
    """Whether a frame holding `taint` holds both legs a flow needs before its egress."""
    labels = {s.label for s in taint}
    return PRIVATE in labels and UNTRUSTED in labels


def egress_of(grants: Iterable[CapabilityGrant]) -> tuple[str, ...]:
    """The capabilities of a tool's grants that can send data out."""
    return tuple(sorted({g["capability"] for g in grants if EGRESS in (g.get("labels") or ())}))


def accepted(entries: Sequence[FlowAcceptanceNode], workers: Sequence[str], taint: Taint,
             egress: Sequence[str]) -> FlowAcceptanceNode | None:
    """The acceptance that lets the call through: one entry for one of `workers` (the frame's
    worker, then its callers) under which every combination of a private and an untrusted source
    the frame holds with each egress capability is named (`*`: any), by the build's matcher
    (`flow.covers`). Entries the build found inert (R006) are not honoured (red team L6)."""
    private = sorted({s.capability for s in taint if s.label == PRIVATE})
    untrusted = sorted({s.capability for s in taint if s.label == UNTRUSTED})
    for worker in workers:
        mine = [a for a in entries if a["worker"] == worker and not a.get(INERT)]
        if mine and all(any(covers(a, p, u, e) for a in mine) for p in private for u in untrusted for e in egress):
            return mine[0]
    return None


class FlowCheckJson(TypedDict):
    """A `FlowCheck` as events carry it (`FlowGuarded`)."""

    egress: list[str]
    private: list[dict[str, str]]
    untrusted: list[dict[str, str]]
    accepted: str | None
    reason: str


class FlowCheck(NamedTuple):
    """Why a call from a frame is asked (or let through as accepted)."""

    egress: tuple[str, ...]
    """The capabilities of the call that send data out."""
    private: tuple[Source, ...]
    untrusted: tuple[Source, ...]
    accepted: str | None
    """The reason of the `flows.accept` entry that covers the flow; None: the call is asked."""
    moves: str | None = None
    """What the call itself carries out (`src, ... into DEST`, project paths), when it moves private files."""

    def reason(self) -> str:
        """One line for the model, the approver and the event stream."""
        holds = (f"this frame holds private data (from {_listed(self.private)}) and untrusted content "
                 f"(from {_listed(self.untrusted)}), and the call can send data out ({', '.join(self.egress)})")
        if self.moves is not None:
            holds += f": it moves {self.moves}, where others can read it"
        if self.accepted is not None:
            return f"{holds}; project.json accepts this flow: {self.accepted}"
        return holds

    def to_json(self) -> FlowCheckJson:
        return {"egress": list(self.egress), "private": [s.to_json() for s in self.private],
                "untrusted": [s.to_json() for s in self.untrusted], "accepted": self.accepted, "reason": self.reason()}


def _listed(sources: Iterable[Source]) -> str:
    return ", ".join(dict.fromkeys(s.describe() for s in sources))


def check(taint: Taint, egress: Sequence[str], workers: Sequence[str],
          entries: Sequence[FlowAcceptanceNode], moves: str | None = None) -> FlowCheck | None:
    """The check of a call with egress capabilities `egress` from a frame holding `taint` (of
    `workers`: the frame's worker, then its callers); None when the call is no egress or the frame
    does not hold both legs. `moves`: what the call carries out, when `taint` has its private files."""
    if not egress or not armed(taint):
        return None
    entry = accepted(entries, workers, taint, egress) if entries else None
    ordered = sorted(taint)
    return FlowCheck(tuple(egress), tuple(s for s in ordered if s.label == PRIVATE),
                     tuple(s for s in ordered if s.label == UNTRUSTED), entry["reason"] if entry is not None else None,
                     moves)


def callers(frame: TaintedFrame) -> list[str]:
    """The frame's worker, then its callers' (the entry function's label last, if any)."""
    out: list[str] = []
    at: TaintedFrame | None = frame
    while at is not None:
        out.append(at.worker)
        at = at.parent
    return out


def as_json(taint: FrameTaint) -> list[list[str]]:
    """A taint as a chat thread stores it."""
    return [list(s) for s in sorted(taint)]


def from_json(data: object) -> Taint:
    """A taint a chat thread stored; anything malformed raises ValueError."""
    if not isinstance(data, list) or not all(isinstance(s, list) and len(s) == 4 and all(isinstance(x, str) for x in s)
                                             for s in data):
        raise ValueError("its taint is not a list of [label, capability, worker, tool]")
    return frozenset(Source(*s) for s in data)


class FlowGuard:
    """A bundle's flow policy, as the calls and the gate of every run of it consult it."""

    def __init__(self, flows: Mapping[str, Any] | None, root: str | os.PathLike[str] | None = None) -> None:
        """`root`: the project's directory, where the folders of `flows.paths` are (for calls that
        move files; without one, no call is judged on what it moves)."""
        flows = flows or {}
        label = input_label(flows.get("inputs"))
        self.input_source = None if label is None else Source(label, INPUT, "", INPUT)
        """The run's input as a source of every frame: untrusted, the owner's private request, or none."""
        self.acceptances: list[FlowAcceptanceNode] = list(flows.get("accept") or ())
        self._root = None if root is None else os.path.realpath(root)
        self._written_paths: Mapping[str, str] = flows.get("paths") or {}
        self._paths: dict[str, str] | None = None

    def start(self, spec: WorkerSpec, taint: FrameTaint) -> FrameTaint:
        """A new frame's taint (`taint`: its caller's, or what a chat thread's earlier turns took
        in), with the untrusted content of the worker's server-side web tools."""
        web = [t.get("tool_type") for t in spec.server_side_tools if t.get("tool_type") in PROVIDER_UNTRUSTED]
        return taint | {Source(UNTRUSTED, f"provider:{kind}", spec.name, str(kind)) for kind in web} if web else taint

    def held(self, frame: TaintedFrame) -> Taint:
        """What the frame holds, with the run's input unless it is trusted."""
        taint = frozenset(Source(*s) for s in frame.taint)  # the gate adds plain tuples (`WorkerSpec.taken_in`)
        return taint if self.input_source is None else taint | {self.input_source}

    def check(self, frame: TaintedFrame, spec: WorkerSpec, tool: str, toolset: str | None,
              moves: tuple[list[str], str] | None = None, carried: FrameTaint = EMPTY) -> FlowCheck | None:
        """Whether the call of `tool` from `frame` is an egress from a frame holding both legs.
        `moves`: the files the call moves and where to (absolute, links resolved; `hooks.moves`):
        moving a private file into a published folder is private data leaving, so the call is
        judged as if the frame held it (red team M1). `carried`: what the kept outputs in its
        arguments took in (`quarantine`), judged as if the frame held it too."""
        held = self.held(frame)
        if carried:
            held = held | {Source(*s) for s in carried}
        moved = self.moved_private(spec, tool, toolset, moves) if moves is not None else None
        if moved is not None:
            held = held | {moved[0]}
        if not armed(held):
            return None
        return check(held, egress_of(spec.tool_grants(tool, toolset)), callers(frame), self.acceptances,
                     moved[1] if moved is not None else None)

    def moved_private(self, spec: WorkerSpec, tool: str, toolset: str | None,
                      moves: tuple[list[str], str]) -> tuple[Source, str] | None:
        """The private source a call that moves files into a published folder carries out (the
        tool's private read grant, as the build labels it), and what it moves in words; None when
        its destination is not published or it moves nothing private."""
        sources, target = moves
        destination = self._project_path(target)
        if destination is None or self._label(destination) != PUBLISHED:
            return None
        private = [shown for s in sources if (shown := self._project_path(s)) is not None and self._private(shown)]
        if not private:
            return None
        capability = next((g["capability"] for g in spec.tool_grants(tool, toolset) if PRIVATE in (g.get("labels") or ())),
                          "fs.read:project/**")
        return Source(PRIVATE, capability, spec.name, tool), f"{', '.join(private)} into {destination}"

    def _project_path(self, path: str) -> str | None:
        """`path` (absolute, resolved) relative to the project's root; None outside it."""
        if self._root is None:
            return None
        inside = os.path.relpath(path, self._root).replace(os.sep, "/")
        return None if inside == ".." or inside.startswith("../") else inside

    def _label(self, path: str) -> str | None:
        if self._paths is None:  # the folders as the filesystem resolves them, as the build labels them
            self._paths = {}
            for folder, label in sorted(self._written_paths.items()):
                resolved = self._project_path(os.path.realpath(os.path.join(self._root or "", folder)))
                self._paths[resolved if resolved is not None else folder] = label
        return folder_label(path, self._paths)

    def _private(self, path: str) -> bool:
        """A file or folder holds private data unless its folder is published or untrusted and no
        folder inside it is labelled private (as a read of it is labelled)."""
        if self._label(path) in (None, PRIVATE):
            return True
        inside = path + "/"
        return any(folder.startswith(inside) and label == PRIVATE for folder, label in (self._paths or {}).items())

"""What each worker can do, transitively: its own capabilities and those of every worker it can
reach through calls, each with one call path and the approvals on it.

Input is bundle-shaped (`views_of_bundle`; the lint rules build the same views from a resolved
project), so `capabilities`, `diff`, `graph` and the R rules share one analysis. Nothing here is
stored in the bundle: a worker keeps only its own grants there, and reach is computed from `calls`.

When several paths give a worker the same capability, the **least gated** one is reported: the
path whose strongest approval is weakest (`allow` < `conditional` < `auto` < `ask`), then the
shortest, then the first by worker names. A denied tool or call is no path at all. `call:` is a
worker's own (direct) capability only: the path already names every call, and propagating it
would make the answer grow with the square of a chain's length.

For each capability one breadth-first search per gate level runs backwards over the calls, so the
cost is capabilities x levels x (workers + calls), and paths are kept as next-hop pointers.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Any

from llm_do.bundle.approval import ALLOW, ASK, AUTO, DENY, PYTHON_TOOL_DEFAULT, WORKER_CALL_DEFAULT
from llm_do.bundle.views import ToolBinding, call_edges, tool_bindings, used_toolsets

from .flows.labels import provider_labels
from .rule_roots import rules_see_paths_in

CONDITIONAL = "conditional"
GATES = (ALLOW, CONDITIONAL, AUTO, ASK)
"""Gate levels, weakest first: `conditional` = rules with conditions decide per call, `auto` = the
toolset decides per call (shell asks for commands that write)."""
READ_ONLY_KINDS = ("fs.read", "call", "env", "attach", "private", "untrusted")
"""Every other kind (`fs.write`, `proc.exec`, `custom`, `mcp`, what Python declares) is a side
effect: it may change something outside the run; `proc.exec` unless every command in its scope
is one the shell policy runs without asking (`read_only_commands`), `custom:NAME` unless the
tool's declaration lists only reads (`declares_only_reads`). `private` and `untrusted`, labels a
Python tool may declare, are reads."""
CUSTOM_PREFIX = "custom:"
"""The prefix of a Python tool's own capability, `custom:NAME` (`capability_grants.python_tool_capabilities`)."""
PROVIDER = "provider"
"""`provider:web_search`, `provider:code_execution`, ...: a worker's `server_side_tools`, which the
model provider runs (no gate applies); computed from the worker node, not stored as grants."""
LOCAL_KINDS = ("call", "attach")
"""Capabilities that do not propagate to callers."""
ATTACHING_TOOLS = ("agent_call",)
"""Stdlib tools, besides calls of the bundle's workers, that pass a model's attachments on."""


def kind_of(capability: str) -> str:
    return capability.partition(":")[0]


@cache
def read_only_commands() -> frozenset[str]:
    """Commands the stdlib shell policy allows without asking: they only read (spec/stdlib.md)."""
    from llm_do.stdlib.shell.commands import ALLOWLISTS

    return frozenset(name for table in ALLOWLISTS.values() for name, spec in table.items() if spec.approval == ALLOW)


def is_side_effect(capability: str) -> bool:
    kind, _, scope = capability.partition(":")
    if kind == "proc.exec":
        return not set(scope.split(",")) <= read_only_commands()
    return kind not in READ_ONLY_KINDS


def declares_only_reads(tool: str, capabilities: Iterable[str]) -> bool:
    """Whether a Python tool's grants (`capabilities`: every one its worker has through the tool)
    are `custom:TOOL` and a declaration that lists only reads: its `CAPABILITIES` entry is its
    complete declaration (spec/language.md, "Python files"), so such a tool changes nothing and
    its `custom:TOOL` is no side effect. An empty entry says nothing of what the tool does."""
    own = CUSTOM_PREFIX + tool
    found = declared = False
    for capability in capabilities:
        if capability == own:
            found = True
        elif is_side_effect(capability):
            return False
        else:
            declared = True
    return found and declared


@dataclass(frozen=True)
class Gate:
    """The approval a worker applies to one of its tools (or calls, or an opaque toolset)."""

    approval: str
    """`allow`, `ask`, `deny` or `auto`: what a call gets when no conditional rule decides."""
    default: str
    """The tool's own default; a different `approval` was set by the worker's rules."""
    rules: tuple[str, ...] = ()
    """The texts of the worker's rules for this tool when one of them has a condition."""
    paths_in: str | None = None
    """With `rules`: the toolset's root their path conditions are relative to (`rule_roots`)."""

    @cached_property
    def level(self) -> str | None:
        """The gate level, or None when every call is denied (`approval` is `deny` only when a rule
        without a condition denies the tool, and a matching deny always wins)."""
        if self.approval == DENY:
            return None
        return CONDITIONAL if self.rules else self.approval

    @cached_property
    def rank(self) -> int:
        """Index of `level` in GATES (denied: past the end)."""
        return len(GATES) if self.level is None else GATES.index(self.level)

    @property
    def by(self) -> str:
        return "rules" if self.rules else ("default" if self.approval == self.default else "rule")

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"approval": self.level or DENY, "by": self.by}
        if self.rules:
            doc["rules"] = list(self.rules)
            if self.paths_in is not None:
                doc["paths_in"] = self.paths_in
        return doc


OPEN = Gate(ALLOW, ALLOW)


@dataclass(frozen=True)
class Grant:
    capability: str
    via: str
    """What gives it in the owner: a tool, an opaque toolset, or the model (for `env:`)."""
    via_kind: str
    """`tool`, `toolset` or `model` (`input` for the run's input, a leg of `trifecta`)."""
    gate: Gate
    labels: frozenset[str] = frozenset()
    """Its information-flow labels (`flows.labels`)."""
    conditional_labels: frozenset[str] | None = None
    """With conditional rules that confine the calls they allow to folders: the labels of those
    calls; the other labels come only with calls the gate's `approval` decides (`flows.rule_confinement`)."""
    source: str = ""
    """For a leg of `trifecta`: the capability that gives it."""


@dataclass
class WorkerView:
    """What the analysis needs of one worker."""

    calls: dict[str, Gate] = field(default_factory=dict)
    grants: list[Grant] = field(default_factory=list)
    declassifies: bool = False
    """Its output can carry no free text (`llm_do.bundle.declassify`): its callers take in no
    untrusted content from it (`trifecta.leg_views` seals its untrusted leg)."""
    seals: frozenset[str] = frozenset()
    """Capabilities it holds that do not reach the workers calling it."""


@dataclass(frozen=True)
class Step:
    worker: str
    via: str
    via_kind: str
    gate: Gate

    def to_json(self) -> dict[str, Any]:
        return {"worker": self.worker, self.via_kind: self.via, **self.gate.to_json()}


@dataclass(frozen=True)
class Reach:
    """One capability of one worker, by its least gated path."""

    capability: str
    path: tuple[str, ...]
    """The workers from the one that has it (first) to the one whose tool grants it (last)."""
    steps: tuple[Step, ...]
    """One per path element: the call to the next worker, then the granting tool."""

    @property
    def gate(self) -> str:
        return max((s.gate.level or DENY for s in self.steps), key=GATES.index)

    @property
    def own(self) -> bool:
        return len(self.path) == 1

    @property
    def gated_steps(self) -> list[Step]:
        return [s for s in self.steps if s.gate.level != ALLOW]

    def to_json(self) -> dict[str, Any]:
        final = self.steps[-1]
        return {"capability": self.capability, "path": list(self.path), final.via_kind: final.via,
                "gate": self.gate, "gated_steps": [s.to_json() for s in self.gated_steps]}


class Analysis:
    """Every worker's capabilities; paths are built only for the entries asked for."""

    def __init__(self, views: dict[str, WorkerView]) -> None:
        self.views = views
        self._best: dict[str, dict[str, tuple[int, str | None, Grant | None]]] = {}
        """capability -> worker -> (gate level index, next worker or None, the owner's grant)."""
        self._next: dict[tuple[str, int], dict[str, str | None]] = {}
        self._owner: dict[tuple[str, int], dict[str, Grant]] = {}
        by_capability: dict[str, dict[str, list[Grant]]] = {}
        self._local: dict[str, dict[str, Grant]] = {}
        """worker -> its own capabilities that do not propagate (`call:`), the least gated grant."""
        for worker, view in views.items():
            for grant in view.grants:
                if grant.gate.level is None:
                    continue
                capability = grant.capability
                if capability.partition(":")[0] in LOCAL_KINDS:
                    mine = self._local.setdefault(worker, {})
                    known = mine.get(capability)
                    if known is None or _rank(grant) < _rank(known):
                        mine[capability] = grant
                    continue
                owners = by_capability.get(capability)
                if owners is None:
                    owners = by_capability[capability] = {}
                granted = owners.get(worker)
                if granted is None:
                    owners[worker] = [grant]
                else:
                    granted.append(grant)
        self._sealed: dict[str, set[str]] = {}
        """capability -> the workers that do not pass it to their callers."""
        for worker, view in views.items():
            for capability in view.seals:
                self._sealed.setdefault(capability, set()).add(worker)
        self._callers: dict[str, list[tuple[str, int]]] = {}
        for caller, view in views.items():
            for callee, gate in view.calls.items():
                if gate.level is not None and callee in views:
                    self._callers.setdefault(callee, []).append((caller, gate.rank))
        self._by_worker: dict[str, list[str]] = {}
        self._top_edge = max((lv for cs in self._callers.values() for _, lv in cs), default=0)
        """The strongest gate on any call: searching at a stronger level finds nothing new."""
        for capability, owners in by_capability.items():
            self._search(capability, owners)

    def _search(self, capability: str, owners: dict[str, list[Grant]]) -> None:
        best: dict[str, tuple[int, str | None, Grant | None]] = {}
        own = {w: gs[0] if len(gs) == 1 else min(gs, key=_rank) for w, gs in owners.items()}
        levels = {w: g.gate.rank for w, g in own.items()}
        for level in range(min(levels.values()), max(self._top_edge, *levels.values()) + 1):
            sources = sorted(w for w, lv in levels.items() if lv <= level)
            nxt: dict[str, str | None] = dict.fromkeys(sources)
            self._owner[(capability, level)] = {w: own[w] for w in sources}
            callers = self._callers
            sealed = self._sealed.get(capability, ())
            frontier = sources
            while frontier:
                found: list[str] = []
                for callee in frontier:  # sorted: the first callee found is the smallest name
                    if callee in sealed:
                        continue
                    for caller, edge in callers.get(callee, ()):
                        if edge <= level and caller not in nxt:
                            nxt[caller] = callee
                            found.append(caller)
                found.sort()
                frontier = found
            self._next[(capability, level)] = nxt
            for worker, hop in nxt.items():
                if worker not in best:
                    best[worker] = (level, hop, own[worker] if hop is None else None)
                    self._by_worker.setdefault(worker, []).append(capability)
            if len(best) == len(self.views):
                break  # every worker has it at this level or a weaker one
        self._best[capability] = best

    @cached_property
    def read_only_tools(self) -> frozenset[str]:
        """`custom:NAME` of the Python tools that declare only reads, in every worker that has a
        tool of that name (`declares_only_reads`): a tool of the same name in another worker that
        may write keeps the capability a side effect."""
        verdicts: dict[str, bool] = {}
        for view in self.views.values():
            tools: dict[str, list[str]] = {}
            for grant in view.grants:
                if grant.via_kind == "tool":
                    tools.setdefault(grant.via, []).append(grant.capability)
            for tool, capabilities in tools.items():
                own = CUSTOM_PREFIX + tool
                if own in capabilities:
                    verdicts[own] = verdicts.get(own, True) and declares_only_reads(tool, capabilities)
        return frozenset(c for c, only_reads in verdicts.items() if only_reads)

    def side_effect(self, capability: str) -> bool:
        """`is_side_effect`, with the Python tools that declare only reads left out."""
        if not is_side_effect(capability):
            return False
        return not capability.startswith(CUSTOM_PREFIX) or capability not in self.read_only_tools

    def propagating(self) -> list[str]:
        """Every capability that passes from callees to callers, sorted."""
        return sorted(self._best)

    def holders(self, capability: str) -> Collection[str]:
        """The workers that have a propagating capability, by themselves or through calls."""
        return self._best.get(capability, {}).keys()

    def capabilities(self, worker: str) -> list[str]:
        return sorted([*self._by_worker.get(worker, ()), *self._local.get(worker, ())])

    def least(self, worker: str, capability: str) -> tuple[int, str | None] | None:
        """(the least gated path's level, as an index in GATES, and its next worker, None when the
        worker has the capability itself), without building the path; None when it has none."""
        entry = self._best.get(capability, {}).get(worker)
        return None if entry is None else (entry[0], entry[1])

    def granter(self, worker: str, capability: str) -> tuple[str, Grant] | None:
        """The worker at the end of the least gated path and its grant, without building the path."""
        entry = self._best.get(capability, {}).get(worker)
        if entry is None:
            return None
        nxt = self._next[(capability, entry[0])]
        current = worker
        while (hop := nxt[current]) is not None:
            current = hop
        return current, self._owner[(capability, entry[0])][current]

    def reach(self, worker: str, capability: str) -> Reach | None:
        local = self._local.get(worker, {}).get(capability)
        if local is not None:
            return Reach(capability, (worker,), (Step(worker, local.via, local.via_kind, local.gate),))
        entry = self._best.get(capability, {}).get(worker)
        if entry is None:
            return None
        level = entry[0]
        nxt = self._next[(capability, level)]
        path = [worker]
        steps: list[Step] = []
        while (hop := nxt[path[-1]]) is not None:
            steps.append(Step(path[-1], hop, "tool", self.views[path[-1]].calls[hop]))
            path.append(hop)
        grant = self._owner[(capability, level)][path[-1]]
        steps.append(Step(path[-1], grant.via, grant.via_kind, grant.gate))
        return Reach(capability, tuple(path), tuple(steps))

    def reaches(self, worker: str) -> list[Reach]:
        return [r for c in self.capabilities(worker) if (r := self.reach(worker, c)) is not None]


def _rank(grant: Grant) -> tuple[int, str]:
    """The least gated grant first, then by name."""
    return grant.gate.rank, grant.via


def entry_function_view(calls: Iterable[str]) -> WorkerView:
    """The entry function as the analysis sees it: trusted code with no tools and no model of its
    own, whose calls need no approval; each call is its own `call:` capability."""
    view = WorkerView(calls=dict.fromkeys(calls, OPEN))
    view.grants = [Grant(f"call:{callee}", callee, "tool", OPEN) for callee in view.calls]
    return view


def views_of_bundle(bundle: dict[str, Any]) -> dict[str, WorkerView]:
    """Views of a bundle document's workers (format 3), and of its entry function under its label."""
    toolsets: dict[str, dict[str, Any]] = bundle.get("toolsets") or {}
    callees: dict[str, list[str]] = {}
    for edge in call_edges(bundle["workers"], bundle.get("entry")):
        callees.setdefault(edge.caller, []).append(edge.callee)
    views: dict[str, WorkerView] = {}
    for name, node in bundle["workers"].items():
        gates: dict[str, Gate] = {}
        for tool, binding in tool_bindings(node).items():
            if binding.worker:
                default = WORKER_CALL_DEFAULT
            else:
                default = ((toolsets.get(binding.toolset or "") or {}).get("tools") or {}).get(tool, {}).get(
                    "approval", PYTHON_TOOL_DEFAULT)
            gates[tool] = _gate(binding, default, rules_see_paths_in(toolsets, node, binding.toolset) if binding.rules else None)
        view = WorkerView(declassifies=node.get("declassifies", False))
        for callee in callees.get(name, ()):
            view.calls[callee] = gates.get(callee, OPEN)
        opaque = {u.toolset: Gate(u.opaque_approval, PYTHON_TOOL_DEFAULT)
                  for u in used_toolsets(node) if u.toolset and u.opaque_approval}
        for grant in node.get("capabilities") or ():
            labels = frozenset(grant.get("labels") or ())
            if grant.get("tool") is not None:
                conditional = grant.get("conditional_labels")
                view.grants.append(Grant(grant["capability"], grant["tool"], "tool", gates.get(grant["tool"], OPEN), labels,
                                         None if conditional is None else frozenset(conditional)))
            elif grant.get("toolset") is not None:
                view.grants.append(Grant(grant["capability"], grant["toolset"], "toolset",
                                         opaque.get(grant["toolset"], Gate(ASK, PYTHON_TOOL_DEFAULT)), labels))
            else:
                view.grants.append(Grant(grant["capability"], grant.get("model") or "", "model", OPEN, labels))
        for server_side in node.get("server_side_tools") or ():  # run by the provider: never asked
            kind = server_side.get("tool_type")
            if kind:
                view.grants.append(provider_grant(str(kind)))
        add_attach_grants(view, gates)
        views[name] = view
    function = (bundle.get("entry") or {}).get("function")
    if function:
        views[function["name"]] = entry_function_view(callees.get(function["name"], ()))
    return views


def provider_grant(kind: str) -> Grant:
    """A server-side tool: run by the provider, so no gate asks before it."""
    return Grant(f"{PROVIDER}:{kind}", kind, "tool", OPEN, provider_labels(kind))


def add_attach_grants(view: WorkerView, tools: Collection[str]) -> None:
    """`attach:SCOPE` for a worker that can call workers (`tools`: its tool names): a model's
    attachments are reads by the calling worker, so it can attach what its `read_file` reads,
    gated as that read is."""
    if view.calls or any(tool in tools for tool in ATTACHING_TOOLS):
        view.grants += [Grant(f"attach:{g.capability.partition(':')[2]}", g.via, g.via_kind, g.gate) for g in view.grants
                        if kind_of(g.capability) == "fs.read" and g.via == "read_file"]


def _gate(binding: ToolBinding, default: str, paths_in: str | None) -> Gate:
    if binding.rules:
        texts = tuple(r.get("text") or r.get("action", "") for r in binding.rules)
        return Gate(binding.approval, binding.default if binding.default is not None else default, texts, paths_in)
    return plain_gate(binding.approval, default)


@cache
def plain_gate(approval: str, default: str) -> Gate:
    """A gate without conditional rules; there are only a few, shared by every worker."""
    return Gate(approval, default)


def analyse(bundle: dict[str, Any]) -> Analysis:
    return Analysis(views_of_bundle(bundle))


def sorted_reaches(reaches: Iterable[Reach], analysis: Analysis) -> list[Reach]:
    """Side effects first, then by capability."""
    return sorted(reaches, key=lambda r: (not analysis.side_effect(r.capability), r.capability))

"""Transitive capabilities compared: what each affected worker gained, lost, or reaches through
a weaker or stronger gate (spec/diff.md, area `capability`).

Pure: two `Analysis` results in, `Change`s out. A capability gained is paired with one lost of the
same kind when its scope contains it (`widened`), is contained (`narrowed`), or, for commands,
overlaps (`proc.exec:cat,ls` -> `proc.exec:ls,mv`: `changed`, the commands gained and lost named).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..analysis.capabilities import ALLOW, GATES, LOCAL_KINDS, PROVIDER, Analysis, Reach, Step, kind_of
from ..analysis.reach_text import gate_text, via_text
from .change import Change, Severity, Verb


def callers_of(workers: set[str], edges: list[tuple[str, str]]) -> set[str]:
    """The workers and every worker that can reach one of them: the only ones whose transitive
    capabilities a change of those workers can change."""
    callers: dict[str, list[str]] = {}
    for u, v in edges:
        callers.setdefault(v, []).append(u)
    seen = set(workers)
    stack = list(workers)
    while stack:
        for caller in callers.get(stack.pop(), ()):
            if caller not in seen:
                seen.add(caller)
                stack.append(caller)
    return seen


def _scope_contains(wide: str, narrow: str) -> bool:
    """Whether capability `wide` allows everything `narrow` does (same kind)."""
    kind, _, ws = wide.partition(":")
    nkind, _, ns = narrow.partition(":")
    if kind != nkind or ws == ns:
        return kind == nkind
    if kind == "proc.exec":
        return set(ns.split(",")) <= set(ws.split(","))
    if kind.startswith("fs."):
        base, _, wrest = ws.partition("/**")
        return wrest == "" and (ns == base or ns.startswith(base + "/"))
    return ws == "*"


def capability_changes(old: Analysis, new: Analysis, both: set[str], added_workers: set[str],
                       keeps_models: Callable[[str], bool] = lambda worker: False) -> list[Change]:
    """`keeps_models(W)`: W may still run on every model it could before (`compatible_models`
    grew to `*`), so an `env:` it no longer names is not a capability lost."""
    out: list[Change] = []
    for worker in sorted(both | added_workers):
        before = {c for c in old.capabilities(worker) if kind_of(c) != "call"} if worker in both else set()
        after = {c for c in new.capabilities(worker) if kind_of(c) != "call"}
        gained, lost = sorted(after - before), sorted(before - after)
        paired: set[str] = set()
        for cap in gained:
            reach = new.reach(worker, cap)
            assert reach is not None
            wider_than = next((c for c in lost if c not in paired and _scope_contains(cap, c)), None)
            narrower_than = next((c for c in lost if c not in paired and _scope_contains(c, cap)), None)
            if wider_than is not None:
                paired.add(wider_than)
                out.append(_reach_change(worker, "widened", reach, wider_than, cap, new.side_effect(cap)))
            elif narrower_than is not None:
                paired.add(narrower_than)
                out.append(_reach_change(worker, "narrowed", reach, narrower_than, cap, new.side_effect(cap)))
            elif (overlap := _commands_overlap(cap, lost, paired)) is not None:
                paired.add(overlap)
                out.append(_reach_change(worker, "changed", reach, overlap, cap, new.side_effect(cap)))
            else:
                out.append(_reach_change(worker, "added", reach, None, cap, new.side_effect(cap)))
        for cap in lost:
            if cap not in paired:
                reach = old.reach(worker, cap)
                assert reach is not None
                if kind_of(cap) == "env" and keeps_models(reach.path[-1]):
                    continue
                out.append(Change("low", "removed", "capability", f"{cap} of {worker}", _reach_text(reach), None,
                                  worker=worker, note=via_text(reach), capability=cap, gate=reach.gate,
                                  cause=cause_of(reach), at=written_at(reach)))
        for cap in gained:
            if kind_of(cap) not in LOCAL_KINDS:
                out += _second_paths(worker, cap, new)
        for cap in sorted(before & after):
            a, b = old.reach(worker, cap), new.reach(worker, cap)
            assert a is not None and b is not None
            if a.gate != b.gate:
                relaxed = GATES.index(b.gate) < GATES.index(a.gate)
                risky = relaxed and b.gate == ALLOW and new.side_effect(cap)
                out.append(Change("high" if risky else "medium" if relaxed else "low",
                                  "widened" if relaxed else "narrowed", "capability", f"{cap} of {worker}",
                                  _reach_text(a), _reach_text(b), worker=worker,
                                  note="approval relaxed" if relaxed else "approval tightened", capability=cap, gate=b.gate,
                                  cause=cause_of(b), at=written_at(b, gate=True)))
    return out


def _second_paths(worker: str, cap: str, new: Analysis) -> list[Change]:
    """The other paths to a capability the worker gained (G17: `main` gaining its own `write_file`
    while a callee gains a write too, reported by the callee's path alone): one per gate the least
    gated path does not have, by its first step (the worker's own tool, a callee), least gated
    first. Each is its own entry, as its cause is another tool."""
    paths = _first_hops(new, worker, cap)
    if len(paths) < 2:
        return []
    least = paths[0]
    shown = {least.gate}
    out = []
    for reach in paths:
        if reach.gate in shown:
            continue
        shown.add(reach.gate)
        change = _reach_change(worker, "added", reach, None, cap, new.side_effect(cap))
        out.append(replace(change, note=f"a second path; the least gated is via {via_text(least)} [{gate_text(least)}]"))
    return out


def _reach_text(reach: Reach) -> str:
    return f"via {via_text(reach)} [{gate_text(reach)}]"


def _reach_change(worker: str, verb: Verb, reach: Reach, before: str | None, cap: str, side_effect: bool) -> Change:
    severity: Severity
    if verb == "narrowed" or (verb == "changed" and not _commands(cap) - _commands(before or "")):
        severity = "low"
    elif side_effect:
        severity = "high" if reach.gate == ALLOW else "medium"
    else:
        severity = "medium" if kind_of(cap) == "env" else "low"
    path = " -> ".join(reach.path)
    after = _reach_text(reach) if verb == "added" else f"{cap} {_reach_text(reach)}"
    detail = _command_detail(before, cap) if before is not None and kind_of(cap) == "proc.exec" else []
    return Change(severity, verb, "capability", f"{cap} of {worker}", before, after, worker=worker, note=f"path {path}",
                  detail=detail, capability=cap, gate=reach.gate, cause=cause_of(reach), at=written_at(reach))


def cause_of(reach: Reach) -> str:
    """`editor.write_file`, `main.toolset tools`, `main.model openai:gpt-4o`: what grants it."""
    final = reach.steps[-1]
    return f"{reach.path[-1]}.{final.via}" if final.via_kind == "tool" else f"{reach.path[-1]} {final.via_kind} {final.via}"


def written_at(reach: Reach, gate: bool = False) -> str:
    """Where what grants it is written (a `diff.positions` key): the worker's line for the tool
    (its approval rule when only the gate changed), its toolsets entry, its `server_side_tools`,
    or its model."""
    final, worker = reach.steps[-1], reach.path[-1]
    if kind_of(reach.capability) == PROVIDER:  # run by the model provider: its server_side_tools
        return f"worker:{worker}:server_side_tools"
    if final.via_kind == "tool":
        return f"{'rule' if gate else 'tool'}:{worker}:{final.via}"
    return f"toolset:{worker}:{final.via}" if final.via_kind == "toolset" else f"worker:{worker}:model"


def _commands(cap: str) -> set[str]:
    return set(cap.partition(":")[2].split(","))


def _commands_overlap(cap: str, lost: list[str], paired: set[str]) -> str | None:
    """The lost `proc.exec` a gained one replaces (a toolset swapped: `shell_readonly` ->
    `shell_file_ops`), so the commands it adds are named rather than a new capability listed."""
    if kind_of(cap) != "proc.exec":
        return None
    return next((c for c in lost if c not in paired and kind_of(c) == "proc.exec" and _commands(c) & _commands(cap)), None)


def _command_detail(before: str, after: str) -> list[str]:
    gained, dropped = sorted(_commands(after) - _commands(before)), sorted(_commands(before) - _commands(after))
    return ([f"gains: {', '.join(gained)}"] if gained else []) + ([f"no longer: {', '.join(dropped)}"] if dropped else [])


def _first_hops(analysis: Analysis, worker: str, capability: str) -> list[Reach]:
    """One path per first step that gives the worker a propagating capability: each of its own
    grants of it, and each callee's least gated path; least gated first, then the shortest, then
    by the first step's name."""
    view = analysis.views.get(worker)
    if view is None:
        return []
    found = [Reach(capability, (worker,), (Step(worker, g.via, g.via_kind, g.gate),))
             for g in view.grants if g.capability == capability and g.gate.level is not None]
    holders = analysis.holders(capability)
    for callee, gate in view.calls.items():
        if gate.level is None or callee == worker or callee not in holders:
            continue
        rest = analysis.reach(callee, capability)
        if rest is not None:
            found.append(Reach(capability, (worker, *rest.path), (Step(worker, callee, "tool", gate), *rest.steps)))
    return sorted(found, key=lambda r: (GATES.index(r.gate), len(r.path), r.steps[0].via))

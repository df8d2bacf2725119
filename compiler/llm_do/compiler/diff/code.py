"""What changed in the code a project runs: its Python tools, `TOOLSETS` toolsets, local MCP
servers and entry function, compared by their fingerprints (spec/diff.md, "Code"; spec/bundle.md,
"Code").

One entry per cause: a tool's own change (its body, signature, module, or the effects its own
code gained) is an entry of that tool; a part it shares with others (a helper, a module it
imports) is **one** entry naming every tool that reaches it. Severity follows who is asked: a new
effect that runs with nobody asked is high; another change of code that runs unasked, or a new
effect behind `ask`, medium; the rest low. A description the model reads is compared as text.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from llm_do.bundle.model import CodeNode, CodePart
from llm_do.bundle.views import entry_name

from ..code.effects import EFFECT_TEXT
from .change import Change, Severity, text_diff
from .schemas import described, field_changes
from .unread_sides import unread_gate

UNASKED = ("allow", "conditional")
"""Gates under which a tool runs with nobody asked (for some calls at least)."""


@dataclass
class Unit:
    """Code that runs as one thing: a tool, a `TOOLSETS` toolset or the entry function."""

    label: str
    """`tool NAME`, `toolset NAME`, `entry function LABEL`."""
    code: CodeNode
    users: dict[str, str] = field(default_factory=dict)
    """Worker (or the entry function's label) -> its gate: `allow`, `conditional`, `ask`, `auto`."""
    description: str | None = None
    parameters: dict[str, Any] | None = None
    place: str | None = None
    """Where it is written when that is not in its code (an MCP server's entry in project.json)."""

    @property
    def at(self) -> str:
        """Where it is written (a `diff.positions` key): its `def`, or a toolset's `TOOLSETS`."""
        if self.place is not None:
            return self.place
        function = self.code.get("function")
        if function:
            return f"code:{function}"
        first = min(self.code.get("parts") or [""])
        return f"code:{first.partition(':')[0]}:TOOLSETS"


def _gate(binding: dict[str, Any]) -> str:
    return "conditional" if binding.get("rules") else str(binding.get("approval"))


def _units(doc: dict[str, Any]) -> dict[str, Unit]:
    units: dict[str, Unit] = {}
    by_key: dict[tuple[str, str], Unit] = {}
    toolset_units: dict[str, Unit] = {}
    for key, node in (doc.get("toolsets") or {}).items():
        if node.get("kind") == "mcp" and node.get("code"):  # a local server's project files: one unit for its tools
            toolset_units[key] = units[f"MCP server {key}"] = Unit(f"MCP server {key}", node["code"],
                                                                   place=f"project:mcp_servers.{key}")
        if node.get("kind") != "python":
            continue
        if node.get("code"):
            toolset_units[key] = units[f"toolset {key}"] = Unit(f"toolset {key}", node["code"])
        for name, tool in (node.get("tools") or {}).items():
            if tool.get("code"):
                by_key[(key, name)] = units[f"tool {name}"] = Unit(
                    f"tool {name}", tool["code"], description=tool.get("description"), parameters=tool.get("parameters"))
    if not units and not (doc["entry"].get("function") or {}).get("code"):
        return units
    for worker, node in doc["workers"].items():
        for name, binding in (node.get("tools") or {}).items():
            key = binding.get("toolset")
            unit = by_key.get((key, name)) or toolset_units.get(key or "")
            if unit is None or binding.get("approval") == "deny" and not binding.get("rules"):
                continue
            _merge_users(unit.users, {worker: _gate(binding)})
        for use in node.get("toolsets") or ():
            unit = toolset_units.get(use.get("toolset") or "")
            if unit is not None and use.get("opaque_approval") not in (None, "deny"):
                unit.users.setdefault(worker, use["opaque_approval"])
            elif unit is not None and _not_started(doc["toolsets"][use["toolset"]]):
                unit.users.setdefault(worker, unread_gate(doc, worker))  # its tools are unknown (`--no-import`)
    function = doc["entry"].get("function") or {}
    if function.get("code"):
        label = entry_name(doc["entry"])
        units[f"entry function {label}"] = Unit(f"entry function {label}", function["code"], {label: "allow"})
    return units


def _not_started(node: dict[str, Any]) -> bool:
    """An MCP server whose tools were not listed (`--no-import`): no binding says who runs them."""
    return node.get("kind") == "mcp" and not node.get("opaque") and not node.get("tools")


def _merge_users(into: dict[str, str], users: dict[str, str]) -> None:
    """Each worker's least gated use: a worker that runs one of the tools unasked runs the code unasked."""
    for worker, gate in users.items():
        known = into.get(worker)
        if known is None or gate in UNASKED and known not in UNASKED:
            into[worker] = gate


def _effects(part: CodePart | None) -> set[str]:
    return set(part.get("effects") or ()) if part is not None else set()


def _effects_text(effects: set[str]) -> str:
    return "effects: " + (", ".join(sorted(effects)) or "none")


def _gains(effects: set[str]) -> str:
    """The effects gained as a reader needs them: `computed call: may delete, run or connect`."""
    return ", ".join(EFFECT_TEXT.get(e, e) for e in sorted(effects))


LISTED = 10
"""Most users or tools an entry names; the rest are counted (the report stays short at any size)."""


def _first_names(names: list[str]) -> str:
    more = f", and {len(names) - LISTED} more" if len(names) > LISTED else ""
    return ", ".join(names[:LISTED]) + more


def _users_text(users: dict[str, str]) -> str:
    """The workers that use it with their gates, those that run it unasked first."""
    if not users:
        return "used by no worker"
    ordered = sorted(users.items(), key=lambda item: (item[1] not in UNASKED, item[0]))
    listed = _first_names([f"{w} [{g}]" for w, g in ordered])
    if len(users) <= LISTED:
        return f"used by: {listed}"
    gates = ", ".join(f"{sum(g == gate for g in users.values())} {gate}" for gate in sorted(set(users.values())))
    return f"used by {len(users)} workers ({gates}): {listed}"


def _severity(gained: set[str], users: dict[str, str]) -> Severity:
    unasked = any(g in UNASKED for g in users.values())
    if gained:
        return "high" if unasked else "medium"
    return "medium" if unasked else "low"


@dataclass
class _Shared:
    """A part some units reach that changed: one entry, however many units reach it."""

    before: CodePart | None
    after: CodePart | None
    units: set[str] = field(default_factory=set)
    users: dict[str, str] = field(default_factory=dict)
    reached: set[str] = field(default_factory=set)
    """Parts the units reach now (`+`) or no longer (`-`) because of it."""
    gained: set[str] = field(default_factory=set)


def _own(code: CodeNode) -> CodePart | None:
    function = code.get("function")
    return code["parts"].get(function) if function is not None else None


def _unit_change(name: str, old: Unit, new: Unit, shared: dict[str, _Shared]) -> Change | None:
    oc, nc = old.code, new.code
    what: list[str] = []
    detail: list[str] = []
    old_own, new_own = _own(oc), _own(nc)
    if oc.get("function") != nc.get("function"):
        what.append(f"moved from {oc.get('function') or 'its module'} to {nc.get('function') or 'its module'}")
    if (old_own and old_own["hash"]) != (new_own and new_own["hash"]):
        what.append("body")
    fields = field_changes(old.parameters or {}, new.parameters or {}) if old.parameters != new.parameters else []
    if fields or oc.get("signature") != nc.get("signature"):
        what.append("signature")
        detail += [f"parameter {f.text()}" for f in fields]
    gained = _effects(new_own) - _effects(old_own)
    own_keys = {oc.get("function"), nc.get("function")}
    op, np_ = oc["parts"], nc["parts"]
    changed = sorted(k for k in set(op) & set(np_) - own_keys if op[k] != np_[k])
    # parts it now reaches (+) or no longer reaches (-): explained by its own change or a helper's
    reach = [f"+{k}" for k in sorted(set(np_) - set(op) - own_keys)] + [f"-{k}" for k in sorted(set(op) - set(np_) - own_keys)]
    for key in changed:
        entry = shared.setdefault(key, _Shared(op[key], np_[key]))
        entry.units.add(name)
        _merge_users(entry.users, new.users)
        entry.gained |= _effects(np_[key]) - _effects(op[key])
    reach_gained = {e for k in reach if k[0] == "+" for e in _effects(np_[k[1:]])} - set(oc.get("effects") or ())
    if reach and not what and changed:
        entry = shared[changed[0]]
        entry.reached.update(reach)
        entry.gained |= reach_gained
        reach = []
    elif reach:
        gained |= reach_gained
        detail += [("now reaches " if k[0] == "+" else "no longer reaches ") + k[1:] for k in reach]
    if not what and not reach and not gained:
        return None
    if gained:
        what.append("gains " + _gains(gained))
    detail = [f"gains: {_gains(gained)}"] * bool(gained) + detail + [_users_text(new.users)]
    effects_changed = set(oc.get("effects") or ()) != set(nc.get("effects") or ())
    return Change(_severity(gained, new.users), "widened" if gained else "changed", "code", f"code of {name}",
                  _effects_text(set(oc.get("effects") or ())) if effects_changed else None,
                  _effects_text(set(nc.get("effects") or ())) if effects_changed else None,
                  note=", ".join(what) if what else "reaches other code", detail=detail, users=tuple(sorted(new.users)),
                  at=new.at)


def _shared_change(key: str, entry: _Shared) -> Change:
    before, after = _effects(entry.before), _effects(entry.after)
    what = "gains " + _gains(entry.gained) if entry.gained else "changed"
    detail = [f"gains: {_gains(entry.gained)}"] * bool(entry.gained)
    detail.append("reached by " + _first_names(sorted(entry.units)))
    detail += [("now reaches " if k[0] == "+" else "no longer reaches ") + k[1:] for k in sorted(entry.reached)]
    detail.append(_users_text(entry.users))
    reached = ", ".join(sorted(entry.units)) if len(entry.units) <= 3 else f"{len(entry.units)} tools and functions"
    return Change(_severity(entry.gained, entry.users), "widened" if entry.gained else "changed", "code",
                  f"code of {key}", _effects_text(before) if before != after else None,
                  _effects_text(after) if before != after else None, note=f"{what}; reached by {reached}", detail=detail,
                  users=tuple(sorted(entry.users)), at=f"code:{key}")


def parameter_texts_change(tool: str, old: dict[str, Any] | None, new: dict[str, Any] | None, *, at: str | None) -> Change | None:
    """The descriptions of a tool's parameters (`tool T`, `tool T of MCP server S`), which the model
    reads with its description (a docstring's `Args:`, `Field(description=...)`), when they differ."""
    before, after = described(old or {}), described(new or {})
    if before == after:
        return None
    return Change("medium", "changed", "instructions", f"parameter descriptions of {tool}", note="read by the model",
                  detail=text_diff("\n".join(before), "\n".join(after)), at=at)


def _description_change(name: str, old: Unit, new: Unit) -> Change:
    return Change("medium", "changed", "instructions", f"description of {name}", note="read by the model",
                  detail=text_diff(old.description or "", new.description or "") + [_users_text(new.users)],
                  users=tuple(sorted(new.users)), at=new.at)


def code_changes(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """Entries for code that changed between two bundles; nothing when no Python node's hash did."""
    if _code_hashes(old) == _code_hashes(new):
        return []
    ou, nu = _units(old), _units(new)
    out: list[Change] = []
    shared: dict[str, _Shared] = {}
    for name in sorted(set(ou) & set(nu)):
        a, b = ou[name], nu[name]
        if a.code != b.code or a.parameters != b.parameters:
            change = _unit_change(name, a, b, shared)
            if change is not None:
                out.append(change)
        if a.description != b.description:
            out.append(_description_change(name, a, b))
        if a.parameters != b.parameters and (texts := parameter_texts_change(name, a.parameters, b.parameters, at=b.at)):
            out.append(replace(texts, detail=[*texts.detail, _users_text(b.users)], users=tuple(sorted(b.users))))
    out += [_shared_change(key, entry) for key, entry in sorted(shared.items())]
    return out + _toolset_descriptions(old.get("toolsets") or {}, new.get("toolsets") or {})


def _toolset_descriptions(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """The descriptions of a `TOOLSETS` toolset's tools (its code counts as one, its texts each)."""
    out: list[Change] = []
    for key in sorted(set(old) & set(new)):
        a, b = old[key], new[key]
        if a.get("export") != "TOOLSETS" or b.get("export") != "TOOLSETS" or a.get("hash") == b.get("hash"):
            continue
        at, bt = a.get("tools") or {}, b.get("tools") or {}
        place = f"code:{b.get('module', '').replace('.', '/')}.py:TOOLSETS"
        for name in sorted(set(at) & set(bt)):
            before, after = at[name].get("description"), bt[name].get("description")
            if before != after:
                out.append(Change("medium", "changed", "instructions", f"description of tool {name} of toolset {key}",
                                  note="read by the model", detail=text_diff(before or "", after or ""), at=place))
            texts = parameter_texts_change(f"tool {name} of toolset {key}", at[name].get("parameters"),
                                           bt[name].get("parameters"), at=place)
            out += [texts] if texts is not None else []
    return out


def _code_hashes(doc: dict[str, Any]) -> tuple[Any, ...]:
    """What code changes can be found in: the Python toolsets' hashes, the MCP servers' code and
    the entry function's hash."""
    toolsets = doc.get("toolsets") or {}
    return (sorted((k, n.get("hash")) for k, n in toolsets.items() if n.get("kind") == "python"),
            sorted((k, n["code"].get("fingerprint")) for k, n in toolsets.items() if n.get("kind") == "mcp" and n.get("code")),
            (doc["entry"].get("function") or {}).get("hash"))

"""What a change makes a project able to do: two bundle documents compared by meaning.

Pure: two documents in, a list of `Change` out (spec/diff.md). Workers whose node `hash` is equal
are skipped; only changed nodes are descended into, and the capability analysis runs only when
some worker changed. What does not change meaning is not a change: a worker file moved
(`source`), `sources`, `digest`, `root`, the compiler's version, key order and formatting.

Every change has a severity (`high`, `medium`, `low`), a verb (`added`, `widened`, `narrowed`,
`removed`, `changed`), a subject, and before/after. High: a side effect gained, or made less
gated, with no approval on its path; a run's approval mode relaxed. Medium: everything that lets
the project do more or differently (gated side effects, new calls, models, instructions,
breaking schema changes, relaxed approvals). Low: what only takes something away or is cosmetic.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from llm_do.bundle.errors import LlmDoError
from llm_do.bundle.model import SchemaNode, WorkerNode, WorkerTool
from llm_do.bundle.views import call_edges, entry_name, used_toolsets

from .capabilities import ALLOW, GATES, Analysis, Reach, analyse, is_side_effect, kind_of
from .code_diff import code_changes
from .diff_change import AREAS, SEVERITIES, Area, Change, Severity, Verb, text_diff, text_of
from .reach_text import gate_text, rules_text, via_text
from .rule_roots import rules_see_paths_in
from .schema_diff import field_changes
from .unread import Unread

__all__ = ["AREAS", "SEVERITIES", "Area", "BundleDiff", "Change", "Incomparable", "Severity", "Verb", "diff_bundles"]
"""`Change` and its vocabulary live in `diff_change`; they are named here too, for the renderers."""

STRICTNESS = ("allow", "conditional", "auto", "ask", "deny")
"""Approvals from the most to the least permissive."""
MODE_STRICTNESS = ("approve_all", "prompt", "reject_all")
SCOPE_SETTINGS = ("path", "allowed_suffixes")
"""Stdlib settings that are part of a capability's scope: a change of them is a capability change
(and `drafts` and `drafts/` are one scope)."""

@dataclass
class BundleDiff:
    changes: list[Change]
    edges_added: list[tuple[str, str]]
    edges_removed: list[tuple[str, str]]
    old_edges: list[tuple[str, str]]
    new_edges: list[tuple[str, str]]
    not_compared: list[Unread] = field(default_factory=list)
    """What was not compared (`--no-import`): schemas, tools built by code, MCP servers not started."""

    def counts(self) -> dict[str, int]:
        return {s: sum(c.severity == s for c in self.changes) for s in SEVERITIES}

    def at_or_above(self, severity: str) -> bool:
        return any(SEVERITIES.index(c.severity) <= SEVERITIES.index(severity) for c in self.changes)


class Incomparable(LlmDoError, ValueError):
    """Two documents that cannot be compared (another bundle format)."""


def diff_bundles(old: dict[str, Any], new: dict[str, Any]) -> BundleDiff:
    if old.get("bundle_format") != new.get("bundle_format"):
        raise Incomparable(f"the old side is bundle format {old.get('bundle_format')} and the new side bundle format "
                           f"{new.get('bundle_format')}; run `llm-do build` on both with one llm-do")
    changes: list[Change] = []
    changes += _project_changes(old, new)
    changes += _mcp_changes(old.get("toolsets") or {}, new.get("toolsets") or {})
    ow, nw = old["workers"], new["workers"]
    changed = sorted(n for n in set(ow) & set(nw) if ow[n].get("hash") != nw[n].get("hash"))
    for name in sorted(set(nw) - set(ow)):
        changes.append(Change("medium", "added", "worker", f"worker {name}", None, nw[name].get("description"),
                              worker=name))
    for name in sorted(set(ow) - set(nw)):
        changes.append(Change("low", "removed", "worker", f"worker {name}", ow[name].get("description"), None,
                              worker=name))
    old_edges, new_edges = _edges(old), _edges(new)
    called = {v for _, v in new_edges}
    for name in changed:
        changes += _worker_changes(name, ow[name], nw[name], old, new, name in called)
    changes += code_changes(old, new)
    added = sorted(set(new_edges) - set(old_edges))
    removed = sorted(set(old_edges) - set(new_edges))
    changes += [Change("medium", "added", "call", f"call {u} -> {v}", worker=u) for u, v in added]
    changes += [Change("low", "removed", "call", f"call {u} -> {v}", worker=u) for u, v in removed]
    touched = set(changed) | (set(ow) ^ set(nw))
    functions = {entry_name(old), entry_name(new)} - set(ow) - set(nw)
    """The entry functions' labels (an entry worker's name is among the workers)."""
    both = set(ow) & set(nw) | ({entry_name(old)} & {entry_name(new)} & functions)
    if old["entry"].get("function") != new["entry"].get("function"):
        touched |= functions
    if touched:
        affected = _callers_of(touched, old_edges) | _callers_of(touched, new_edges)
        added_nodes = (set(nw) - set(ow)) | ({entry_name(new)} & functions) - both
        changes += _capability_changes(analyse(old), analyse(new), affected & both, added_nodes)
    changes = [_placed(c, old, new) for c in changes]
    return BundleDiff(sorted(changes, key=Change.sort_key), added, removed, old_edges, new_edges)


def _placed(change: Change, old: dict[str, Any], new: dict[str, Any]) -> Change:
    """The change with the file it is in: its worker's file (the new one unless removed), else
    project.json for what the project configures."""
    if change.file is not None:
        return change
    if change.worker is not None:
        node = new["workers"].get(change.worker) or old["workers"].get(change.worker) or {}
        return replace(change, file=node.get("source"))
    return replace(change, file="project.json") if change.area in ("project", "mcp") else change


# --- the project


def _edges(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """Every call edge: the workers' and the entry function's (from its label)."""
    return sorted((edge.caller, edge.callee) for edge in call_edges(doc))


def _entry(entry: dict[str, Any]) -> dict[str, Any]:
    """The entry as compared: an entry function's calls are call edges, its code is compared by
    `code_diff`, its hash has no meaning."""
    function = entry.get("function")
    if not function:
        return entry
    kept = {k: v for k, v in function.items() if k not in ("calls", "hash", "input", "source", "code")}
    return {**entry, "function": {**kept, "input": function["input"].get("qualname")}}


def _project_changes(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    out: list[Change] = []
    if _entry(old["entry"]) != _entry(new["entry"]):
        out.append(Change("medium", "changed", "project", "entry", text_of(_entry(old["entry"])), text_of(_entry(new["entry"]))))
    ort, nrt = old.get("runtime") or {}, new.get("runtime") or {}
    om, nm = ort.get("approval_mode"), nrt.get("approval_mode")
    if om != nm:
        wider = MODE_STRICTNESS.index(nm) < MODE_STRICTNESS.index(om) if om in MODE_STRICTNESS and nm in MODE_STRICTNESS else False
        out.append(Change("high" if wider else "low", "widened" if wider else "narrowed", "project", "approval_mode", om, nm,
                          note="relaxed" if wider else "tightened"))
    if ort.get("max_depth") != nrt.get("max_depth"):
        out.append(_limit_change("max_depth", ort.get("max_depth"), nrt.get("max_depth")))
    ol, nl = ort.get("usage_limits") or {}, nrt.get("usage_limits") or {}
    for key in sorted(set(ol) | set(nl)):
        if ol.get(key) != nl.get(key):
            out.append(_limit_change(f"usage_limits.{key}", ol.get(key), nl.get(key)))
    od, nd = old.get("defaults") or {}, new.get("defaults") or {}
    if od.get("model") != nd.get("model"):
        out.append(Change("medium", "changed", "model", "default model", od.get("model"), nd.get("model")))
    if od.get("model_settings") != nd.get("model_settings"):
        out.append(Change("low", "changed", "setting", "default model_settings", text_of(od.get("model_settings")),
                          text_of(nd.get("model_settings"))))
    if (old.get("packages") or {}) != (new.get("packages") or {}):
        op, np_ = old.get("packages") or {}, new.get("packages") or {}
        for pkg in sorted(set(op) | set(np_)):
            if op.get(pkg) != np_.get(pkg):
                verb: Verb = "added" if pkg not in op else "removed" if pkg not in np_ else "changed"
                out.append(Change("low", verb, "project", f"package {pkg}", op.get(pkg), np_.get(pkg)))
    return out


def _mcp_changes(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """MCP servers added or removed, their connection (command, args, env, url, headers as
    written) or the project files they run changed, their locked tools added, removed or given
    another schema."""
    om = {k: n for k, n in old.items() if n.get("kind") == "mcp"}
    nm = {k: n for k, n in new.items() if n.get("kind") == "mcp"}
    out: list[Change] = []
    for name in sorted(set(nm) - set(om)):
        out.append(Change("medium", "added", "mcp", f"MCP server {name}", None, _connection_text(nm[name])))
    for name in sorted(set(om) - set(nm)):
        out.append(Change("low", "removed", "mcp", f"MCP server {name}", _connection_text(om[name]), None))
    for name in sorted(set(om) & set(nm)):
        before, after = om[name], nm[name]
        if before.get("hash") == after.get("hash"):
            continue
        bs, as_ = before.get("server") or {}, after.get("server") or {}
        for key in ("command", "args", "env", "url", "headers"):
            if bs.get(key) != as_.get(key):
                out.append(Change("medium", "changed", "mcp", f"{key} of MCP server {name}", text_of(bs.get(key)), text_of(as_.get(key))))
        for key in ("prefix", "required", "opaque"):
            if before.get(key) != after.get(key):
                out.append(Change("low", "changed", "mcp", f"{key} of MCP server {name}", text_of(before.get(key)),
                                  text_of(after.get(key))))
        bf, af = before.get("sources") or {}, after.get("sources") or {}
        for rel in sorted(set(bf) | set(af)):  # the project files the server runs: its code
            if bf.get(rel) != af.get(rel):
                verb: Verb = "added" if rel not in bf else "removed" if rel not in af else "changed"
                out.append(Change("medium", verb, "mcp", f"code of MCP server {name}: {rel}",
                                  bf.get(rel), af.get(rel)))
        bt, at = before.get("tools") or {}, after.get("tools") or {}
        for tool in sorted(set(at) - set(bt)):
            out.append(Change("medium", "added", "mcp", f"tool {tool} of MCP server {name}", None, at[tool].get("description")))
        for tool in sorted(set(bt) - set(at)):
            out.append(Change("low", "removed", "mcp", f"tool {tool} of MCP server {name}", bt[tool].get("description"), None))
        for tool in sorted(set(bt) & set(at)):
            if bt[tool].get("description") != at[tool].get("description"):
                out.append(Change("medium", "changed", "instructions", f"description of tool {tool} of MCP server {name}",
                                  note="read by the model", detail=text_diff(bt[tool].get("description") or "",
                                                                            at[tool].get("description") or "")))
            if bt[tool].get("parameters") != at[tool].get("parameters"):
                fields = field_changes(bt[tool].get("parameters") or {}, at[tool].get("parameters") or {})
                breaking = any(f.breaking for f in fields)
                out.append(Change("medium" if breaking else "low", "changed", "mcp",
                                  f"input schema of tool {tool} of MCP server {name}", note="breaking" if breaking else None,
                                  detail=[f.text() for f in fields] or ["descriptions or titles"]))
    return out


def _connection_text(node: dict[str, Any]) -> str:
    server = node.get("server") or {}
    return server.get("url") or " ".join([server.get("command") or "", *(server.get("args") or ())])


def _limit_change(name: str, before: Any, after: Any) -> Change:
    """A limit raised or removed lets a run do more (medium); lowered or added, less (low)."""
    if before is not None and after is not None and isinstance(before, int | float) and isinstance(after, int | float):
        wider = after > before
    elif isinstance(before, bool) or isinstance(after, bool):
        wider = False
    else:
        wider = after is None  # a limit removed
    return Change("medium" if wider else "low", "widened" if wider else "narrowed", "project", name,
                  text_of(before), text_of(after))


# --- one worker


def _worker_changes(name: str, old: WorkerNode, new: WorkerNode, old_doc: dict, new_doc: dict, called: bool) -> list[Change]:
    """`called`: some worker calls it, so its description is what that worker's model reads."""
    out: list[Change] = []
    settings: tuple[tuple[str, Severity], ...] = (
        ("model", "medium"), ("compatible_models", "medium"), ("model_settings", "low"),
        ("recursive", "medium"), ("attachments", "low"), ("server_side_tools", "medium"))
    if old.get("description") != new.get("description"):
        before, after = old.get("description"), new.get("description")
        out.append(Change("medium", "changed", "instructions", f"description of worker {name}", worker=name,
                          note="read by the model of every caller", detail=text_diff(before or "", after or ""))
                   if called else Change("low", "changed", "setting", f"description of {name}", before, after, worker=name))
    for key, severity in settings:
        if old.get(key) != new.get(key):
            area: Area = "model" if key in ("model", "compatible_models") else "setting"
            out.append(Change(severity, "changed", area, f"{key} of {name}", text_of(old.get(key)), text_of(new.get(key)),
                              worker=name))
    if old.get("instructions") != new.get("instructions"):
        out.append(Change("medium", "changed", "instructions", f"instructions of {name}", worker=name,
                          detail=text_diff(old.get("instructions") or "", new.get("instructions") or "")))
    for change in (_schema_change(name, "input", old.get("input"), new.get("input")),
                   _schema_change(name, "output", old.get("output"), new.get("output"))):
        if change is not None:
            out.append(change)
    out += _approval_changes(name, old, new, old_doc, new_doc)
    out += _settings_changes(name, old, new)
    return out


def _schema_change(name: str, key: str, old: SchemaNode | None, new: SchemaNode | None) -> Change | None:
    if old == new:
        return None
    subject = f"{key} schema of {name}"
    if old is None or new is None:
        return Change("medium", "changed", "schema", subject, "text" if old is None else old.get("ref") or "PromptInput",
                      "text" if new is None else new.get("ref") or "PromptInput", worker=name, note="breaking")
    fields = field_changes(old.get("json_schema") or {}, new.get("json_schema") or {})
    breaking = any(f.breaking for f in fields)
    before, after = old.get("ref") or "PromptInput", new.get("ref") or "PromptInput"
    if not fields and before == after and (old.get("module"), old.get("qualname")) == (new.get("module"), new.get("qualname")):
        return Change("low", "changed", "schema", subject, worker=name, detail=["descriptions or titles"])
    return Change("medium" if breaking else "low", "changed", "schema", subject, before, after, worker=name,
                  note="breaking" if breaking else None, detail=[f.text() for f in fields])


def _approval(binding: WorkerTool | None) -> str | None:
    if binding is None:
        return None
    return "conditional" if binding.get("rules") else binding.get("approval")


def _rules_text(doc: dict, node: WorkerNode, binding: WorkerTool) -> str:
    """The rules, with the root their path conditions see (a changed `path` changes what they mean)."""
    paths_in = rules_see_paths_in(doc.get("toolsets") or {}, node, binding.get("toolset"))
    return rules_text([r.get("text", "") for r in binding.get("rules") or ()], paths_in)


def _approval_changes(name: str, old: WorkerNode, new: WorkerNode, old_doc: dict, new_doc: dict) -> list[Change]:
    out: list[Change] = []
    ot, nt = old.get("tools") or {}, new.get("tools") or {}
    for tool in sorted(set(ot) & set(nt)):
        a, b = _approval(ot[tool]), _approval(nt[tool])
        before = _rules_text(old_doc, old, ot[tool]) if a == "conditional" else a
        after = _rules_text(new_doc, new, nt[tool]) if b == "conditional" else b
        if a == b and (a != "conditional" or before == after):
            continue
        subject = f"approval of {name}.{tool}"
        if a == b or a not in STRICTNESS or b not in STRICTNESS:
            out.append(Change("medium", "changed", "approval", subject, before, after, worker=name, gate=b))
            continue
        relaxed = STRICTNESS.index(b) < STRICTNESS.index(a)
        risky = b == ALLOW and _side_effect_tool(new, tool)
        out.append(Change("high" if relaxed and risky else "medium" if relaxed else "low",
                          "widened" if relaxed else "narrowed", "approval", subject, before, after, worker=name,
                          note="relaxed" if relaxed else "tightened", gate=b))
    oo = {u.toolset: u.opaque_approval for u in used_toolsets(old) if u.toolset and u.opaque_approval}
    no = {u.toolset: u.opaque_approval for u in used_toolsets(new) if u.toolset and u.opaque_approval}
    for key in sorted(set(oo) & set(no)):
        a, b = oo[key], no[key]
        if a != b and a in STRICTNESS and b in STRICTNESS:
            relaxed = STRICTNESS.index(b) < STRICTNESS.index(a)
            out.append(Change("high" if relaxed and b == ALLOW else "medium" if relaxed else "low",
                              "widened" if relaxed else "narrowed", "approval", f"approval of {name}.{key} (opaque)",
                              a, b, worker=name, note="relaxed" if relaxed else "tightened", gate=b))
    return out


def _side_effect_tool(node: WorkerNode, tool: str) -> bool:
    return any(g.get("tool") == tool and is_side_effect(g["capability"]) for g in node.get("capabilities") or ())


def _settings_changes(name: str, old: WorkerNode, new: WorkerNode) -> list[Change]:
    """Settings of a toolset both versions use that are not a capability's scope (timeouts, sizes)."""
    def settings(node: WorkerNode) -> dict[str, dict]:
        return {u.toolset: {k: v for k, v in u.settings.items() if k not in SCOPE_SETTINGS}
                for u in used_toolsets(node) if u.toolset}

    os_, ns = settings(old), settings(new)
    out = []
    for key in sorted(set(os_) & set(ns)):
        if os_[key] != ns[key]:
            out.append(Change("low", "changed", "setting", f"settings of {key} in {name}", text_of(os_[key]), text_of(ns[key]),
                              worker=name))
    return out


# --- capabilities, transitively


def _callers_of(workers: set[str], edges: list[tuple[str, str]]) -> set[str]:
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


def _capability_changes(old: Analysis, new: Analysis, both: set[str], added_workers: set[str]) -> list[Change]:
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
                out.append(_reach_change(worker, "widened", reach, wider_than, cap))
            elif narrower_than is not None:
                paired.add(narrower_than)
                out.append(_reach_change(worker, "narrowed", reach, narrower_than, cap))
            else:
                out.append(_reach_change(worker, "added", reach, None, cap))
        for cap in lost:
            if cap not in paired:
                reach = old.reach(worker, cap)
                assert reach is not None
                out.append(Change("low", "removed", "capability", f"{cap} of {worker}", _reach_text(reach), None,
                                  worker=worker, note=via_text(reach), capability=cap, gate=reach.gate))
        for cap in sorted(before & after):
            a, b = old.reach(worker, cap), new.reach(worker, cap)
            assert a is not None and b is not None
            if a.gate != b.gate:
                relaxed = GATES.index(b.gate) < GATES.index(a.gate)
                risky = relaxed and b.gate == ALLOW and is_side_effect(cap)
                out.append(Change("high" if risky else "medium" if relaxed else "low",
                                  "widened" if relaxed else "narrowed", "capability", f"{cap} of {worker}",
                                  _reach_text(a), _reach_text(b), worker=worker,
                                  note="approval relaxed" if relaxed else "approval tightened", capability=cap, gate=b.gate))
    return out


def _reach_text(reach: Reach) -> str:
    return f"via {via_text(reach)} [{gate_text(reach)}]"


def _reach_change(worker: str, verb: Verb, reach: Reach, before: str | None, cap: str) -> Change:
    severity: Severity
    if verb == "narrowed":
        severity = "low"
    elif is_side_effect(cap):
        severity = "high" if reach.gate == ALLOW else "medium"
    else:
        severity = "medium" if kind_of(cap) == "env" else "low"
    path = " -> ".join(reach.path)
    after = _reach_text(reach) if verb == "added" else f"{cap} {_reach_text(reach)}"
    return Change(severity, verb, "capability", f"{cap} of {worker}", before, after, worker=worker, note=f"path {path}",
                  capability=cap, gate=reach.gate)

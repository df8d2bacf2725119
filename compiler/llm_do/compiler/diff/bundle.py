"""What a change makes a project able to do: two bundle documents compared by meaning.

Pure: two documents in, a list of `Change` out (spec/diff.md). Workers whose node `hash` is equal
are skipped; only changed nodes are descended into, and the capability analysis runs only when
some worker changed. What does not change meaning is not a change: a worker file moved
(`source`), `sources`, `digest`, `root`, the compiler's version, key order and formatting, rules
written differently, trailing whitespace in instructions. Transitive capabilities are compared
in `diff.capabilities`.

Every change has a severity (`high`, `medium`, `low`), a verb (`added`, `widened`, `narrowed`,
`removed`, `changed`), a subject, and before/after. High: a side effect gained, or made less
gated, with no approval on its path; a call of a side-effect tool that now runs unasked
(`rule_effects` says which calls); an entry that reaches an unasked side effect; a run's
approval mode relaxed. Medium: everything that lets
the project do more or differently (gated side effects, new calls, models, instructions,
breaking schema changes, relaxed approvals). Low: what only takes something away or is cosmetic.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field, replace
from typing import Any

from llm_do.bundle.errors import LlmDoError
from llm_do.bundle.model import SchemaNode, WorkerNode, WorkerTool
from llm_do.bundle.views import call_edges, entry_name, used_toolsets

from ..analysis.capabilities import ALLOW, Analysis, analyse, declares_only_reads, is_side_effect, views_of_bundle
from ..analysis.reach_text import rules_text, via_text
from ..analysis.rule_effects import Shift, same_rules, shifts
from ..analysis.rule_roots import rules_see_paths_in
from .capabilities import callers_of, capability_changes
from .change import (
    AREAS,
    SEVERITIES,
    Area,
    Change,
    Severity,
    Verb,
    changed_lines,
    edit_cause,
    shortened,
    text_diff,
    text_of,
)
from .code import code_changes
from .cost import cost_changes
from .flows import flow_changes
from .mcp import mcp_changes
from .positions import position
from .schemas import described, field_changes
from .unread_sides import Unread

__all__ = ["AREAS", "SEVERITIES", "Area", "BundleDiff", "Change", "Incomparable", "Severity", "Verb", "diff_bundles", "placed"]
"""`Change` and its vocabulary live in `diff.change`; they are named here too, for the renderers."""

STRICTNESS = ("allow", "auto", "ask", "deny")
"""Approvals from the most to the least permissive."""
MODE_STRICTNESS = ("approve_all", "prompt", "reject_all")
DESCRIPTIONS_ONLY = "descriptions or titles"
"""The detail of a schema change that changed no field's shape."""
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
    changes += mcp_changes(old.get("toolsets") or {}, new.get("toolsets") or {})
    ow, nw = old["workers"], new["workers"]
    changed = sorted(n for n in set(ow) & set(nw) if ow[n].get("hash") != nw[n].get("hash"))
    for name in sorted(set(nw) - set(ow)):
        changes.append(Change("medium", "added", "worker", f"worker {name}", None, nw[name].get("description"),
                              worker=name, at=f"worker:{name}"))
    for name in sorted(set(ow) - set(nw)):
        changes.append(Change("low", "removed", "worker", f"worker {name}", ow[name].get("description"), None,
                              worker=name, at=f"worker:{name}"))
    old_edges, new_edges = _edges(old), _edges(new)
    called = {v for _, v in new_edges}
    for name in changed:
        changes += _worker_changes(name, ow[name], nw[name], old, new, name in called)
    changes += code_changes(old, new)
    added = sorted(set(new_edges) - set(old_edges))
    removed = sorted(set(old_edges) - set(new_edges))
    def call_at(u: str, v: str) -> str:
        return f"call:{u}:{v}" if u in ow or u in nw else "project:entry"

    changes += [Change("medium", "added", "call", f"call {u} -> {v}", worker=u, at=call_at(u, v)) for u, v in added]
    changes += [Change("low", "removed", "call", f"call {u} -> {v}", worker=u, at=call_at(u, v)) for u, v in removed]
    touched = set(changed) | (set(ow) ^ set(nw))
    functions = {entry_name(old["entry"]), entry_name(new["entry"])} - set(ow) - set(nw)
    """The entry functions' labels (an entry worker's name is among the workers)."""
    both = set(ow) & set(nw) | ({entry_name(old["entry"])} & {entry_name(new["entry"])} & functions)
    if old["entry"].get("function") != new["entry"].get("function"):
        touched |= functions
    views = views_of_bundle(old), views_of_bundle(new)  # read once, for capabilities and flows
    analyses = None
    if touched:
        affected = callers_of(touched, old_edges) | callers_of(touched, new_edges)
        added_nodes = (set(nw) - set(ow)) | ({entry_name(new["entry"])} & functions) - both
        analyses = Analysis(views[0]), Analysis(views[1])
        changes += capability_changes(*analyses, affected & both, added_nodes,
                                      lambda w: w in ow and w in nw and models_cover(_models(nw[w]), _models(ow[w])))
    changes += flow_changes(old, new, views, analyses)
    changes += cost_changes(old, new)
    changes = [placed(c, old, new) for c in changes]
    return BundleDiff(sorted(changes, key=Change.sort_key), added, removed, old_edges, new_edges)


def placed(change: Change, old: dict[str, Any], new: dict[str, Any]) -> Change:
    """The change with the file and line of its cause (`Change.at`), on the new side unless it is
    removed; without positions (a bundle.lock), its worker's file, else project.json for what the
    project configures, and no line."""
    sides = (old, new) if change.verb == "removed" else (new, old)
    found = position(sides[0], change.at) or position(sides[1], change.at)
    if found is not None:
        return replace(change, file=found[0], line=found[1])
    if change.file is not None:
        return change
    if change.worker is not None:
        node = new["workers"].get(change.worker) or old["workers"].get(change.worker) or {}
        return replace(change, file=node.get("source"))
    return replace(change, file="project.json") if change.area in ("project", "mcp") else change


# --- the project


def _edges(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """Every call edge: the workers' and the entry function's (from its label)."""
    return sorted((edge.caller, edge.callee) for edge in call_edges(doc["workers"], doc.get("entry")))


def _entry(entry: dict[str, Any]) -> dict[str, Any]:
    """The entry as compared: an entry function's calls are call edges, its code is compared by
    `diff.code`, its hash has no meaning."""
    function = entry.get("function")
    if not function:
        return entry
    kept = {k: v for k, v in function.items() if k not in ("calls", "hash", "input", "source", "code")}
    return {**entry, "function": {**kept, "input": function["input"].get("qualname")}}


def _project_changes(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    out: list[Change] = []
    if _entry(old["entry"]) != _entry(new["entry"]):
        out.append(_entry_change(old, new))
    ort, nrt = old.get("runtime") or {}, new.get("runtime") or {}
    om, nm = ort.get("approval_mode"), nrt.get("approval_mode")
    if om != nm:
        wider = MODE_STRICTNESS.index(nm) < MODE_STRICTNESS.index(om) if om in MODE_STRICTNESS and nm in MODE_STRICTNESS else False
        out.append(Change("high" if wider else "low", "widened" if wider else "narrowed", "project", "approval_mode", om, nm,
                          note="relaxed" if wider else "tightened", at="project:runtime.approval_mode"))
    if ort.get("max_depth") != nrt.get("max_depth"):
        out.append(_limit_change("max_depth", ort.get("max_depth"), nrt.get("max_depth")))
    ol, nl = ort.get("usage_limits") or {}, nrt.get("usage_limits") or {}
    for key in sorted(set(ol) | set(nl)):
        if ol.get(key) != nl.get(key):
            out.append(_limit_change(f"usage_limits.{key}", ol.get(key), nl.get(key)))
    od, nd = old.get("defaults") or {}, new.get("defaults") or {}
    if od.get("model") != nd.get("model"):
        out.append(Change("medium", "changed", "model", "default model", od.get("model"), nd.get("model"),
                          at="project:defaults.model"))
    if od.get("model_settings") != nd.get("model_settings"):
        out.append(Change("low", "changed", "setting", "default model_settings", text_of(od.get("model_settings")),
                          text_of(nd.get("model_settings")), at="project:defaults.model_settings"))
    if (old.get("packages") or {}) != (new.get("packages") or {}):
        op, np_ = old.get("packages") or {}, new.get("packages") or {}
        for pkg in sorted(set(op) | set(np_)):
            if op.get(pkg) != np_.get(pkg):
                verb: Verb = "added" if pkg not in op else "removed" if pkg not in np_ else "changed"
                out.append(Change("low", verb, "project", f"package {pkg}", op.get(pkg), np_.get(pkg)))
    return out


def _entry_change(old: dict[str, Any], new: dict[str, Any]) -> Change:
    """The entry by name (`writer`, `flow.py:main`); high when the new one reaches a side effect
    with no approval on its path, as a run started there would."""
    a, b = old["entry"], new["entry"]
    detail = [f"args: {text_of(a.get('args'))} -> {text_of(b.get('args'))}"] if a.get("args") != b.get("args") else []
    analysis, entry = analyse(new), entry_name(new["entry"])
    unasked = [r for r in analysis.reaches(entry) if r.gate == ALLOW and analysis.side_effect(r.capability)]
    detail += [f"runs {r.capability} with no approval via {via_text(r)}" for r in unasked[:10]]
    return Change("high" if unasked else "medium", "changed", "project", "entry", entry_name(old["entry"]), entry, detail=detail,
                  at="project:entry")


def _limit_change(name: str, before: Any, after: Any) -> Change:
    """A limit raised or removed lets a run do more (medium); lowered or added, less (low)."""
    if before is not None and after is not None and isinstance(before, int | float) and isinstance(after, int | float):
        wider = after > before
    elif isinstance(before, bool) or isinstance(after, bool):
        wider = False
    else:
        wider = after is None  # a limit removed
    return Change("medium" if wider else "low", "widened" if wider else "narrowed", "project", name,
                  text_of(before), text_of(after), at=f"project:runtime.{name}")


# --- one worker


def _worker_changes(name: str, old: WorkerNode, new: WorkerNode, old_doc: dict[str, Any], new_doc: dict[str, Any], called: bool) -> list[Change]:
    """`called`: some worker calls it, so its description is what that worker's model reads."""
    out: list[Change] = []
    settings: tuple[tuple[str, Severity], ...] = (
        ("model", "medium"), ("compatible_models", "medium"), ("model_settings", "low"),
        ("recursive", "medium"), ("attachments", "low"), ("server_side_tools", "medium"))
    if old.get("description") != new.get("description"):
        before, after = old.get("description"), new.get("description")
        out.append(Change("medium", "changed", "instructions", f"description of worker {name}", worker=name,
                          note="read by the model of every caller", detail=text_diff(before or "", after or ""),
                          at=f"worker:{name}:description")
                   if called else Change("low", "changed", "setting", f"description of {name}", before, after, worker=name,
                                         at=f"worker:{name}:description"))
    if _models(old) != _models(new):
        out.append(_models_change(name, old, new))
    for key, severity in settings:
        if key in ("model", "compatible_models"):
            continue
        if old.get(key) != new.get(key):
            area: Area = "model" if key in ("model", "compatible_models") else "setting"
            out.append(Change(severity, "changed", area, f"{key} of {name}", text_of(old.get(key)), text_of(new.get(key)),
                              worker=name, at=f"worker:{name}:{key}"))
    if _lines(old.get("instructions")) != _lines(new.get("instructions")):
        lines = changed_lines(old.get("instructions") or "", new.get("instructions") or "")
        out.append(Change("medium", "changed", "instructions", f"instructions of {name}", worker=name, detail=shortened(lines),
                          cause=edit_cause(lines, name), at=f"worker:{name}:instructions"))
    for key, side, a, b in (("schema_in_ref", "input", old.get("input"), new.get("input")),
                            ("schema_out_ref", "output", old.get("output"), new.get("output"))):
        change = _schema_change(name, side, a, b)
        texts = _schema_texts_change(name, side, a, b, called)
        if texts is not None:
            out.append(replace(texts, at=f"worker:{name}:{key}"))
        if change is not None and not (texts is not None and change.detail == [DESCRIPTIONS_ONLY]):
            out.append(replace(change, at=f"worker:{name}:{key}"))
    if bool(old.get("quarantined")) != bool(new.get("quarantined")):
        out.append(_quarantine_change(name, bool(new.get("quarantined"))))
    out += _approval_changes(name, old, new, old_doc, new_doc)
    out += _settings_changes(name, old, new)
    return out


def _quarantine_change(name: str, now: bool) -> Change:
    """A worker quarantined or no longer: ceasing lets its callers' models read its words (and take
    in what it took in) where they got a reference, so it widens (medium); becoming one narrows (low)."""
    states = ("not quarantined", "quarantined")
    if now:
        return Change("low", "narrowed", "flow", f"quarantine of {name}", states[0], states[1], worker=name,
                      note="its callers' models get a reference to its output, never its words", at=f"worker:{name}:quarantined")
    return Change("medium", "widened", "flow", f"quarantine of {name}", states[1], states[0], worker=name,
                  note="its callers' models now read its words and take in what it took in", at=f"worker:{name}:quarantined")


def _models(node: WorkerNode) -> list[str]:
    """The models or patterns a worker may run on (`*` when it names none: the project default)."""
    model = node.get("model")
    return [model] if model else list(node.get("compatible_models") or ["*"])


def models_cover(wide: list[str], narrow: list[str]) -> bool:
    """Whether every model or pattern in `narrow` is one some pattern in `wide` matches."""
    return all(any(fnmatch.fnmatchcase(n, w) for w in wide) for n in narrow)


def _models_change(name: str, old: WorkerNode, new: WorkerNode) -> Change:
    """`model` or `compatible_models` by what they let a run choose: `openai:*` -> `*` widens."""
    a, b = _models(old), _models(new)
    wider, narrower = models_cover(b, a), models_cover(a, b)
    verb: Verb = "widened" if wider and not narrower else "narrowed" if narrower and not wider else "changed"
    key = "model" if old.get("model") and new.get("model") else "compatible_models"
    before = old.get("model") or text_of(old.get("compatible_models"))
    after = new.get("model") or text_of(new.get("compatible_models"))
    fixed = bool(old.get("model") or new.get("model"))  # a fixed model changed is another provider, whatever the patterns
    return Change("low" if verb == "narrowed" and not fixed else "medium", verb, "model", f"{key} of {name}", before, after,
                  worker=name, at=f"worker:{name}:{'model' if new.get('model') else 'compatible_models'}")


def _lines(text: str | None) -> list[str]:
    """A text as compared: trailing whitespace on a line means nothing to a model."""
    return [line.rstrip() for line in (text or "").rstrip().splitlines()]


def _schema_texts_change(name: str, key: str, old: SchemaNode | None, new: SchemaNode | None, called: bool) -> Change | None:
    """The descriptions of a schema's fields, when a model reads them: an output's by the worker's
    own model (the schema of its final answer), an input's by every caller's model (the
    parameters of the call); an input nobody calls is read by no model."""
    before = described(old.get("json_schema") or {}) if old else []
    after = described(new.get("json_schema") or {}) if new else []
    if before == after or (key == "input" and not called):
        return None
    reader = "the model of every caller" if key == "input" else f"the model of {name}"
    return Change("medium", "changed", "instructions", f"field descriptions of {key} schema of {name}", worker=name,
                  note=f"read by {reader}", detail=text_diff("\n".join(before), "\n".join(after)))


def _schema_change(name: str, key: str, old: SchemaNode | None, new: SchemaNode | None) -> Change | None:
    if old == new:
        return None
    subject = f"{key} schema of {name}"
    if old is None or new is None:
        return Change("medium", "changed", "schema", subject, "text" if old is None else old.get("ref") or "PromptInput",
                      "text" if new is None else new.get("ref") or "PromptInput", worker=name, note="breaking")
    fields = field_changes(old.get("json_schema") or {}, new.get("json_schema") or {}, "input" if key == "input" else "output")
    breaking = any(f.breaking for f in fields)
    before, after = old.get("ref") or "PromptInput", new.get("ref") or "PromptInput"
    if not fields and before == after and (old.get("module"), old.get("qualname")) == (new.get("module"), new.get("qualname")):
        return Change("low", "changed", "schema", subject, worker=name, detail=[DESCRIPTIONS_ONLY])
    return Change("medium" if breaking else "low", "changed", "schema", subject, before, after, worker=name,
                  note="breaking" if breaking else None, detail=[f.text() for f in fields])


def _approval(binding: WorkerTool | None) -> str | None:
    if binding is None:
        return None
    return "conditional" if binding.get("rules") else binding.get("approval")


def _paths_in(doc: dict[str, Any], node: WorkerNode, binding: WorkerTool) -> str | None:
    return rules_see_paths_in(doc.get("toolsets") or {}, node, binding.get("toolset"))


def _approval_text(doc: dict[str, Any], node: WorkerNode, binding: WorkerTool) -> str | None:
    """The approval, or the rules with the root their path conditions see (a changed `path`
    changes what they mean)."""
    if _approval(binding) != "conditional":
        return _approval(binding)
    return rules_text([r.get("text", "") for r in binding.get("rules") or ()], _paths_in(doc, node, binding))


def _approval_change(worker: str, tool: str, before: str | None, after: str | None, found: list[Shift] | None,
                     side_effect: bool, gate: str | None) -> Change:
    """Said by its effects: relaxed when some call is now decided more permissively (high when a
    side-effect tool now runs unasked for it), even when others are tightened; else tightened."""
    subject = f"approval of {worker}.{tool}"
    at = f"rule:{worker}:{tool}"
    if not found:  # too many calls to try, or rewritten rules no call tells apart
        return Change("medium", "changed", "approval", subject, before, after, worker=worker, gate=gate, cause=f"{worker}.{tool}",
                      at=at)
    relaxed = [s for s in found if s.relaxed]
    risky = side_effect and any(s.after == ALLOW for s in relaxed)
    severity: Severity = "high" if risky else "medium" if relaxed else "low"
    verb: Verb = "widened" if relaxed else "narrowed"
    note = ("relaxed and tightened" if len(relaxed) < len(found) else "relaxed") if relaxed else "tightened"
    return Change(severity, verb, "approval", subject, before, after, worker=worker, note=note,
                  detail=[s.text() for s in found], gate=gate, cause=f"{worker}.{tool}", at=at)


def _approval_changes(name: str, old: WorkerNode, new: WorkerNode, old_doc: dict[str, Any], new_doc: dict[str, Any]) -> list[Change]:
    out: list[Change] = []
    ot, nt = old.get("tools") or {}, new.get("tools") or {}
    for tool in sorted(set(ot) & set(nt)):
        before, after = _approval_text(old_doc, old, ot[tool]), _approval_text(new_doc, new, nt[tool])
        if before == after or (_approval(ot[tool]) == _approval(nt[tool]) == "conditional" and same_rules(ot[tool], nt[tool])
                               and _paths_in(old_doc, old, ot[tool]) == _paths_in(new_doc, new, nt[tool])):
            continue
        out.append(_approval_change(name, tool, before, after, shifts(tool, ot[tool], nt[tool]),
                                    _side_effect_tool(new, tool), _approval(nt[tool])))
    oo = {u.toolset: u.opaque_approval for u in used_toolsets(old) if u.toolset and u.opaque_approval}
    no = {u.toolset: u.opaque_approval for u in used_toolsets(new) if u.toolset and u.opaque_approval}
    for key in sorted(set(oo) & set(no)):
        a, b = oo[key], no[key]
        if a != b and a in STRICTNESS and b in STRICTNESS:
            relaxed = STRICTNESS.index(b) < STRICTNESS.index(a)
            out.append(Change("high" if relaxed and b == ALLOW else "medium" if relaxed else "low",
                              "widened" if relaxed else "narrowed", "approval", f"approval of {name}.{key} (opaque)",
                              a, b, worker=name, note="relaxed" if relaxed else "tightened", gate=b, at=f"toolset:{name}:{key}"))
    return out


def _side_effect_tool(node: WorkerNode, tool: str) -> bool:
    own = [g["capability"] for g in node.get("capabilities") or () if g.get("tool") == tool]
    return any(is_side_effect(c) for c in own) and not declares_only_reads(tool, own)


def _settings_changes(name: str, old: WorkerNode, new: WorkerNode) -> list[Change]:
    """Settings of a toolset both versions use that are not a capability's scope (timeouts, sizes)."""
    def settings(node: WorkerNode) -> dict[str, dict[str, Any]]:
        return {u.toolset: {k: v for k, v in u.settings.items() if k not in SCOPE_SETTINGS}
                for u in used_toolsets(node) if u.toolset}

    os_, ns = settings(old), settings(new)
    out = []
    for key in sorted(set(os_) & set(ns)):
        if os_[key] != ns[key]:
            out.append(Change("low", "changed", "setting", f"settings of {key} in {name}", text_of(os_[key]), text_of(ns[key]),
                              worker=name, at=f"toolset:{name}:{key}"))
    return out

"""Labels narrowed by approval rules: a stdlib file tool whose calls are asked (or denied) except
where a conditional `allow` lets them through has, unasked, only the labels of the folders those
conditions confine the path to (spec/language.md, "Labels"); a tool that says where it sends
(`to:PARAM`) is no egress in the calls a conditional `allow` lets through when that rule holds the
parameter (every element of it, for a list of recipients) to values it names (known destinations).

`ask write_file` + `allow write_file(path ~ 'drafts/**')` writes unasked only below drafts/, so
its unasked writes are no egress even when the toolset's root holds a published folder; a write
into that folder is asked. Only conditions that provably confine the `path` parameter are read
(`path ~ 'GLOB'`, `path == 'P'`, `path in [...]`, their `or`, an `and` with one of them); any other
allow rule, or an approval without a condition that is not `ask`/`deny`, narrows nothing. `ask`
and `deny` rules with a condition only take calls away from the allowed ones, so leaving them out
errs on the safe side.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from llm_do.bundle.approval import ALLOW, ASK, DENY, EVERY_ELEMENT
from llm_do.bundle.flow import EGRESS

from ...approvals.nodes import ApprovalRule, Compare, Condition, Junction
from .labels import LabelPolicy, labels_of, normalized_folder

PATH_PARAM = ("path",)
WILDCARDS = ("*", "?")
NARROWED_KINDS = ("fs.read", "fs.write")
DESTINATION_KIND = "to"
"""`to:PARAM` in a Python tool's `CAPABILITIES`: PARAM says where the tool sends."""
PINNING_OPS = ("==", "in", "glob")


def allowed_folders(rules: Sequence[ApprovalRule], approval: str) -> list[str] | None:
    """The folders, relative to the toolset's root (`.`: all of it), that the path of every call
    the rules let through unasked is in; None when such a call may have any path. `approval`: what
    a call gets when no conditional rule matches (the rules without a condition, or the default)."""
    if approval not in (ASK, DENY):
        return None
    out: list[str] = []
    for rule in rules:
        if rule.condition is None or rule.action != ALLOW:
            continue  # decided by `approval`, or takes calls away from the allowed ones
        folders = _folders(rule.condition)
        if folders is None:
            return None
        out += folders
    return out


def _folders(condition: Condition) -> list[str] | None:
    if isinstance(condition, Compare):
        if condition.param.path != PATH_PARAM:
            return None
        values = condition.value if condition.op == "in" else (condition.value,)
        if condition.op not in ("glob", "==", "in") or not all(isinstance(v, str) for v in values):
            return None
        found = [_folder(v, exact=condition.op != "glob") for v in values]
        return None if any(f is None for f in found) else [f for f in found if f is not None]
    if isinstance(condition, Junction):
        parts = [_folders(arg) for arg in condition.args]
        if condition.op == "and":  # a call it allows passes every part: the first known one confines it
            return next((p for p in parts if p is not None), None)
        return None if any(p is None for p in parts) else [f for p in parts if p is not None for f in p]
    return None  # `not`: what it leaves may be anywhere


def _folder(glob: str, *, exact: bool) -> str | None:
    """The folder a glob (or an exact path) keeps a path in: its segments before the first with a
    wildcard. None for a glob no normalized path matches the way it reads (absolute, `.`, `..`)."""
    segments = glob.split("/")
    if glob.startswith("/") or any(s in (".", "..") for s in segments):
        return None
    kept: list[str] = []
    for segment in segments:
        if not exact and any(w in segment for w in WILDCARDS):
            break
        kept.append(segment)
    return normalized_folder("/".join(kept))


def narrowed_labels(capability: str, folders: Iterable[str], policy: LabelPolicy) -> frozenset[str]:
    """The labels of a stdlib file capability (`fs.write:project/site/**`) confined to `folders`
    relative to its root: those of each folder's scope (`fs.write:project/site/drafts/**`)."""
    kind, _, scope = capability.partition(":")
    head = scope.split("/**", 1)[0]
    out: set[str] = set()
    for folder in folders:
        out |= labels_of(f"{kind}:{head}/**" if folder == "." else f"{kind}:{head}/{folder}/**", policy, stdlib=True)
    return frozenset(out)


def conditional_labels(capability: str, labels: frozenset[str], rules: Sequence[ApprovalRule], approval: str,
                       policy: LabelPolicy) -> frozenset[str] | None:
    """The labels of the calls a tool's conditional rules let through unasked, when fewer than
    `labels` (the grant's); None when the rules narrow nothing."""
    if not labels or capability.partition(":")[0] not in NARROWED_KINDS:
        return None
    folders = allowed_folders(rules, approval)
    if folders is None:
        return None
    narrowed = narrowed_labels(capability, folders, policy) & labels
    return narrowed if narrowed != labels else None


def destinations(declared: Iterable[str]) -> tuple[str, ...]:
    """The parameters a tool's declaration says it sends to (`to:recipient`)."""
    return tuple(sorted({c.partition(":")[2] for c in declared if c.partition(":")[0] == DESTINATION_KIND}))


def pins(condition: Condition, param: str) -> bool:
    """Whether every call the condition holds for has `param` among values the condition names:
    `param == V`, `param in [...]`, `param ~ 'GLOB'`, the same of every element of a list
    (`param[all] ~ 'GLOB'`), an `and` with one of them, an `or` of them. `param[*]` names one element
    and leaves the others anywhere: it pins nothing."""
    if isinstance(condition, Compare):
        return condition.param.path in ((param,), (param, EVERY_ELEMENT)) and condition.op in PINNING_OPS
    if isinstance(condition, Junction):
        parts = [pins(arg, param) for arg in condition.args]
        return any(parts) if condition.op == "and" else all(parts)
    return False


def confining_rules(rules: Sequence[ApprovalRule], params: Sequence[str]) -> list[int]:
    """The `allow` rules (their indexes in `rules`) whose conditions pin every destination parameter."""
    if not params:
        return []
    return [i for i, r in enumerate(rules)
            if r.action == ALLOW and r.condition is not None and all(pins(r.condition, p) for p in params)]


def destination_labels(labels: frozenset[str], rules: Sequence[ApprovalRule], approval: str,
                       params: Sequence[str]) -> frozenset[str] | None:
    """The labels of the calls a tool's conditional rules let through unasked when each of them
    confines the tool's destinations (no `egress`); None when they narrow nothing."""
    if EGRESS not in labels or approval not in (ASK, DENY):
        return None
    allowing = [i for i, r in enumerate(rules) if r.action == ALLOW and r.condition is not None]
    if not allowing or set(allowing) - set(confining_rules(rules, params)):
        return None
    return labels - {EGRESS}

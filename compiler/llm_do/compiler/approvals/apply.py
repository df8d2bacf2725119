"""A worker's `approvals`, resolved: every rule parsed and checked where it stands in the file,
and every tool given its approval (and, when a condition targets it, its rules).

Findings carry the exact column inside the .worker file: the rule item's position plus the offset
of the word inside the rule.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from .. import codes
from ..diagnostics import Diagnostic, Location, Related, diagnostic
from ..suggest import did_you_mean
from .effect import overruled_by, unconditional_approval

if TYPE_CHECKING:
    from ..stages.parse import ParsedWorker
    from .nodes import ApprovalRule
    from .params import ToolParams


class RuledTool(Protocol):
    """A tool of a worker as the rules see it (`resolve.RuledTool`)."""

    name: str
    group: str
    default_approval: str
    approval: str
    rules: list[ApprovalRule]


class RuledToolset(Protocol):
    opaque_approval: str | None

    @property
    def group(self) -> str: ...


ToolT = TypeVar("ToolT", bound=RuledTool)
_ToolT_co = TypeVar("_ToolT_co", bound=RuledTool, covariant=True)


class RuledWorker(Protocol, Generic[_ToolT_co]):
    """A resolved worker as the rules see it (`resolve.RuledWorker`, which calls `apply_rules`),
    whose tools are of its own tool type (which the rule callbacks take)."""

    parsed: ParsedWorker

    @property
    def tools(self) -> Mapping[str, _ToolT_co]: ...

    @property
    def toolsets(self) -> Sequence[RuledToolset]: ...

    rules: list[ApprovalRule]
    tools_unknown: bool
    unknown_names: set[str]
    unlisted: list[str]
    unresolved: list[str]


class RulePlaces:
    """Where each rule's text starts in the .worker file, for columns inside a rule."""

    def __init__(self, worker: RuledWorker[Any], source: str | None) -> None:
        self.worker = worker
        self.lines = source.split("\n") if source is not None else []

    def at(self, index: int, offset: int | None = None) -> Location:
        item = self.worker.parsed.at("approvals", index)
        if offset is None or item.line is None or item.column is None or item.line > len(self.lines):
            return item
        text = self.worker.parsed.front.approvals[index]
        line = self.lines[item.line - 1]
        start = item.column - 1
        if line[start:start + 1] in ("'", '"'):
            start += 1
        if line[start:start + len(text)] != text:  # escapes or a folded scalar: the item is as close as we get
            return item
        return Location(file=item.file, line=item.line, column=start + offset + 1)


def apply_rules(worker: RuledWorker[ToolT], source: str | None, params_of: Callable[[ToolT], ToolParams | None],
                diagnostics: list[Diagnostic], always_asked: Callable[[ToolT], bool] = lambda tool: False) -> None:
    """`always_asked`: tools no allow rule applies to (A010 where a rule names one).

    The rule grammar and the condition checks are imported for a worker with rules only: most
    workers have none, and their dataclasses and regular expressions cost every compile."""
    if worker.parsed.front.approvals:
        from .check import check_condition
        from .grammar import RuleSyntaxProblem, parse_rule
    places = RulePlaces(worker, source)
    groups = {t.group for t in worker.tools.values()} | {u.group for u in worker.toolsets}
    opaque = [u.group for u in worker.toolsets if u.opaque_approval is not None]
    applying: dict[str, list[ApprovalRule]] = {name: [] for name in worker.tools}
    by_rule: dict[int, list[str]] = {}
    for i, text in enumerate(worker.parsed.front.approvals):
        try:
            rule = parse_rule(text, i)
        except RuleSyntaxProblem as exc:
            diagnostics.append(diagnostic(exc.code, str(exc), places.at(i, exc.column)))
            continue
        worker.rules.append(rule)
        targeted = [t for t in worker.tools.values() if rule.targets(t.name, t.group)]
        hits_opaque = [name for name in opaque if rule.targets("", name)]
        hidden = worker.tools_unknown or any(rule.targets(n, n) for n in worker.unknown_names)
        if not targeted and rule.target not in groups and worker.unlisted and not hidden:
            worker.unresolved.append(rule.text)  # it may match a tool `--no-import` cannot list: said, not refused
            diagnostics.append(diagnostic(
                codes.RULE_NOT_RESOLVED_WITHOUT_IMPORT,
                f"'{rule.target}' matches none of the tools the text shows; it may match a tool of "
                f"{', '.join(repr(n) for n in worker.unlisted)}, which is made when its module runs, so it is "
                "not resolved without import", places.at(i, rule.target_column),
                hint="`llm-do lint` without --no-import resolves it"))
            continue
        if not targeted and rule.target not in groups and not hidden:  # hidden: it may match a tool an error hides
            diagnostics.append(diagnostic(codes.APPROVAL_RULE_MATCHES_NOTHING, f"'{rule.target}' matches none of this worker's tools",
                                          places.at(i, rule.target_column),
                                          hint=did_you_mean(rule.target, sorted(worker.tools) + sorted(groups))))
            continue
        if not targeted and rule.target not in groups:
            continue
        if rule.condition is not None and hits_opaque:
            diagnostics.append(diagnostic(
                codes.UNENFORCEABLE_CONDITION,
                f"'{rule.text}' puts a condition on the tools of '{hits_opaque[0]}', whose parameters are known only at run time",
                places.at(i, rule.target_column),
                hint="name the tools the condition is for, or gate the toolset without a condition"))
            continue
        if rule.condition is None:
            names = [t.name for t in targeted]
        else:
            if not targeted:
                continue
            candidates = {t.name: p for t in targeted if (p := params_of(t)) is not None}
            names, findings = check_condition(rule, candidates) if candidates else ([], [])
            for f in findings:
                diagnostics.append(diagnostic(f.code, f.message, places.at(i, f.column), hint=f.hint))
            if any(f.code in (codes.UNKNOWN_RULE_PARAMETER, codes.RULE_TYPE_MISMATCH, codes.GLOB_ON_NON_STRING) for f in findings):
                continue
        if rule.action == "allow":
            names = _askable(rule, names, worker, always_asked, places, diagnostics)
        by_rule[i] = names
        for name in names:
            applying[name].append(rule)
    for name, tool in worker.tools.items():
        rules = applying[name]
        tool.approval = unconditional_approval(rules, tool.default_approval)
        if any(r.condition is not None for r in rules):
            tool.rules = rules
    for use in worker.toolsets:
        if use.opaque_approval is not None:
            rules = [r for r in worker.rules if r.condition is None and (r.target == use.group or fnmatch.fnmatchcase("", r.target))]
            use.opaque_approval = unconditional_approval(rules, use.opaque_approval)
    _report_overruled(worker, applying, by_rule, places, diagnostics)


def _askable(rule: ApprovalRule, names: list[str], worker: RuledWorker[ToolT], always_asked: Callable[[ToolT], bool],
             places: RulePlaces, diagnostics: list[Diagnostic]) -> list[str]:
    """The tools an allow rule applies to: not those always asked (A010 when the rule names one of
    them or its toolset; a glob passes over them quietly)."""
    kept = []
    for name in names:
        tool = worker.tools[name]
        if not always_asked(tool):
            kept.append(name)
        elif rule.target in (tool.name, tool.group):
            diagnostics.append(diagnostic(codes.RULE_CANNOT_ALLOW,
                                          f"'{rule.text}' does not apply to '{name}': it is asked on every call",
                                          places.at(rule.index, rule.target_column),
                                          hint=f"remove the rule; the run's approval mode (--approve-all) answers {name}"))
    return kept


def _report_overruled(worker: RuledWorker[Any], applying: dict[str, list[ApprovalRule]], by_rule: dict[int, list[str]],
                      places: RulePlaces, diagnostics: list[Diagnostic]) -> None:
    """A006 for each rule that decides no call: a deny or a later rule decides every call it matches."""
    for rule in worker.rules:
        names = by_rule.get(rule.index)
        if not names:
            continue
        winners = [overruled_by(rule, applying[name]) for name in names]
        if any(w is None for w in winners):
            continue
        winner = winners[0]
        assert winner is not None
        if winner.action == "deny" and rule.action != "deny":
            message = f"'{rule.text}' has no effect: '{winner.text}' denies every call it matches, and a deny always wins"
            hint = "allow the tools you want and deny the others by name"
        elif winner.action == "deny":
            message = f"'{rule.text}' has no effect: '{winner.text}' already denies every call it matches"
            hint = "remove one of them"
        else:
            message = f"'{rule.text}' has no effect: the later '{winner.text}' decides every call it matches"
            hint = "the last matching allow or ask decides; reorder or remove the rules"
        where = places.at(winner.index, 0)
        diagnostics.append(diagnostic(codes.APPROVAL_RULE_OVERRULED, message, places.at(rule.index, 0), hint=hint,
                                      related=[Related(file=where.file, line=where.line, column=where.column,
                                                       message="this rule decides instead")]))

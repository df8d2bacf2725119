"""What a change of a worker's approval rules does to the calls of one tool, said as effects:
`write_file(path under output/private/**) now runs without asking (before: asked)`.

Pure: two bundle bindings (`WorkerTool`) in, the calls decided differently out. Both rule lists are
run, with the runtime's own `approval.decide`, on witness calls built from the literals the
conditions test (a value each glob, `==` and `in` accepts, both sides of each bound, and one
value none of them names), so a reordering, a loosened condition or an unconditional allow beside a
remaining conditional deny (F7) shows as the calls it lets through, not as two rule lists to
compare by eye. Rules that differ only in how they are written (spacing, quotes) decide every call
alike and compare equal by their lowered form.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from llm_do.bundle.approval import ANY_ELEMENT, EVERY_ELEMENT, decide, glob_matches, is_number
from llm_do.bundle.model import WorkerTool

STRICTNESS = ("allow", "auto", "ask", "deny")
"""Decisions from the most to the least permissive."""
NOW = {"allow": "now runs without asking", "ask": "is now asked", "deny": "is now refused", "auto": "is now left to the toolset"}
BEFORE = {"allow": "ran without asking", "ask": "asked", "deny": "refused", "auto": "left to the toolset"}
MAX_CALLS = 4096
"""Most witness calls tried; a rule set with more combinations is reported by its text only."""
OTHER = "\u2063other"
"""A value no rule's literal names (an invisible separator, so no glob but `*`/`**` matches it)."""

Path = tuple[str | int, ...]


@dataclass(frozen=True)
class Shift:
    """The calls of one tool that a rule change decides differently, from `before` to `after`."""

    tool: str
    region: str
    """`path under output/private/**`, or "" for every call."""
    before: str
    after: str

    @property
    def relaxed(self) -> bool:
        return STRICTNESS.index(self.after) < STRICTNESS.index(self.before)

    def text(self) -> str:
        call = f"{self.tool}({self.region})" if self.region else self.tool
        return f"{call} {NOW[self.after]} (before: {BEFORE[self.before]})"


def same_rules(old: WorkerTool, new: WorkerTool) -> bool:
    """Equal in meaning as written: the same approval, default and lowered rules (rule text aside)."""
    def key(b: WorkerTool) -> tuple[object, ...]:
        rules = [(r["action"], json.dumps(r.get("when"), sort_keys=True)) for r in b.get("rules") or ()]
        return b.get("approval"), b.get("default") if rules else None, rules
    return key(old) == key(new)


def shifts(tool: str, old: WorkerTool, new: WorkerTool) -> list[Shift] | None:
    """The calls decided differently, grouped by (before, after), each group's region described;
    None when there are too many witness calls to try."""
    candidates = _candidates([*(old.get("rules") or ()), *(new.get("rules") or ())])
    paths = sorted(candidates, key=str)
    total = 1
    for path in paths:
        total *= len(candidates[path])
    if total > MAX_CALLS:
        return None
    groups: dict[tuple[str, str], list[tuple[int, ...]]] = {}
    for choice in itertools.product(*(range(len(candidates[p])) for p in paths)):
        args = _arguments({p: candidates[p][i][0] for p, i in zip(paths, choice)})
        a, b = _decision(old, args), _decision(new, args)
        if a != b:
            groups.setdefault((a, b), []).append(choice)
    out = []
    for (a, b), points in sorted(groups.items(), key=lambda kv: (STRICTNESS.index(kv[0][1]), kv[0][0])):
        for region in _regions(paths, candidates, points):
            out.append(Shift(tool, region, a, b))
    return out


def _decision(binding: WorkerTool, args: Mapping[str, Any]) -> str:
    rules = binding.get("rules")
    if not rules:
        return binding["approval"]
    return decide(rules, args, binding.get("default") or binding["approval"])


def _tests(condition: Mapping[str, Any] | None) -> Iterator[Mapping[str, Any]]:
    if condition is None:
        return
    if condition["op"] in ("and", "or"):
        for part in condition["args"]:
            yield from _tests(part)
    elif condition["op"] == "not":
        yield from _tests(condition["arg"])
    else:
        yield condition


def _name(path: Path) -> str:
    return "".join(f"[{s}]" if isinstance(s, int) or s == ANY_ELEMENT else s if s == EVERY_ELEMENT or not i else f".{s}"
                   for i, s in enumerate(path))


def _glob_witness(pattern: str) -> str:
    return pattern.replace("**/", "").replace("**", "x").replace("*", "x").replace("?", "x")


def _literal(value: Any) -> str:
    return f"'{value}'" if isinstance(value, str) else json.dumps(value)


def _candidates(rules: Sequence[Mapping[str, Any]]) -> dict[Path, list[tuple[Any, str]]]:
    """Per tested parameter, witness values and what each stands for (`under out/**`,
    `== 'general'`, `other than 'bot-*', 'general'`)."""
    found: dict[Path, list[tuple[Any, str]]] = {}
    literals: dict[Path, list[str]] = {}
    for rule in rules:
        for test in _tests(rule.get("when")):
            path = tuple(test["param"])
            op, value = test["op"], test["value"]
            values: list[tuple[Any, str]] = []
            if op == "glob":
                witness = _glob_witness(value)
                if glob_matches(value, witness):
                    values.append((witness, f"under {value}" if value.endswith("/**") else f"~ '{value}'"))
                literals.setdefault(path, []).append(f"'{value}'")
            elif op in ("==", "!=", "in"):
                for v in value if op == "in" else [value]:
                    values.append((v, f"== {_literal(v)}"))
                    literals.setdefault(path, []).append(_literal(v))
            elif isinstance(value, int | float) and not isinstance(value, bool):
                values += [(value - 1, f"< {value}"), (value, f"== {value}"), (value + 1, f"> {value}")]
                literals.setdefault(path, []).append(json.dumps(value))
            slot = found.setdefault(path, [])
            slot += [v for v in values if all(v[0] != w[0] or type(v[0]) is not type(w[0]) for w in slot)]
    for path, slot in found.items():
        slot.append((OTHER, "other than " + ", ".join(dict.fromkeys(literals.get(path, [])))))
    return found


def _arguments(values: Mapping[Path, Any]) -> dict[str, Any]:
    """The call's arguments with each tested parameter set (`argv[0]` builds a list; each `argv[*]`,
    any element, sets a position of its own past the listed ones; `recipients[all]`, every element,
    makes the list that one value, or takes a position of its own when other tests index that list)."""
    args: dict[str, Any] = {}
    past = max((s for p in values for s in p if isinstance(s, int) and not isinstance(s, bool)), default=-1) + 1
    spread = {p: past + k for k, p in enumerate(p for p in values if ANY_ELEMENT in p or _shares_list(p, values))}
    for path, value in values.items():
        path = tuple(spread.get(path, 0) if step in (ANY_ELEMENT, EVERY_ELEMENT) else step for step in path)
        here: Any = args
        for step, following in zip(path, path[1:]):
            blank: Any = [] if isinstance(following, int) else {}
            if isinstance(step, int):
                while len(here) <= step:
                    here.append(None)
                here[step] = here[step] if isinstance(here[step], type(blank)) else blank
                here = here[step]
            else:
                here = here.setdefault(step, blank)
        last = path[-1]
        if isinstance(last, int):
            while len(here) <= last:
                here.append(OTHER)
            here[last] = value
        else:
            here[last] = value
    return args


def _shares_list(path: Path, values: Iterable[Path]) -> bool:
    """Whether another tested path indexes the list that `path`'s every-element step ranges over."""
    if EVERY_ELEMENT not in path:
        return False
    head = path[:path.index(EVERY_ELEMENT)]
    return any(len(other) > len(head) and other[:len(head)] == head and other[len(head)] != EVERY_ELEMENT
               for other in values)


def _regions(paths: list[Path], candidates: dict[Path, list[tuple[Any, str]]], points: list[tuple[int, ...]]) -> list[str]:
    """The points as few regions as reads true: one `path under a/** or under b/**` per parameter
    when they form a box (a parameter taking every value is left out; `not under x/**` when that
    is shorter), else each point (the first 5, then a count)."""
    chosen = [sorted({p[i] for p in points}) for i in range(len(paths))]
    names = [_name(_shown(path, paths)) for path in paths]
    box = 1
    for values in chosen:
        box *= len(values)
    if box == len(points):
        return [", ".join(_param_text(name, candidates[path], values) for name, path, values in zip(names, paths, chosen)
                          if len(values) < len(candidates[path]))]
    texts = [", ".join(f"{name} {candidates[path][i][1]}" for name, path, i in zip(names, paths, p)) for p in points]
    return texts[:5] + ([f"{len(texts) - 5} more kinds of call"] if len(texts) > 5 else [])


def _shown(path: Path, paths: Sequence[Path]) -> Path:
    """The path as its witness sets it: an every-element step that shares its list with other tests
    stands for one element of it (`to[*]`), the list holding the others' elements too."""
    return tuple(ANY_ELEMENT if s == EVERY_ELEMENT else s for s in path) if _shares_list(path, paths) else path


def _param_text(name: str, slot: list[tuple[Any, str]], values: list[int]) -> str:
    numeric = sorted((i for i, (v, _) in enumerate(slot) if is_number(v)), key=lambda i: slot[i][0])
    if values and set(values) <= set(numeric):
        run = numeric.index(min(values, key=lambda i: slot[i][0]))
        if numeric[run:run + len(values)] == sorted(values, key=lambda i: slot[i][0]):
            return f"{name} {_bounds(slot, numeric, run, run + len(values) - 1)}"
    rest = [i for i in range(len(slot)) if i not in values]
    if len(rest) <= len(values) and len(slot) - 1 not in rest:  # the complement is no longer and names no "other"
        return f"{name} not " + " and not ".join(slot[i][1] for i in rest)
    return f"{name} " + " or ".join(slot[i][1] for i in values)


def _bounds(slot: list[tuple[Any, str]], numeric: list[int], first: int, last: int) -> str:
    """A run of numeric witnesses as the interval they stand for: `>= 10 and < 100`."""
    low, high = slot[numeric[first]], slot[numeric[last]]
    parts = []
    if first > 0:
        parts.append(low[1].replace("== ", ">= ") if low[1].startswith("==") else low[1])
    if last < len(numeric) - 1:
        parts.append(high[1].replace("== ", "<= ") if high[1].startswith("==") else high[1])
    return " and ".join(parts) or "any number"

"""One change `llm-do diff` reports: what it is about, how risky, before and after (spec/diff.md).

Shared by the analyses that find changes (`diff.bundle`, `diff.code`) and the renderers.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

Severity = Literal["high", "medium", "low"]
Verb = Literal["added", "widened", "narrowed", "removed", "changed"]
Area = Literal["flow", "capability", "approval", "unevaluated", "code", "cost", "project", "mcp", "call", "worker", "model", "schema", "instructions", "setting"]
"""Areas in the order changes are listed within one severity."""
SEVERITIES: tuple[Severity, ...] = get_args(Severity)
AREAS: tuple[Area, ...] = get_args(Area)


@dataclass(frozen=True)
class Change:
    severity: Severity
    verb: Verb
    area: Area
    """`flow`, `worker`, `call`, `capability`, `approval`, `unevaluated`, `code`, `cost`, `model`,
    `instructions`, `schema`, `setting`, `project`, `mcp`."""
    subject: str
    before: str | None = None
    after: str | None = None
    worker: str | None = None
    note: str | None = None
    """`breaking`, `relaxed`, `tightened`, `approval relaxed`, `approval tightened`, or `path A -> B`."""
    detail: list[str] = field(default_factory=list)
    """Extra lines: a short instructions diff, the schema fields that changed, a tool's users."""
    capability: str | None = None
    """The capability a `capability` change is about (`KIND:SCOPE`), for tools that filter on it."""
    gate: str | None = None
    """The gate after the change (`allow` ... `ask`; `deny` for an approval), or before when removed."""
    file: str | None = None
    """The project file the change is in, where the documents say (a worker's, `project.json`)."""
    line: int | None = None
    cause: str | None = None
    """Where the change comes from when several workers see it (`editor.write_file`, the tool
    that grants a capability they reach): every format gives each cause one entry."""
    users: tuple[str, ...] = ()
    """The workers that run the code or read the text a `code` or `instructions` change is about."""
    at: str | None = None
    """Where its cause is written, a key of `diff.positions` (`rule:writer:write_file`,
    `code:tools.py:_clean`): `file` and `line` come from it, on the new side (the old one when
    removed)."""

    def sort_key(self) -> tuple[int, int, str, str, str]:
        return (SEVERITIES.index(self.severity), AREAS.index(self.area), self.worker or "", self.subject, self.verb)

    def to_json(self) -> dict[str, Any]:
        return {"severity": self.severity, "verb": self.verb, "area": self.area, "subject": self.subject,
                "worker": self.worker, "before": self.before, "after": self.after, "note": self.note,
                "detail": self.detail, "kind": self.capability.partition(":")[0] if self.capability else None,
                "scope": self.capability.partition(":")[2] if self.capability else None, "gate": self.gate,
                "file": self.file, "line": self.line}


def change_line(severity: str, verb: str, subject: str, before: str | None, after: str | None, note: str | None) -> str:
    """One change as the text report writes it: `SEVERITY VERB SUBJECT: BEFORE -> AFTER (NOTE)`."""
    text = f"{severity:<6} {verb:<8} {subject}"
    if before is not None or after is not None:
        text += f": {before if before is not None else '(none)'} -> {after if after is not None else '(none)'}"
    if note:
        text += f" ({note})"
    return text


def text_of(value: Any) -> str | None:
    return None if value is None else value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def changed_lines(before: str, after: str) -> list[str]:
    """Every `-` and `+` line of a line diff of two texts."""
    return [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
            if not line.startswith(("---", "+++", "@@"))]


def shortened(lines: list[str], limit: int = 12) -> list[str]:
    return lines[:limit] + ([f"... {len(lines) - limit} more lines"] if len(lines) > limit else [])


def text_diff(before: str, after: str, limit: int = 12) -> list[str]:
    """A short line diff (`-` and `+` lines, at most `limit`) of two texts the model reads."""
    return shortened(changed_lines(before, after), limit)


def edit_cause(lines: list[str], name: str) -> str:
    """What makes one edit of several workers' texts one cause (a template they include, a `vars`
    value they use): the same changed lines once each worker's own name is set aside."""
    own = re.compile(rf"\b{re.escape(name)}\b")
    return "text:" + hashlib.sha256("\n".join(own.sub("\0", line) for line in lines).encode()).hexdigest()

"""One change `llm-do diff` reports: what it is about, how risky, before and after (spec/diff.md).

Shared by the analyses that find changes (`bundle_diff`, `code_diff`) and the renderers.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

Severity = Literal["high", "medium", "low"]
Verb = Literal["added", "widened", "narrowed", "removed", "changed"]
Area = Literal["capability", "approval", "code", "project", "mcp", "call", "worker", "model", "schema", "instructions", "setting"]
"""Areas in the order changes are listed within one severity."""
SEVERITIES: tuple[Severity, ...] = get_args(Severity)
AREAS: tuple[Area, ...] = get_args(Area)


@dataclass(frozen=True)
class Change:
    severity: Severity
    verb: Verb
    area: Area
    """`worker`, `call`, `capability`, `approval`, `code`, `model`, `instructions`, `schema`, `setting`,
    `project`, `mcp`."""
    subject: str
    before: str | None = None
    after: str | None = None
    worker: str | None = None
    note: str | None = None
    """`breaking`, `relaxed`, `tightened`, `approval relaxed`, `approval tightened`, or `path A -> B`."""
    detail: list[str] = field(default_factory=list)
    """Extra lines: a short instructions diff, the schema fields that changed, a tool's users."""

    def sort_key(self) -> tuple:
        return (SEVERITIES.index(self.severity), AREAS.index(self.area), self.worker or "", self.subject, self.verb)

    def to_json(self) -> dict[str, Any]:
        return {"severity": self.severity, "verb": self.verb, "area": self.area, "subject": self.subject,
                "worker": self.worker, "before": self.before, "after": self.after, "note": self.note,
                "detail": self.detail}


def text_of(value: Any) -> str | None:
    return None if value is None else value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def text_diff(before: str, after: str, limit: int = 12) -> list[str]:
    """A short line diff (`-` and `+` lines, at most `limit`) of two texts the model reads."""
    lines = [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
             if not line.startswith(("---", "+++", "@@"))]
    return lines[:limit] + ([f"... {len(lines) - limit} more lines"] if len(lines) > limit else [])

"""The one type for everything the compiler reports, and a collector the stages append to.

Like ruff: a stable code, a severity, a one-line message, a precise location (file relative to the
project root, 1-based line and column in code points), an optional hint, related locations.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from .codes import Rule


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


_SEVERITY_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}

# Plain frozen dataclasses, not pydantic models: a build that only prints the diagnostics its build
# record kept (`build_record`) must not pay for importing pydantic.


@dataclass(frozen=True, kw_only=True)
class Location:
    file: str
    line: int | None = None
    column: int | None = None


@dataclass(frozen=True, kw_only=True)
class Related:
    file: str
    line: int | None = None
    column: int | None = None
    message: str

    @classmethod
    def at(cls, where: Location, message: str) -> Related:
        return cls(file=where.file, line=where.line, column=where.column, message=message)


@dataclass(frozen=True, kw_only=True)
class Diagnostic:
    code: str
    severity: Severity
    message: str
    file: str
    line: int | None = None
    column: int | None = None
    hint: str | None = None
    related: tuple[Related, ...] = field(default=())

    def __post_init__(self) -> None:
        if not isinstance(self.severity, Severity):
            object.__setattr__(self, "severity", Severity(self.severity))
        if not isinstance(self.related, tuple):
            object.__setattr__(self, "related", tuple(self.related))

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def sort_key(self) -> tuple[str, int, int, int, str, str]:
        return (self.file, self.line or 0, self.column or 0, _SEVERITY_RANK[self.severity], self.code, self.message)

    def as_json(self) -> dict[str, Any]:
        """The diagnostic as JSON values, every field by name (what `from_json` reads back)."""
        return {"code": self.code, "severity": self.severity.value, "message": self.message, "file": self.file,
                "line": self.line, "column": self.column, "hint": self.hint,
                "related": [related_json(r) for r in self.related]}

    @classmethod
    def from_json(cls, doc: object) -> Diagnostic:
        """A diagnostic from `as_json`'s output; ValueError when `doc` is not one (a damaged record)."""
        d = _fields(doc, {"code": str, "severity": str, "message": str, "file": str}, {"hint": str})
        related = doc.get("related", []) if isinstance(doc, Mapping) else None
        if not isinstance(related, list | tuple):
            raise ValueError("related is not a list")
        rel = []
        for r in related:
            f = _fields(r, {"file": str, "message": str}, {})
            rel.append(Related(file=f["file"], line=f["line"], column=f["column"], message=f["message"]))
        return cls(code=d["code"], severity=Severity(d["severity"]), message=d["message"], file=d["file"],
                   line=d["line"], column=d["column"], hint=d["hint"], related=tuple(rel))


def recorded_diagnostics(recorded: list[Any]) -> list[Diagnostic] | None:
    """Diagnostics read back from a build or lint record (`as_json` each); None when one is not a
    diagnostic (a damaged record, which the caller answers by compiling)."""
    try:
        return [Diagnostic.from_json(d) for d in recorded]
    except ValueError:
        return None


def related_json(r: Related) -> dict[str, Any]:
    return {"file": r.file, "line": r.line, "column": r.column, "message": r.message}


def _fields(doc: object, required: dict[str, type], optional: dict[str, type]) -> dict[str, Any]:
    """`doc`'s required and optional string fields and its optional `line` and `column` integers,
    each checked for its type; ValueError naming the first one that is wrong."""
    if not isinstance(doc, Mapping):
        raise ValueError("not an object")
    out: dict[str, Any] = {}
    for name, kind in required.items():
        if not isinstance(doc.get(name), kind):
            raise ValueError(f"{name} is not a {kind.__name__}")
        out[name] = doc[name]
    for name, kind in {**optional, "line": int, "column": int}.items():
        value = doc.get(name)
        if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
            raise ValueError(f"{name} is not a {kind.__name__}")
        out[name] = value
    return out


class LazyLocation(Protocol):
    """A position found only when a diagnostic needs it (`stages.load`'s manifest locations)."""

    def resolve(self) -> Location: ...


def diagnostic(
    code: Rule,
    message: str,
    at: Location | LazyLocation,
    *,
    hint: str | None = None,
    related: tuple[Related, ...] | list[Related] = (),
) -> Diagnostic:
    """Make a diagnostic of the rule `code` (a constant of `codes`: `codes.UNKNOWN_KEY`); its code
    and severity come from the rule, so a code means one thing.

    `at` may be any object with a `resolve()` giving the Location, for positions found lazily.
    """
    if not isinstance(at, Location):
        at = at.resolve()
    return Diagnostic(
        code=code.code,
        severity=Severity(code.severity),
        message=message,
        file=at.file,
        line=at.line,
        column=at.column,
        hint=hint,
        related=tuple(related),
    )


def has_errors(diagnostics: list[Diagnostic]) -> bool:
    return any(d.is_error for d in diagnostics)


def sorted_diagnostics(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Sorted by file, line, column; duplicates (same code at the same place) dropped."""
    seen: set[tuple[str, str, int | None, int | None, str]] = set()
    out: list[Diagnostic] = []
    for d in sorted(diagnostics, key=Diagnostic.sort_key):
        key = (d.code, d.file, d.line, d.column, d.message)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out

"""The one type for everything the compiler reports, and a collector the stages append to.

Like ruff: a stable code, a severity, a one-line message, a precise location (file relative to the
project root, 1-based line and column in code points), an optional hint, related locations.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from .codes import RULES


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


_SEVERITY_RANK = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


class Location(BaseModel):
    model_config = ConfigDict(frozen=True)

    file: str
    line: int | None = None
    column: int | None = None


class Related(BaseModel):
    model_config = ConfigDict(frozen=True)

    file: str
    line: int | None = None
    column: int | None = None
    message: str


class Diagnostic(BaseModel):
    model_config = ConfigDict(frozen=True)

    code: str
    severity: Severity
    message: str
    file: str
    line: int | None = None
    column: int | None = None
    hint: str | None = None
    related: tuple[Related, ...] = ()

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def sort_key(self) -> tuple:
        return (self.file, self.line or 0, self.column or 0, _SEVERITY_RANK[self.severity], self.code, self.message)


class LazyLocation(Protocol):
    """A position found only when a diagnostic needs it (`stages.load`'s manifest locations)."""

    def resolve(self) -> Location: ...


def diagnostic(
    code: str,
    message: str,
    at: Location | LazyLocation,
    *,
    hint: str | None = None,
    related: tuple[Related, ...] | list[Related] = (),
) -> Diagnostic:
    """Make a diagnostic; its severity comes from the rule registry, so a code means one thing.

    `at` may be any object with a `resolve()` giving the Location, for positions found lazily.
    """
    if not isinstance(at, Location):
        at = at.resolve()
    return Diagnostic(
        code=code,
        severity=Severity(RULES[code].severity),
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
    seen: set[tuple] = set()
    out: list[Diagnostic] = []
    for d in sorted(diagnostics, key=Diagnostic.sort_key):
        key = (d.code, d.file, d.line, d.column, d.message)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out

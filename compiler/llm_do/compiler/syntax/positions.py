"""Where each key and value of a parsed document stands in its file.

Paths are tuples of keys and list indices, as in pydantic's error `loc`. Lookups fall back to the
nearest ancestor, so every diagnostic gets a position even when its path is partly synthetic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

Path = tuple[str | int, ...]


@dataclass(frozen=True, order=True)
class Pos:
    line: int
    column: int


@dataclass
class PositionTable:
    values: dict[Path, Pos] = field(default_factory=dict)
    keys: dict[Path, Pos] = field(default_factory=dict)
    duplicates: list[tuple[Path, Pos]] = field(default_factory=list)
    """Keys repeated in one mapping, at the repetition."""

    def value(self, path: Path) -> Pos:
        return self._nearest(self.values, path)

    def key(self, path: Path) -> Pos:
        """Position of the key that holds `path` (of the value itself for list items)."""
        if path in self.keys:
            return self.keys[path]
        return self._nearest(self.values, path)

    def _nearest(self, table: dict[Path, Pos], path: Path) -> Pos:
        while path:
            if path in table:
                return table[path]
            path = path[:-1]
        return table.get((), Pos(1, 1))


class LazyPositions:
    """A PositionTable computed on first use: JSON is parsed fast without positions, and again
    with positions only when a diagnostic needs one."""

    def __init__(self, compute: Callable[[], PositionTable]) -> None:
        self._compute = compute
        self._table: PositionTable | None = None

    @property
    def table(self) -> PositionTable:
        if self._table is None:
            self._table = self._compute()
        return self._table

    def value(self, path: Path) -> Pos:
        return self.table.value(path)

    def key(self, path: Path) -> Pos:
        return self.table.key(path)


Positions = PositionTable | LazyPositions

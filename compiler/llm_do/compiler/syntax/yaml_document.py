"""What `yaml_positions.load_yaml` answers: a document with positions, or a problem.

Apart from the parser, so that what takes these answers from elsewhere (the front matter the last
build read, `cache.front_matter_cache`) does not load PyYAML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..codes import Rule
from .positions import Path, Pos, PositionTable


@dataclass
class YamlProblem:
    message: str
    pos: Pos
    code: Rule
    hint: str | None = None


@dataclass
class YamlDocument:
    data: Any
    positions: PositionTable
    duplicate_keys: list[tuple[Path, Pos]] = field(default_factory=list)

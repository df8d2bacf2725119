"""Stage 2, parse: a .worker file becomes front matter (validated, with positions) and a body."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from .. import codes
from ..diagnostics import Diagnostic, Location, Related, diagnostic
from ..legacy.upgrade import LEGACY_WORKER_SUFFIX, upgrade_front_matter
from ..syntax.cascade import dropped_keys
from ..syntax.front_matter import NAME_PATTERN, WorkerFrontMatter, split_front_matter
from ..syntax.hints import front_matter_value_hints
from ..syntax.positions import Path, PositionTable
from ..syntax.sources import SourceFile
from ..syntax.validation import validate
from ..syntax.value_checks import first_unfit
from ..syntax.worker_forms import default_worker_name, worker_directory
from ..syntax.yaml_document import YamlDocument, YamlProblem

_NAME = re.compile(NAME_PATTERN)


@dataclass
class ParsedWorker:
    file: str
    name: str
    front: WorkerFrontMatter
    positions: PositionTable
    body: str
    body_line: int
    """1-based line of the file where the body starts."""
    legacy: bool
    data: dict[str, Any]
    """The front matter as YAML gave it (its `.agent`-era names upgraded), which `front` was
    validated from: what a build from the last lock compares an edit with (`build.local_edits`)."""
    incomplete: frozenset[str] = frozenset()
    """Front matter keys whose value an error already reported dropped in whole or part (an
    unknown key counts for the absent key it most resembles): what is missing there is not a second
    problem, so later stages do not report it."""

    def at(self, *path: str | int, key: bool = False) -> Location:
        pos = self.positions.key(path) if key else self.positions.value(path)
        return Location(file=self.file, line=pos.line, column=pos.column)

    @property
    def name_location(self) -> Location:
        if "name" in self.front.model_fields_set:
            return self.at("name")
        return Location(file=self.file, line=1, column=1)


def parse_worker(source: SourceFile, yaml_loader: Callable[[str, int], YamlDocument | YamlProblem] | None = None,
                 ) -> tuple[ParsedWorker | None, list[Diagnostic]]:
    """`yaml_loader`: `load_yaml` (the default), or what answers as it does (`cache.front_matter_cache`)."""
    file = source.path
    top = Location(file=file, line=1, column=1)
    split = split_front_matter(source.text)
    if split is codes.MISSING_FRONT_MATTER:
        return None, [diagnostic(codes.MISSING_FRONT_MATTER, "the file does not start with front matter", top,
                                 hint="start the file with a line '---', the front matter, then a line '---'")]
    if split is codes.UNTERMINATED_FRONT_MATTER:
        return None, [diagnostic(codes.UNTERMINATED_FRONT_MATTER, "the front matter opened on line 1 is never closed", top,
                                 hint="end the front matter with a line that is exactly '---'")]
    if isinstance(split, codes.Rule):
        raise ValueError(f"split_front_matter gave the unknown problem {split!r}")
    front_text, body, body_line = split
    if yaml_loader is None:
        from ..syntax.yaml_positions import load_yaml  # PyYAML: only where front matter is parsed

        yaml_loader = load_yaml
    doc = yaml_loader(front_text, 1)
    if isinstance(doc, YamlProblem):
        return None, [diagnostic(doc.code, doc.message, Location(file=file, line=doc.pos.line, column=doc.pos.column),
                                 hint=doc.hint)]
    unfit = first_unfit(doc.data)
    if unfit is not None:
        pos = doc.positions.key(unfit.path) if unfit.at_key else doc.positions.value(unfit.path)
        return None, [diagnostic(unfit.code, unfit.message, Location(file=file, line=pos.line, column=pos.column))]
    diagnostics = [
        diagnostic(codes.DUPLICATE_KEY, f"duplicate key '{path[-1]}'", Location(file=file, line=pos.line, column=pos.column),
                   related=_first_given(doc.positions, path, file))
        for path, pos in doc.duplicate_keys
    ]
    data = {} if doc.data is None else doc.data
    if not isinstance(data, dict):
        pos = doc.positions.value(())
        diagnostics.append(diagnostic(codes.INVALID_VALUE, "the front matter must be a mapping of keys to values",
                                      Location(file=file, line=pos.line, column=pos.column)))
        return None, diagnostics
    legacy = file.endswith(LEGACY_WORKER_SUFFIX)
    data, positions, found = upgrade_front_matter(data, file, doc.positions, legacy_file=legacy)
    diagnostics.extend(found)
    front, found = validate(WorkerFrontMatter, data, file, positions)
    diagnostics.extend(_with_value_hints(found, front_matter_value_hints(data), file, positions))
    if front is None:
        return None, diagnostics
    name = front.name
    directory = worker_directory(file)
    if name is not None and directory is not None and name != default_worker_name(file):
        diagnostics.append(diagnostic(
            codes.DIRECTORY_WORKER_NAME,
            f"the worker in '{directory}/' is named '{default_worker_name(file)}' after its directory, not '{name}'",
            Location(file=file, line=positions.key(("name",)).line, column=positions.key(("name",)).column),
            hint=f"remove `name:`, or rename the directory to '{name}'"))
        name = None
    if name is None:
        name = default_worker_name(file)
        if not _NAME.match(name):
            what = "directory" if directory is not None else "file name"
            diagnostics.append(diagnostic(codes.INVALID_NAME, f"the {what} gives the worker the invalid name '{name}'", top,
                                          hint="rename the directory" if directory is not None
                                          else "add `name:` to the front matter"))
            return None, diagnostics
    incomplete = dropped_keys(data, front) if diagnostics else frozenset()
    worker = ParsedWorker(file=file, name=name, front=front, positions=positions, body=body, body_line=body_line,
                          legacy=legacy, data=data, incomplete=incomplete)
    return worker, diagnostics


def _with_value_hints(found: list[Diagnostic], hints: dict[Path, str], file: str, positions: PositionTable) -> list[Diagnostic]:
    """The validation diagnostics, with a hint added to those at a value `hints` knows."""
    if not hints:
        return found
    at: dict[tuple[int | None, int | None], Any] = {}
    for path, hint in hints.items():
        pos = positions.value(path)
        at[(pos.line, pos.column)] = hint
    return [replace(d, hint=at[(d.line, d.column)])
            if d.file == file and d.hint is None and (d.line, d.column) in at else d for d in found]


def _first_given(positions: PositionTable, path: Path, file: str) -> list[Related]:
    """Where a key given twice was given first (YAML keeps that value)."""
    first = positions.keys.get(path)
    return [Related(file=file, line=first.line, column=first.column, message="first given here, the value kept")] if first else []

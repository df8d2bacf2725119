"""Stage 1, load: find the project, read project.json and every file it names into a source map."""

from __future__ import annotations

import glob
import json
import os
import posixpath
from dataclasses import dataclass, field
from pathlib import Path

from ..cascade import dropped_keys
from ..diagnostics import Diagnostic, Location, diagnostic
from ..hints import json_trailing_comma
from ..json_positions import json_positions
from ..legacy import LEGACY_WORKER_SUFFIX, upgrade_manifest
from ..manifest import Entry, ProjectManifest
from ..positions import LazyPositions, Pos, Positions, PositionTable
from ..sources import NotText, OutsideRoot, SourceFile, SourceMap, decode, lexically_confined, normalized
from ..suggest import did_you_mean_file
from ..validation import validate

MANIFEST_NAME = "project.json"
IMPLICIT_ENTRY = "main.worker"
WORKER_SUFFIXES = (".worker", LEGACY_WORKER_SUFFIX)
_GLOB_CHARS = set("*?[")


class ProjectNotFound(Exception):
    """The path given names no project: a usage error, not a finding."""


@dataclass
class LoadedProject:
    root: Path
    manifest_file: str
    """`project.json`, or `main.worker` for a project without a manifest: where project-wide
    diagnostics point."""
    manifest: ProjectManifest | None
    manifest_positions: Positions
    implicit: bool
    sources: SourceMap
    worker_files: list[str] = field(default_factory=list)
    python_files: list[str] = field(default_factory=list)
    manifest_incomplete: frozenset[str] = frozenset()
    """Manifest keys whose value an error already reported dropped in whole or part (cascade.py)."""

    def at(self, *path: str | int, key: bool = True) -> Location:
        """A location in the manifest (the top of main.worker for an implicit project)."""
        if self.implicit:
            return Location(file=self.manifest_file, line=1, column=1)
        pos = self.manifest_positions.key(path) if key else self.manifest_positions.value(path)
        return Location(file=self.manifest_file, line=pos.line, column=pos.column)


def find_project(path: Path) -> tuple[Path, Path | None]:
    """The project root and its manifest (None for a directory with only main.worker)."""
    if path.is_file():
        if path.suffix != ".json":
            raise ProjectNotFound(f"{path}: a project is a directory or its project.json")
        return path.parent.resolve(), path.resolve()
    if not path.is_dir():
        raise ProjectNotFound(f"{path}: no such file or directory")
    manifest = path / MANIFEST_NAME
    if manifest.is_file():
        return path.resolve(), manifest.resolve()
    if (path / IMPLICIT_ENTRY).is_file():
        return path.resolve(), None
    raise ProjectNotFound(f"{path}: no {MANIFEST_NAME} and no {IMPLICIT_ENTRY} here; `llm-do init` starts a project")


def load(path: Path) -> tuple[LoadedProject, list[Diagnostic]]:
    root, manifest_path = find_project(path)
    sources = SourceMap(root)
    if manifest_path is None:
        project = LoadedProject(root, IMPLICIT_ENTRY, ProjectManifest(version=1, entry=Entry(worker="main")),
                                PositionTable(), True, sources)
        project.worker_files = _implicit_worker_files(root)
        return project, []
    manifest_file = manifest_path.relative_to(root).as_posix()
    diagnostics: list[Diagnostic] = []
    manifest, positions, incomplete = _read_manifest(sources, manifest_file, diagnostics)
    project = LoadedProject(root, manifest_file, manifest, positions, False, sources, manifest_incomplete=incomplete)
    if manifest is not None:
        project.worker_files = expand_worker_files(project, diagnostics)
        project.python_files = _python_files(project, diagnostics)
    return project, diagnostics


def _read_manifest(
    sources: SourceMap, manifest_file: str, diagnostics: list[Diagnostic]
) -> tuple[ProjectManifest | None, Positions, frozenset[str]]:
    """The manifest (None when unreadable), its positions, and the keys validation dropped."""
    empty = PositionTable()
    try:
        text = sources.read(manifest_file, "manifest").text
    except NotText as exc:
        diagnostics.append(diagnostic("P009", f"{MANIFEST_NAME} is {exc}", Location(file=manifest_file, line=1, column=1)))
        return None, empty, frozenset()
    duplicated: list[str] = []
    try:
        data = json.loads(text, object_pairs_hook=_duplicates_noted(duplicated))
    except json.JSONDecodeError as exc:
        diagnostics.append(_json_syntax_error(manifest_file, text, exc))
        return None, empty, frozenset()
    positions: Positions = LazyPositions(lambda: json_positions(text))
    if duplicated:
        for path, pos in positions.table.duplicates:
            diagnostics.append(diagnostic("P008", f"duplicate key '{path[-1]}'", Location(file=manifest_file, line=pos.line,
                                                                                          column=pos.column)))
    if not isinstance(data, dict):
        diagnostics.append(diagnostic("P006", f"{MANIFEST_NAME} must be a JSON object", Location(file=manifest_file, line=1, column=1)))
        return None, empty, frozenset()
    data, positions, found = upgrade_manifest(data, manifest_file, positions)
    diagnostics.extend(found)
    manifest, found = validate(ProjectManifest, data, manifest_file, positions)
    diagnostics.extend(found)
    return manifest, positions, dropped_keys(data, manifest) if found and manifest is not None else frozenset()


def _json_syntax_error(file: str, text: str, exc: json.JSONDecodeError) -> Diagnostic:
    comma = json_trailing_comma(text, exc.pos)
    if comma is None:
        return diagnostic("P002", f"invalid JSON: {exc.msg}", Location(file=file, line=exc.lineno, column=exc.colno))
    line = text.count("\n", 0, comma) + 1
    column = comma - (text.rfind("\n", 0, comma) + 1) + 1
    return diagnostic("P002", f"invalid JSON: a trailing comma before '{text[exc.pos]}'", Location(file=file, line=line, column=column),
                      hint="remove this comma: JSON allows none after the last item")


def _duplicates_noted(found: list[str]):
    """A json object hook that keeps the last value, as json does, and notes repeated keys."""

    def hook(pairs: list[tuple[str, object]]) -> dict[str, object]:
        out = dict(pairs)
        if len(out) != len(pairs):
            found.append("")
        return out

    return hook


def _implicit_worker_files(root: Path) -> list[str]:
    """Every *.worker below the root, as `**/*.worker` would match: no hidden files or directories."""
    out = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [d for d in subdirs if not d.startswith(".")]
        rel_dir = os.path.relpath(directory, root)
        out.extend(normalized(os.path.join(rel_dir, f)) for f in files if f.endswith(".worker") and not f.startswith("."))
    return sorted(out)


class _LazyLocation:
    """A manifest location looked up only if a diagnostic needs it: finding positions in JSON
    means parsing it again, which a clean build never has to do."""

    def __init__(self, project: LoadedProject, path: tuple[str | int, ...]) -> None:
        self.project = project
        self.path = path

    @property
    def file(self) -> str:
        return self.project.manifest_file

    def resolve(self) -> Location:
        return self.project.at(*self.path, key=False)


def _is_pattern(entry: str) -> bool:
    return any(c in _GLOB_CHARS for c in entry)


def expand_worker_files(project: LoadedProject, diagnostics: list[Diagnostic]) -> list[str]:
    """worker_files in order: literal paths as given, each pattern's matches sorted, no repeats."""
    assert project.manifest is not None
    out: list[str] = []
    seen: set[str] = set()
    escaping: dict[str, tuple[str, _LazyLocation]] = {}
    """Files a pattern reaches through a symlink out, reported unless listed (and reported) by name."""
    for i, entry in enumerate(project.manifest.worker_files):
        at = _LazyLocation(project, ("worker_files", i))
        if not _is_pattern(entry):
            rel = _listed_file(project, entry, at, "worker", seen, diagnostics)
            if rel is not None:
                out.append(rel)
            else:
                escaping[normalized(entry)] = ("", at)
            continue
        try:
            lexically_confined(entry)
        except OutsideRoot as exc:
            diagnostics.append(diagnostic("F002", f"worker_files entry {exc}", at))
            continue
        matches, outside = _glob(project.sources, entry)
        for rel in outside:
            escaping.setdefault(rel, (entry, at))
        if not matches and not outside:
            diagnostics.append(diagnostic("F003", f"pattern '{entry}' matches no worker file", at))
        for rel in matches:
            if rel not in seen:
                seen.add(rel)
                out.append(rel)
    for rel, (pattern, at) in escaping.items():
        if pattern:
            diagnostics.append(diagnostic("F002", f"pattern '{pattern}' matches '{rel}', which leads outside the project root", at))
    return out


def _listed_file(
    project: LoadedProject, entry: str, at: _LazyLocation, kind: str, seen: set[str], diagnostics: list[Diagnostic]
) -> str | None:
    """A path listed literally in worker_files or python_files, checked: inside the root, of the
    right kind, existing, listed once. Its normalized form, or None with a diagnostic."""
    listed = f"{kind}_files"
    try:
        project.sources.confined(entry)
    except OutsideRoot as exc:
        diagnostics.append(diagnostic("F002", f"{listed} entry {exc}", at))
        return None
    rel = normalized(entry)
    if kind == "worker" and not rel.endswith(WORKER_SUFFIXES):
        diagnostics.append(diagnostic("F005", f"'{entry}' is not a .worker file", at))
        return None
    if not os.path.isfile(os.path.join(str(project.root), rel)):
        diagnostics.append(diagnostic("F001", f"{kind} file '{entry}' not found", at,
                                      hint=did_you_mean_file(rel, _files_beside(project.root, rel))))
        return None
    if rel in seen:
        diagnostics.append(diagnostic("F004", f"'{entry}' is listed more than once", at))
        return None
    seen.add(rel)
    return rel


def _files_beside(root: Path, rel: str) -> list[str]:
    """The files in the directory `rel` names a file of, as paths relative to the root."""
    parent = posixpath.dirname(rel)
    try:
        names = os.listdir(os.path.join(str(root), parent))
    except OSError:
        return []
    return [posixpath.join(parent, n) for n in names if os.path.isfile(os.path.join(str(root), parent, n))]


def _glob(sources: SourceMap, pattern: str) -> tuple[list[str], list[str]]:
    """The worker files a pattern matches, sorted; and those it matches through a symlink out."""
    root = str(sources.root)
    matches = glob.glob(pattern, root_dir=root, recursive=True)
    inside, outside = [], []
    for m in sorted(matches):
        rel = normalized(m)
        if rel.endswith(WORKER_SUFFIXES) and os.path.isfile(os.path.join(root, rel)):
            try:
                sources.confined(rel)
            except OutsideRoot:
                outside.append(rel)
                continue
            inside.append(rel)
    return inside, outside


def _python_files(project: LoadedProject, diagnostics: list[Diagnostic]) -> list[str]:
    assert project.manifest is not None
    out: list[str] = []
    seen: set[str] = set()
    for i, entry in enumerate(project.manifest.python_files):
        rel = _listed_file(project, entry, _LazyLocation(project, ("python_files", i)), "python", seen, diagnostics)
        if rel is not None:
            out.append(rel)
    return out


def read_sources(project: LoadedProject, diagnostics: list[Diagnostic]) -> list[SourceFile]:
    """Read every worker and Python file into the source map; the worker files are returned."""
    workers: list[SourceFile] = []
    for rel, kind in [(w, "worker") for w in project.worker_files] + [(p, "python") for p in project.python_files]:
        try:
            source = project.sources.read(rel, kind)  # type: ignore[arg-type]
        except NotText as exc:
            diagnostics.append(diagnostic("P009", f"'{rel}' is {exc}", Location(file=rel, line=1, column=1)))
            continue
        except OutsideRoot as exc:
            listed = "worker_files" if kind == "worker" else "python_files"
            index = getattr(project, listed).index(rel)
            diagnostics.append(diagnostic("F002", f"{listed} entry {exc}", project.at(listed, index, key=False)))
            continue
        except OSError as exc:
            diagnostics.append(diagnostic("F001", f"cannot read '{rel}': {exc.strerror}", Location(file=rel, line=1, column=1)))
            continue
        if kind == "worker":
            workers.append(source)
    return workers


__all__ = ["LoadedProject", "ProjectNotFound", "find_project", "load", "read_sources", "expand_worker_files", "Pos", "decode"]

"""Stage 1, load: find the project, read project.json and every file it names into a source map."""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field
from pathlib import Path

from llm_do.bundle.errors import InputProblem
from llm_do.bundle.regular_files import what_instead

from .. import codes
from ..diagnostics import Diagnostic, Location, diagnostic
from ..legacy.upgrade import LEGACY_WORKER_SUFFIX, upgrade_manifest
from ..suggest import did_you_mean_file
from ..syntax.cascade import dropped_keys
from ..syntax.front_matter import has_entry_mark
from ..syntax.json_positions import json_positions
from ..syntax.json_reading import JsonProblem, read_json
from ..syntax.limits import MAX_PATTERN_CHARS
from ..syntax.manifest import Entry, ProjectManifest
from ..syntax.positions import LazyPositions, Pos, Positions, PositionTable
from ..syntax.project_glob import glob_project, has_magic, pattern_matches
from ..syntax.sources import (
    NotRegularSource,
    NotText,
    OutsideRoot,
    SourceFile,
    SourceMap,
    Unreadable,
    decode,
    lexically_confined,
    normalized,
    read_regular_file,
)
from ..syntax.validation import validate
from ..syntax.value_checks import first_unfit
from ..syntax.worker_forms import directory_tools_file

MANIFEST_NAME = "project.json"
IMPLICIT_ENTRY = "main.worker"
WORKER_SUFFIXES = (".worker", LEGACY_WORKER_SUFFIX)


class ProjectNotFound(InputProblem):
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
    directory_python: dict[str, str] = field(default_factory=dict)
    """A directory worker's own `tools.py` (not listed in python_files) -> its worker file: Python
    that belongs to that worker alone."""
    manifest_incomplete: frozenset[str] = frozenset()
    """Manifest keys whose value an error already reported dropped in whole or part (cascade.py)."""

    def collects(self, worker_file: str) -> bool:
        """Whether a worker file at this path (relative, `/`-separated) would be part of the
        project: a `worker_files` pattern covers it (any `.worker` file below the root of a
        project without project.json)."""
        patterns = ["**/*.worker"] if self.implicit else (self.manifest.worker_files if self.manifest else [])
        return any(pattern_matches(p, worker_file) for p in patterns)

    def at(self, *path: str | int, key: bool = True) -> Location:
        """A location in the manifest (the top of main.worker for an implicit project)."""
        if self.implicit:
            return Location(file=self.manifest_file, line=1, column=1)
        pos = self.manifest_positions.key(path) if key else self.manifest_positions.value(path)
        return Location(file=self.manifest_file, line=pos.line, column=pos.column)


def find_project(path: Path) -> tuple[Path, Path | None]:
    """The project root and its manifest (None for a directory with only main.worker). A manifest
    that is no regular file (a named pipe) is still the manifest: reading it says what it is."""
    if path.exists() and not path.is_dir():
        if path.suffix != ".json":
            raise ProjectNotFound(f"{path}: a project is a directory or its project.json")
        return path.parent.resolve(), path.parent.resolve() / path.name  # a link is the project's: read through it, confined
    if not path.is_dir():
        raise ProjectNotFound(f"{path}: no such file or directory")
    manifest = path / MANIFEST_NAME
    if manifest.exists() and not manifest.is_dir():
        return path.resolve(), path.resolve() / MANIFEST_NAME
    if (path / IMPLICIT_ENTRY).is_file() or _holds_a_marked_worker(path):
        return path.resolve(), None  # its entry: main.worker, or the worker marked `entry: true` (entry_mark)
    raise ProjectNotFound(f"{path}: no {MANIFEST_NAME}, no {IMPLICIT_ENTRY} and no worker marked `entry: true` here; "
                          "`llm-do init` starts a project")


def _holds_a_marked_worker(path: Path) -> bool:
    """A .worker file below `path` (nothing hidden, as an implicit project takes them) whose
    front matter says `entry: true`. Only a first look: the parse stage reads them for real."""
    for rel in _implicit_worker_files(path):
        try:
            text = decode(read_regular_file(os.path.join(str(path), rel)))
        except (OSError, NotText, Unreadable):
            continue
        if has_entry_mark(text):
            return True
    return False


def load(path: Path) -> tuple[LoadedProject, list[Diagnostic]]:
    root, manifest_path = find_project(path)
    sources = SourceMap(root)
    if manifest_path is None:
        project = LoadedProject(root=root, manifest_file=IMPLICIT_ENTRY,
                                manifest=ProjectManifest(version=1, entry=Entry(worker="main")),
                                manifest_positions=PositionTable(), implicit=True, sources=sources)
        project.worker_files = _implicit_worker_files(root)
        if IMPLICIT_ENTRY not in project.worker_files and project.worker_files:
            project.manifest_file = project.worker_files[0]  # until entry_mark finds the marked worker
        project.directory_python = _directory_python(project)
        return project, []
    manifest_file = manifest_path.relative_to(root).as_posix()
    diagnostics: list[Diagnostic] = []
    manifest, positions, incomplete = _read_manifest(sources, manifest_file, diagnostics)
    project = LoadedProject(root=root, manifest_file=manifest_file, manifest=manifest, manifest_positions=positions,
                            implicit=False, sources=sources, manifest_incomplete=incomplete)
    if manifest is not None:
        project.worker_files = expand_worker_files(project, diagnostics)
        project.python_files = _python_files(project, diagnostics)
        project.directory_python = _directory_python(project)
    return project, diagnostics


def _directory_python(project: LoadedProject) -> dict[str, str]:
    """The `tools.py` beside each `worker.worker`, unless python_files lists it (then it is the
    project's, for every worker)."""
    listed = set(project.python_files)
    out: dict[str, str] = {}
    for rel in project.worker_files:
        tools = directory_tools_file(rel)
        if tools is not None and tools not in listed and _not_regular(os.path.join(str(project.root), tools)) is None:
            out[tools] = rel
    return out


EDITOR_SCHEMA_KEY = "$schema"
"""A top-level key of project.json that llm-do ignores: the JSON Schema an editor validates it with."""


def _read_manifest(
    sources: SourceMap, manifest_file: str, diagnostics: list[Diagnostic]
) -> tuple[ProjectManifest | None, Positions, frozenset[str]]:
    """The manifest (None when unreadable), its positions, and the keys validation dropped."""
    empty = PositionTable()
    try:
        text = sources.read(manifest_file, "manifest").text
    except (NotText, Unreadable, OutsideRoot) as exc:
        code = exc.code if isinstance(exc, Unreadable) else codes.PATH_OUTSIDE_ROOT if isinstance(exc, OutsideRoot) else codes.NOT_TEXT
        said = str(exc) if isinstance(exc, OutsideRoot) else f"{MANIFEST_NAME} is {exc}"
        diagnostics.append(diagnostic(code, said, Location(file=manifest_file, line=1, column=1)))
        return None, empty, frozenset()
    read = read_json(text)
    if isinstance(read, JsonProblem):
        diagnostics.append(diagnostic(read.code, read.message, Location(file=manifest_file, line=read.line, column=read.column),
                                      hint=read.hint))
        return None, empty, frozenset()
    data = read.data
    lazy = LazyPositions(lambda: json_positions(text))
    positions: Positions = lazy
    if read.has_duplicates:
        for path, pos in lazy.table.duplicates:
            diagnostics.append(diagnostic(codes.DUPLICATE_KEY, f"duplicate key '{path[-1]}'",
                                          Location(file=manifest_file, line=pos.line, column=pos.column)))
    unfit = first_unfit(data)
    if unfit is not None:
        pos = positions.key(unfit.path) if unfit.at_key else positions.value(unfit.path)
        diagnostics.append(diagnostic(unfit.code, unfit.message, Location(file=manifest_file, line=pos.line, column=pos.column)))
        return None, empty, frozenset()
    if not isinstance(data, dict):
        diagnostics.append(diagnostic(codes.INVALID_VALUE,
                                      f"{MANIFEST_NAME} must be a JSON object", Location(file=manifest_file, line=1, column=1)))
        return None, empty, frozenset()
    editor_schema = data.pop(EDITOR_SCHEMA_KEY, None)  # for editors only (`llm-do init` writes it)
    if editor_schema is not None and not isinstance(editor_schema, str):
        pos = positions.value((EDITOR_SCHEMA_KEY,))
        diagnostics.append(diagnostic(codes.INVALID_VALUE, f"{EDITOR_SCHEMA_KEY}: the URL of the JSON Schema editors validate "
                                      f"{MANIFEST_NAME} with must be a string", Location(file=manifest_file, line=pos.line,
                                                                                         column=pos.column)))
    data, positions, found = upgrade_manifest(data, manifest_file, positions)
    diagnostics.extend(found)
    manifest, found = validate(ProjectManifest, data, manifest_file, positions)
    diagnostics.extend(found)
    return manifest, positions, dropped_keys(data, manifest) if found and manifest is not None else frozenset()


def _implicit_worker_files(root: Path) -> list[str]:
    """Every *.worker below the root, as `**/*.worker` would match: no hidden files or directories."""
    out: list[str] = []
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


def expand_worker_files(project: LoadedProject, diagnostics: list[Diagnostic]) -> list[str]:
    """worker_files in order: literal paths as given, each pattern's matches sorted, no repeats."""
    assert project.manifest is not None
    out: list[str] = []
    seen: set[str] = set()
    escaping: dict[str, tuple[str, _LazyLocation]] = {}
    """Files a pattern reaches through a symlink out, reported unless listed (and reported) by name."""
    for i, entry in enumerate(project.manifest.worker_files):
        at = _LazyLocation(project, ("worker_files", i))
        if not has_magic(entry):
            rel = _listed_file(project, entry, at, "worker", seen, diagnostics)
            if rel is not None:
                out.append(rel)
            else:
                escaping[normalized(entry)] = ("", at)
            continue
        try:
            lexically_confined(entry)
        except OutsideRoot as exc:
            diagnostics.append(diagnostic(codes.PATH_OUTSIDE_ROOT, f"worker_files entry {exc}", at))
            continue
        if len(entry) > MAX_PATTERN_CHARS:
            diagnostics.append(diagnostic(codes.LIMIT_EXCEEDED, f"a pattern of {len(entry)} characters, more than the "
                                                                f"{MAX_PATTERN_CHARS} a pattern may have", at))
            continue
        matches, outside, unreadable = _glob(project.sources, entry)
        for rel in outside:
            escaping.setdefault(rel, (entry, at))
        for rel, problem in unreadable:
            if rel not in seen:
                seen.add(rel)
                diagnostics.append(diagnostic(codes.NOT_A_REGULAR_FILE, f"pattern '{entry}' matches '{rel}', {problem}", at))
        if not matches and not outside and not unreadable:
            diagnostics.append(diagnostic(codes.GLOB_MATCHES_NOTHING, f"pattern '{entry}' matches no worker file", at))
        for rel in matches:
            if rel not in seen:
                seen.add(rel)
                out.append(rel)
    for rel, (pattern, at) in escaping.items():
        if pattern:
            diagnostics.append(diagnostic(codes.PATH_OUTSIDE_ROOT,
                                          f"pattern '{pattern}' matches '{rel}', which leads outside the project root", at))
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
        diagnostics.append(diagnostic(codes.PATH_OUTSIDE_ROOT, f"{listed} entry {exc}", at))
        return None
    rel = normalized(entry)
    if kind == "worker" and not rel.endswith(WORKER_SUFFIXES):
        diagnostics.append(diagnostic(codes.NOT_A_WORKER_FILE, f"'{entry}' is not a .worker file", at))
        return None
    problem = _not_regular(os.path.join(str(project.root), rel))
    if problem == "missing":
        diagnostics.append(diagnostic(codes.FILE_NOT_FOUND, f"{kind} file '{entry}' not found", at,
                                      hint=did_you_mean_file(rel, files_beside(project.root, rel))))
        return None
    if problem:
        diagnostics.append(diagnostic(codes.NOT_A_REGULAR_FILE, f"{kind} file '{entry}' is {problem}", at))
        return None
    if rel in seen:
        diagnostics.append(diagnostic(codes.DUPLICATE_FILE, f"'{entry}' is listed more than once", at))
        return None
    seen.add(rel)
    return rel


def files_beside(root: Path, rel: str) -> list[str]:
    """The files in the directory `rel` names a file of, as paths relative to the root."""
    parent = posixpath.dirname(rel)
    try:
        names = os.listdir(os.path.join(str(root), parent))
    except OSError:
        return []
    return [posixpath.join(parent, n) for n in names if os.path.isfile(os.path.join(str(root), parent, n))]


def _glob(sources: SourceMap, pattern: str) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """The worker files a pattern matches, sorted; those it matches through a symlink out; and
    those that are no regular file, with what they are."""
    root = str(sources.root)
    inside, outside, unreadable = [], [], []
    for rel in glob_project(root, lexically_confined(pattern)):
        if not rel.endswith(WORKER_SUFFIXES) or os.path.isdir(os.path.join(root, rel)):
            continue
        try:
            sources.confined(rel)
        except OutsideRoot:
            outside.append(rel)
            continue
        problem = _not_regular(os.path.join(root, rel))
        if problem == "missing":
            continue  # a dangling link: as glob, which never matched one
        if problem:
            unreadable.append((rel, problem))
        else:
            inside.append(rel)
    return inside, outside, unreadable


def _not_regular(path: str) -> str | None:
    """None for a regular file (or a link to one); "missing"; else what the path is instead."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return "missing"
    except OSError as exc:
        return f"unreadable ({exc.strerror})"
    return what_instead(st)


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
    listed = [(w, "worker") for w in project.worker_files] + [(p, "python") for p in project.python_files]
    for rel, kind in listed + [(p, "python") for p in project.directory_python]:
        try:
            source = project.sources.read(rel, kind)  # type: ignore[arg-type]
        except NotText as exc:
            diagnostics.append(diagnostic(codes.NOT_TEXT, f"'{rel}' is {exc}", Location(file=rel, line=1, column=1)))
            continue
        except NotRegularSource as exc:  # it changed since it was listed
            diagnostics.append(diagnostic(codes.NOT_A_REGULAR_FILE, f"'{rel}' is {exc}", project.at()))
            continue
        except Unreadable as exc:
            diagnostics.append(diagnostic(exc.code, f"'{rel}' is {exc}", Location(file=rel, line=1, column=1)))
            continue
        except OutsideRoot as exc:
            if rel in project.directory_python:
                diagnostics.append(diagnostic(codes.PATH_OUTSIDE_ROOT,
                                              f"'{rel}' {exc}", Location(file=project.directory_python[rel], line=1, column=1)))
                continue
            key = "worker_files" if kind == "worker" else "python_files"
            index = getattr(project, key).index(rel)
            diagnostics.append(diagnostic(codes.PATH_OUTSIDE_ROOT, f"{key} entry {exc}", project.at(key, index, key=False)))
            continue
        except OSError as exc:
            diagnostics.append(diagnostic(codes.FILE_NOT_FOUND,
                                          f"cannot read '{rel}': {exc.strerror}", Location(file=rel, line=1, column=1)))
            continue
        if kind == "worker":
            workers.append(source)
    return workers


__all__ = ["LoadedProject", "ProjectNotFound", "find_project", "load", "read_sources", "expand_worker_files", "Pos", "decode"]

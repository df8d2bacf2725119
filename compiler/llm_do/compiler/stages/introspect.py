"""Stage 3, introspect: learn the classes and tools of the project's Python.

By default the Python is imported in a subprocess (see `facts.child`); with `import_python`
false it is read with `ast` only. A project without Python skips this stage entirely.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .. import codes
from ..diagnostics import Diagnostic, diagnostic
from ..facts.no_python import NoPython, ProjectFacts
from ..legacy.upgrade import LEGACY_WORKER_SUFFIX
from ..syntax.schema_refs import RefProblem, SchemaRef, parse_ref
from ..syntax.sources import OutsideRoot
from .load import LoadedProject
from .parse import ParsedWorker

if TYPE_CHECKING:
    from ..facts.answers import ClassRequest
    from ..facts.cache import IntrospectionCache


@dataclass
class SchemaRefs:
    """Every parsed schema reference, by (worker file, key)."""

    refs: dict[tuple[str, str], SchemaRef] = field(default_factory=dict)

    def get(self, worker: ParsedWorker, key: str) -> SchemaRef | None:
        return self.refs.get((worker.file, key))


def collect_refs(workers: list[ParsedWorker]) -> tuple[SchemaRefs, list[Diagnostic]]:
    refs = SchemaRefs()
    diagnostics: list[Diagnostic] = []
    for worker in workers:
        for key in ("schema_in_ref", "schema_out_ref"):
            text = getattr(worker.front, key)
            if text is None:
                continue
            try:
                refs.refs[(worker.file, key)] = parse_ref(text, legacy=worker.legacy)
            except RefProblem as exc:
                diagnostics.append(diagnostic(exc.code, str(exc), worker.at(key), hint=exc.hint))
    return refs, diagnostics


def entry_function_ref(project: LoadedProject) -> tuple[SchemaRef | None, list[Diagnostic]]:
    """entry.function parsed as `PATH.py:NAME` (or `package.module:NAME`)."""
    text = project.manifest.entry_function if project.manifest else None
    if text is None:
        return None, []
    try:
        return parse_ref(text), []
    except RefProblem as exc:
        code = exc.code if exc.code is codes.PATH_OUTSIDE_ROOT else codes.UNKNOWN_ENTRY_FUNCTION
        message = str(exc).replace("class reference", "function reference").replace("class name", "function name")
        return None, [diagnostic(code, f"entry.function: {message}", project.at("entry", "function", key=False),
                                 hint="write `PATH.py:NAME`, e.g. `entry.py:main`")]


def introspect(
    project: LoadedProject,
    refs: SchemaRefs,
    entry_ref: SchemaRef | None,
    *,
    import_python: bool,
    entry_function: SchemaRef | None = None,
    cache: IntrospectionCache | None = None,
) -> ProjectFacts:
    """`entry_ref`: the entry worker's input schema; `entry_function`: the entry function, when
    the entry is one (its file must exist and stay in the root to be imported). With a `cache`, an
    answer kept from an earlier build whose checks still hold stands in for the child. A project
    with no Python to ask about gets `NoPython`, and loads none of the introspection machinery."""
    if entry_function is not None and entry_function.file is not None and not _inside(project, entry_function.file):
        entry_function = None  # resolve reports the missing file
    python_files = [*project.python_files, *project.directory_python]
    if not python_files and not refs.refs and entry_function is None:
        return NoPython(imported=import_python)
    from ..facts.answers import ClassRequest, FunctionRequest, Request
    from ..facts.static_reader import read_statically
    from ..facts.subprocess_runner import introspect as run_child

    classes: dict[str, ClassRequest] = {}
    for ref in refs.refs.values():
        classes.setdefault(ref.text, ClassRequest(ref=ref.text, module=ref.module, qualname=ref.qualname, file=ref.file))
    requests = [c for c in classes.values() if c.file is None or _inside(project, c.file)]
    if not import_python:
        return read_statically(project.sources, python_files, requests)
    entry_args = project.manifest.entry.args if project.manifest and project.manifest.entry else None
    validate = [(entry_ref.text, entry_args)] if entry_ref is not None and entry_args is not None else []
    agent_era = any(f.endswith(LEGACY_WORKER_SUFFIX) for f in project.worker_files)
    function = None
    if entry_function is not None:
        function = FunctionRequest(ref=entry_function.text, module=entry_function.module, qualname=entry_function.qualname,
                                   file=entry_function.file, args=entry_args)
    request = Request(root=str(project.root), python_files=python_files, classes=requests, validate_args=validate,
                      agent_era=agent_era, entry_function=function)
    if cache is None:
        return run_child(request, project.root)
    facts = cache.lookup(request, project.root)
    if facts is None:
        facts = run_child(request, project.root)
        cache.store(request, project.root, facts)
    return facts


def _inside(project: LoadedProject, rel: str) -> bool:
    """A referenced file that exists and stays in the root (through symlinks too): only those are imported."""
    try:
        return os.path.isfile(project.sources.confined(rel))
    except OutsideRoot:
        return False

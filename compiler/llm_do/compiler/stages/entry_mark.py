"""The entry marked in front matter (`entry: true`), as the `.agent` era's architecture put it:
a project without project.json starts with `main.worker`, or else with the one worker marked
`entry: true`; with project.json, `entry` there decides, and a mark must agree with it.

Part of the pipeline between parse and introspect: it decides the entry worker's name, which
introspection needs (the entry's input schema validates `entry.args`).
"""

from __future__ import annotations

from .. import codes
from ..diagnostics import Diagnostic, Location, Related, diagnostic
from ..syntax.manifest import Entry
from .load import IMPLICIT_ENTRY, LoadedProject
from .parse import ParsedWorker


def apply_entry_mark(loaded: LoadedProject, parsed: list[ParsedWorker]) -> list[Diagnostic]:
    """Make the marked worker the entry where nothing else names one; N014 where two places do."""
    manifest = loaded.manifest
    assert manifest is not None
    marked = [w for w in parsed if w.front.entry]
    diagnostics = [_twice(w, marked[0].at("entry", key=True), f"worker '{marked[0].name}' is marked `entry: true` too")
                   for w in marked[1:]]
    main_file = IMPLICIT_ENTRY in loaded.worker_files
    if loaded.implicit and not main_file:
        if not marked:  # load found a mark (`find_project`), in a file that failed to parse (reported)
            loaded.manifest_incomplete |= {"entry"}
            return []
        loaded.manifest_file = marked[0].file
        loaded.manifest = manifest.model_copy(update={"entry": Entry(worker=marked[0].name)})
        return diagnostics
    if not marked:
        return diagnostics
    first = marked[0]
    if loaded.implicit:
        main = next((w for w in parsed if w.file == IMPLICIT_ENTRY), None)
        if main is not None and main.name != first.name:
            diagnostics.append(_twice(first, Location(file=IMPLICIT_ENTRY, line=1, column=1),
                                      f"{IMPLICIT_ENTRY} is the entry of a project without project.json"))
        return diagnostics
    given = manifest.entry is not None and (manifest.entry.worker is not None or manifest.entry.function is not None)
    if not given:
        entry = manifest.entry.model_copy(update={"worker": first.name}) if manifest.entry else Entry(worker=first.name)
        loaded.manifest = manifest.model_copy(update={"entry": entry})
    elif manifest.entry is not None and manifest.entry.worker != first.name:
        key = "worker" if manifest.entry.worker is not None else "function"
        named = manifest.entry.worker or manifest.entry.function
        diagnostics.append(_twice(first, loaded.at("entry", key, key=False), f"{loaded.manifest_file} names '{named}' as the entry"))
    return diagnostics


def _twice(worker: ParsedWorker, other: Location, says: str) -> Diagnostic:
    return diagnostic(codes.ENTRY_MARKED_TWICE, f"worker '{worker.name}' is marked `entry: true`, but {says}",
                      worker.at("entry", key=True), hint="mark one entry only: remove `entry: true`, or the other entry",
                      related=[Related.at(other, "the other entry")])

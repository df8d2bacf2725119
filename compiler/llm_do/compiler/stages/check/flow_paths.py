"""F010: a `flows.paths` key that names no folder of the project labels nothing (red team L4)."""

from __future__ import annotations

from ... import codes
from ...analysis.call_graph import CallGraph
from ...analysis.flows.folders import unmatched_folders
from ...analysis.flows.labels import normalized_folder
from ...diagnostics import Diagnostic, diagnostic
from ..resolved import ResolvedProject


def check_flow_paths(project: ResolvedProject, graph: CallGraph) -> list[Diagnostic]:
    manifest = project.manifest
    if not manifest.flows.paths or codes.FLOWS_PATH_MATCHES_NOTHING.code in {c.upper() for c in manifest.suppress}:
        return []
    written = {normalized_folder(key): key for key in manifest.flows.paths}
    out: list[Diagnostic] = []
    for found in unmatched_folders(str(project.loaded.root), sorted(written)):
        key = written[found.key]
        label = manifest.flows.paths[key]
        if found.same_but_case is not None:
            message = (f"flows.paths '{key}' names no folder of the project: the folder is spelt "
                       f"'{found.same_but_case}' (on a case-insensitive filesystem it is the same folder, but labels "
                       f"match names exactly), so nothing is labelled {label}")
            hint = f"write '{found.same_but_case}'"
        elif found.glob:
            message = f"flows.paths '{key}' is a glob, which labels do not expand, so nothing is labelled {label}"
            hint = "name each folder (relative to the project root, `/`-separated)"
        elif found.file:
            message = f"flows.paths '{key}' names a file, not a folder, so nothing is labelled {label}"
            hint = "name the folder that holds it"
        else:
            message = f"flows.paths '{key}' names no folder of the project, so nothing is labelled {label}"
            hint = f"did you mean '{found.closest}'?"
        out.append(diagnostic(codes.FLOWS_PATH_MATCHES_NOTHING, message, project.loaded.at("flows", "paths", key), hint=hint))
    return out

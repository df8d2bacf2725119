"""The project's Python as `ast` reads it, once per build: the fingerprints (`lower`) and the
information-flow labels of undeclared tools (`flows.grant_labels`) share it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from llm_do.bundle.canonical import sha256_hex, tagged

from ..syntax.sources import NotText, OutsideRoot, SourceMap, Unreadable, decode, read_regular_file
from .fingerprint import CodeIndex

if TYPE_CHECKING:
    from ..stages.resolved import ResolvedProject


def project_code_index(project: ResolvedProject) -> CodeIndex:
    """The project's index, made on first use and kept on the project."""
    if project.code_index is None:
        project.code_index = code_index(project.loaded.sources)
    return project.code_index


def code_index(sources: SourceMap) -> CodeIndex:
    """The project's Python as the fingerprints read it: the build's sources, else the file read
    (not made a source: what the run imports is what the import hook verifies)."""
    def read(rel: str) -> str | None:
        found = sources.files.get(rel)
        if found is not None:
            return found.text
        try:
            text = decode(read_regular_file(sources.confined(rel)))
        except (OSError, OutsideRoot, NotText, Unreadable, ValueError):
            return None
        sources.also_read[rel] = tagged(sha256_hex(text.encode()))  # the build record's stamps
        return text
    return CodeIndex(read)

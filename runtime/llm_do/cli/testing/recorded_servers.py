"""What the cases' cassettes recorded of the project's remote MCP servers (`url`), as the listing the
build takes instead of reaching them: `llm-do test` replays offline, its build included. A case file
or cassette that cannot be read is skipped here; running the cases reports it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from llm_do.compiler.facts.answers import McpServerFact


def recorded_listings(project: Path) -> dict[str, McpServerFact]:
    """Server name -> its tools as the first cassette (in case order) that recorded it listed them."""
    from llm_do.compiler.facts.answers import McpServerFact, McpToolFact
    from llm_do.compiler.stages.load import ProjectNotFound, find_project
    from llm_do.runtime.recording.cassette import CassetteRefused, read_cassette

    from .cases import CaseProblem, case_files, load_case_file

    try:
        root = find_project(project)[0]
    except (ProjectNotFound, OSError):
        return {}
    out: dict[str, McpServerFact] = {}
    for path in case_files(root):
        try:
            cases = load_case_file(path, root)
        except CaseProblem:
            continue
        for loaded in cases:
            cassette = loaded.case.cassette
            if cassette is None or not loaded.beside(cassette).is_file():
                continue
            try:
                recorded = read_cassette(loaded.beside(cassette))
            except CassetteRefused:
                continue
            for server in recorded.remote_mcp:
                out.setdefault(server.name, McpServerFact(name=server.name, tools=[
                    McpToolFact(name=t.name, description=t.description, input_schema=t.parameters) for t in server.tools]))
    return out

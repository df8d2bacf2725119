"""Output formats for diagnostics: renderers over one list, nothing more.

`RENDERERS` is the family's table, as every report's (`report.Renderers`): each a `report.Renderer`
over `list[ProjectDiagnostics]`, imported when asked for (text needs rich, the others do not).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path

from ...diagnostics import Diagnostic
from .. import Renderer

FORMATS = {"text": "text:render_text", "json": "json:render_json", "sarif": "sarif:render_sarif",
           "github": "github:render_github"}
"""Each format's renderer, as `module:function` in this package."""


@dataclass(frozen=True)
class ProjectDiagnostics:
    """The diagnostics of one project, with how to name the project and reach its files."""

    project: str
    """The project as given on the command line (`.`, `examples/greeter`)."""
    root: Path
    """Its root directory, to read source lines and make paths relative to the working directory."""
    diagnostics: list[Diagnostic]
    files_as: str | None = None
    """Name files PREFIX + file instead of by their place on disk: a `git:REV:PATH` side lives in a
    temporary directory that is gone, and means nothing, by the time its diagnostics are read."""

    def shown(self, file: str) -> str:
        return self.files_as + file if self.files_as is not None else cwd_relative(self.root, file)


def counts(results: list[ProjectDiagnostics]) -> dict[str, int]:
    out = {"error": 0, "warning": 0, "info": 0}
    for r in results:
        for d in r.diagnostics:
            out[d.severity.value] += 1
    return out


def counted(tally: dict[str, int]) -> str:
    """"1 warning, 2 infos": the kinds that occur, errors first ('' for none)."""
    return ", ".join(f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in tally.items() if n)


def cwd_relative(root: Path, file: str) -> str:
    """A project file's path relative to the current directory (as SARIF and GitHub want it)."""
    import os

    return Path(os.path.relpath(root / file)).as_posix()


class _Renderers(Mapping[str, Renderer[list[ProjectDiagnostics]]]):
    """FORMATS as a `report.Renderers` table, each renderer imported on first use."""

    def __getitem__(self, fmt: str) -> Renderer[list[ProjectDiagnostics]]:
        module, _, name = FORMATS[fmt].partition(":")
        render: Renderer[list[ProjectDiagnostics]] = getattr(import_module(f"{__name__}.{module}"), name)
        return render

    def __iter__(self) -> Iterator[str]:
        return iter(FORMATS)

    def __len__(self) -> int:
        return len(FORMATS)


RENDERERS = _Renderers()

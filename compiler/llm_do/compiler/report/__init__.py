"""Reports: what a command prints about a project or a bundle, in the formats `--format` offers.

Every report family has one table from a format name to a `Renderer`, a function from the
report's data to the text printed (no trailing newline; the command decides where it goes):

- diagnostics (`lint`): `report.diagnostics.renderer(fmt)` over a list of `ProjectDiagnostics`;
- the call graph (`graph`): `graph_export.RENDERERS` over `GraphData`;
- capabilities: `capability_report.RENDERERS` over a `CapabilityReport`;
- diff: `diff_report.RENDERERS` (which still takes the `DiffInputs` beside the `BundleDiff`).

The last three are to move under `report/` with the bundle's views.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, TypeVar

Data = TypeVar("Data", contravariant=True)


class Renderer(Protocol[Data]):
    """One output format of one report: the report's data in, the text to print out."""

    def __call__(self, data: Data, /) -> str: ...


Renderers = Mapping[str, Renderer[Data]]
"""A report family's formats, by the name `--format` takes."""

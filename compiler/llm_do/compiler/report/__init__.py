"""Reports: what a command prints about a project or a bundle, in the formats `--format` offers.

Every report family has one table, `RENDERERS`, from a format name (what `--format` takes) to a
`Renderer`: the report's data in, the text printed out (no trailing newline; the command decides
where it goes). Every command prints a report the same way (`llm_do.cli.report_output`):

- `diagnostics` (`lint`): over a list of `ProjectDiagnostics` (each format imported when asked for);
- `graph`: over `GraphData`, the compiled call graph;
- `capabilities`: over a `CapabilityReport`;
- `diff`: over a `DiffReport` (the `BundleDiff` and what was compared).

`schemas` holds the JSON documents of `diff` and `capabilities` as pydantic models (runtime/llm_do/cli/schemas/).
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

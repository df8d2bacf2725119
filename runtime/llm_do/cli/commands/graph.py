"""`llm-do graph [PROJECT|bundle.lock] [--format text|json|mermaid|dot]`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from llm_do.bundle import reader
from llm_do.bundle.errors import BundleRefused
from llm_do.compiler.report.graph import RENDERERS, bundle_graph

from ..compile_options import no_cache_option
from ..errors import usage_problem
from ..report_output import format_option, print_report
from ._compile import as_report, compile_or_exit, print_diagnostics


@click.command()
@click.argument("target", default=".", type=click.Path(path_type=Path))
@format_option(RENDERERS)
@no_cache_option
def graph(target: Path, fmt: str, no_cache: bool) -> int:
    """Show the call graph of a project (compiled in memory) or of a bundle.lock."""
    if target.is_file() and target.suffix == ".lock":
        try:
            bundle = json.loads(reader.read(target).data)
        except BundleRefused as exc:
            raise usage_problem(str(exc)) from None
        except ValueError as exc:
            raise usage_problem(f"{target}: cannot read the bundle: {exc}") from None
    else:
        result = compile_or_exit(target, cache=not no_cache)
        if result.bundle is None:
            print_diagnostics([as_report(target.as_posix(), result)])
            return 1
        bundle = json.loads(result.bundle)
    print_report(RENDERERS, fmt, bundle_graph(bundle))
    return 0

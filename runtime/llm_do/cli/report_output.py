"""How a command prints a report (`lint`, `graph`, `capabilities`, `diff`), one way for all four:
`--format` picks a renderer from the report family's `RENDERERS` table (`llm_do.compiler.report`),
and the text it returns is printed."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, TypeVar

import click

if TYPE_CHECKING:
    from llm_do.compiler.report import Renderer

Data = TypeVar("Data")
F = TypeVar("F", bound=Callable[..., object])


def format_option(renderers: Mapping[str, object]) -> Callable[[F], F]:
    """`--format`, its choices the report family's formats (in the table's order), text by default."""
    return click.option("--format", "fmt", type=click.Choice(list(renderers)), default="text", show_default=True)


def print_report(renderers: Mapping[str, Renderer[Data]], fmt: str, data: Data, *, err: bool = False) -> None:
    """The report in format `fmt` on stdout (on stderr with `err`, as `lint`'s text is); nothing for an
    empty report. Styles are the renderer's to decide, so they are printed as they come."""
    rendered = renderers[fmt](data)
    if rendered:
        click.echo(rendered, err=err, color=True if err else None)

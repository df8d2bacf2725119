"""`llm-do explain CODE`."""

from __future__ import annotations

import click

from ..codes import RULES, rule
from ..suggest import did_you_mean
from ._common import EnvironmentProblem


@click.command()
@click.argument("code")
def explain(code: str) -> int:
    """Explain the diagnostic CODE (e.g. G001)."""
    found = rule(code)
    if found is None:
        hint = did_you_mean(code.upper(), RULES)
        raise EnvironmentProblem(f"unknown code '{code}'" + (f"; {hint}" if hint else "; codes are listed in spec/diagnostics.md"))
    click.echo(f"{found.code} {found.name} ({found.severity})\n\n{found.summary}\n\n{found.explanation}")
    return 0

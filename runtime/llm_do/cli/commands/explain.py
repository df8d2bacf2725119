"""`llm-do explain [CODE|NAME]`."""

from __future__ import annotations

import click

from llm_do.compiler.codes import GROUPS, RULES, rule
from llm_do.compiler.suggest import did_you_mean

from ..errors import ExitCode, usage_problem


@click.command()
@click.argument("code", required=False)
def explain(code: str | None) -> int:
    """Explain the diagnostic CODE (e.g. G001) or NAME (e.g. undeclared-recursion); without one,
    list every code by group."""
    if code is None:
        click.echo(code_list())
        return ExitCode.OK
    found = rule(code)
    if found is None:
        hint = did_you_mean(code.upper(), RULES) or did_you_mean(code.lower(), [r.name for r in RULES.values()])
        raise usage_problem(f"unknown code '{code}'; " + (hint or "`llm-do explain` lists the codes"))
    click.echo(f"{found.code} {found.name} ({found.severity})\n\n{found.summary}\n\n{found.explanation}")
    return ExitCode.OK


def code_list() -> str:
    """Every code, under the heading of its group, with its name, severity and summary."""
    blocks = []
    for letter, title in GROUPS.items():
        rules = [r for r in RULES.values() if r.code.startswith(letter)]
        if rules:
            width = max(len(r.name) for r in rules)
            lines = [f"  {r.code}  {r.name:<{width}}  {r.severity:<7}  {r.summary}" for r in rules]
            blocks.append(f"{letter}: {title}\n" + "\n".join(lines))
    return "\n\n".join(blocks)

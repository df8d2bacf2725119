"""The command-line options of durable runs, and `--durable [DB_URL]`'s parsing: click only, so
`exec` can offer them without loading anything of durable runs."""

from __future__ import annotations

from typing import Any

import click


def durable_option(command: Any) -> Any:
    """`--durable [DB_URL]`: a value only when it has a scheme (see `DurableAwareCommand`)."""
    return click.option("--durable", "durable", is_flag=False, flag_value="", default=None, metavar="[DB_URL]",
                        help="Run durably, recorded in DB_URL (sqlite:///PATH, postgresql://...; default "
                             "sqlite:///.llm-do/runs.sqlite beside the bundle).")(command)


def detach_option(command: Any) -> Any:
    return click.option("--detach-approvals", is_flag=True,
                        help="Durable runs: record an approval request and stop (exit 4) instead of waiting.")(command)


def db_option(command: Any) -> Any:
    return click.option("--db", "db", metavar="DB_URL",
                        help="The run database (default sqlite:///.llm-do/runs.sqlite in the current directory).")(command)


class DurableAwareCommand(click.Command):
    """`--durable` takes the next word only when it is a DB URL: `exec --durable "a prompt"` and
    `exec --durable BUNDLE` stay durable runs of that prompt or bundle."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--durable" not in args:
            return super().parse_args(ctx, args)
        from llm_do.runtime.durable.db_url import has_scheme

        fixed: list[str] = []
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "--":
                fixed.extend(args[i:])
                break
            if arg == "--durable" and i + 1 < len(args) and has_scheme(args[i + 1]):
                fixed.append(f"--durable={args[i + 1]}")
                i += 2
                continue
            fixed.append("--durable=" if arg == "--durable" else arg)
            i += 1
        return super().parse_args(ctx, fixed)

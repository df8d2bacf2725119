"""Entry point of the `llm-do` console script: a click group whose commands load lazily."""

from __future__ import annotations

import gc
import importlib
import os
import sys

import click

from llm_do.bundle.errors import InputProblem
from llm_do.bundle.version import VERSION

from .errors import CliError, ExitCode

# name -> "module:attribute", loaded on first use: the CLI composes the compiler and the runtime, and a
# command imports only what it uses (`exec` loads nothing of the compiler).
COMMANDS: dict[str, tuple[str, str]] = {
    "build": ("llm_do.cli.commands.build:build", "Compile a project into bundle.lock."),
    "lint": ("llm_do.cli.commands.lint:lint", "Check projects and report every problem."),
    "graph": ("llm_do.cli.commands.graph:graph", "Show the compiled call graph."),
    "capabilities": ("llm_do.cli.commands.capabilities:capabilities",
                     "Show what every worker can do, transitively, with the approvals on the way."),
    "diff": ("llm_do.cli.commands.diff:diff", "Compare what two versions of a project can do."),
    "explain": ("llm_do.cli.commands.explain:explain", "Explain a diagnostic code."),
    "init": ("llm_do.cli.commands.init:init", "Start a new project."),
    "schema": ("llm_do.cli.commands.schema:schema", "Print a JSON Schema editors validate llm-do's files with."),
    "migrate": ("llm_do.cli.commands.migrate:migrate", "Rewrite a .agent-era project to .worker files."),
    "keygen": ("llm_do.cli.commands.keygen:keygen", "Make an ed25519 key pair to sign locks with."),
    "exec": ("llm_do.cli.commands.exec:exec_", "Run a bundle."),
    "run": ("llm_do.cli.commands.run:run", "Build a project in memory and run it."),
    "chat": ("llm_do.cli.commands.chat:chat", "Talk with a bundle's entry worker, turn by turn."),
    "batch": ("llm_do.cli.commands.batch:batch", "Run a bundle's entry once per line of a JSON-lines file."),
    "test": ("llm_do.cli.commands.test:test", "Run a project's cases, replaying recorded model traffic offline."),
    "serve": ("llm_do.cli.commands.serve:serve", "Serve a bundle's workers as an MCP server."),
    "runs": ("llm_do.cli.commands.runs:runs", "List durable runs."),
    "resume": ("llm_do.cli.commands.runs:resume", "Continue a durable run whose process died."),
    "approvals": ("llm_do.cli.commands.runs:approvals", "List the approvals durable runs wait for."),
    "approve": ("llm_do.cli.commands.runs:approve", "Approve a call a durable run waits for."),
    "deny": ("llm_do.cli.commands.runs:deny", "Deny a call a durable run waits for."),
    "revise": ("llm_do.cli.commands.runs:revise", "Ask a durable run's model to change a call it waits on."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        target = COMMANDS[name][0]
        module, _, attr = target.partition(":")
        command: click.Command = getattr(importlib.import_module(module), attr)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # Help lists the summaries without importing every command.
        with formatter.section("Commands"):
            formatter.write_dl([(name, help_) for name, (_, help_) in COMMANDS.items()])


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(VERSION, "--version", prog_name="llm-do", message="%(prog)s %(version)s")
def cli() -> None:
    """llm-do: compile multi-worker LLM projects into a locked bundle and run them."""


def main(argv: list[str] | None = None) -> None:
    """Run the CLI: click errors as one line, Ctrl-C quiet, no traceback for anything."""
    try:
        code = cli.main(args=argv, prog_name="llm-do", standalone_mode=False)
    except click.exceptions.Exit as exc:
        code = exc.exit_code
    except click.ClickException as exc:
        exc.show()
        code = exc.exit_code
    except InputProblem as exc:  # what a user gave cannot be used (a script, a DB URL, a run): exit 2
        CliError(str(exc), ExitCode.USAGE).show()
        code = ExitCode.USAGE
    except (KeyboardInterrupt, click.exceptions.Abort):
        code = ExitCode.INTERRUPTED
    except BrokenPipeError:
        sys.stderr.close()
        code = ExitCode.FAILED
    except Exception as exc:  # a bug in llm-do itself: one line, the traceback only on request
        if os.environ.get("LLM_DO_DEBUG"):
            raise
        click.echo(f"llm-do: internal error: {type(exc).__name__}: {exc} (set LLM_DO_DEBUG=1 for the traceback)", err=True)
        code = ExitCode.INTERNAL
    sys.exit(int(code) if isinstance(code, int) else 0)


def run() -> None:
    """The `llm-do` command: `main`, then an exit that does not tear every object down one by one.

    Ending the interpreter collects everything it ever allocated (pydantic-ai, and for a durable
    run DBOS and SQLAlchemy): about a tenth of a short `exec`, more of `exec --durable`
    (bench/durable_bench.py). Frozen (`gc.freeze`), what is still alive is left to the process's
    end; modules are still cleared and atexit handlers still run. Not in `main`, which tests call
    in their own process."""
    try:
        main()
    finally:
        gc.freeze()


if __name__ == "__main__":
    run()

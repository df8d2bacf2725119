"""The options commands share, declared once: the run options (one frozen `RunOptions`), a run's
input, `--record`, `--durable`, `--detach-approvals`, `--db`, and the rules that tie options
together (`--model` or `--script`, `--strict-script` needs `--script`, ...). The options of the
commands that compile are in `compile_options`.

Click only: `exec` offers all of this without loading anything of the runs it configures."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

import click

from .errors import CliError, ExitCode
from .inputs import InputOptions
from .optional_value import OptionalValueOption

R = TypeVar("R")
Approvals = Literal["approve_all", "reject_all"]
Command = Callable[..., R]
Params = Mapping[str, object]


@dataclass(frozen=True, kw_only=True)
class RunOptions:
    """What every kind of run takes from the command line (`exec`, `run`, `chat`, `batch`, `serve`,
    `resume`): models, scripts, approvals, events, time, verbosity, telemetry."""

    model: str | None = None
    """`--model`: every worker on this model (`test` is pydantic-ai's TestModel)."""
    script: Path | None = None
    """`--script`: scripted model turns for an offline run."""
    strict_script: bool = False
    """`--strict-script`: turns the run leaves unused fail it."""
    approvals: Approvals | None = None
    """`--approve-all` / `--reject-all`; None: the bundle's approval mode."""
    events: str | None = None
    """`--events PATH`: the event stream as JSON lines (`-`: stdout)."""
    timeout: float | None = None
    verbose: int = 0
    """`-v`: a trace on stderr; `-vv`: and the model messages."""
    otel: bool = False
    max_cost: float | None = None
    """`--max-cost USD`: what the command's runs may spend together (`llm_do.runtime.budget`)."""
    accept_unpriced: bool = False
    """`--accept-unpriced`: with --max-cost, a response or a model with no price goes on, with a note."""

    @property
    def events_to_stdout(self) -> bool:
        """stdout carries the event stream, so the output is not printed there."""
        return self.events == "-"


@dataclass(frozen=True)
class OptionRule:
    """Options that do not go together: when `broken(params)`, the command ends with `message` as
    a usage error, click's (with the usage line) or one line (`one_line`); both exit 2."""

    broken: Callable[[Params], object]
    message: str
    one_line: bool = False

    def check(self, params: Params) -> None:
        if self.broken(params):
            if self.one_line:
                raise CliError(self.message, ExitCode.USAGE)
            raise click.UsageError(self.message)


def given(value: object) -> bool:
    """An option is given when its value is neither None (an option with a value) nor False (a flag)."""
    return value is not None and value is not False


def excludes(a: str, b: str, message: str, *, one_line: bool = False) -> OptionRule:
    """Option `a` and option `b` are not given together."""
    return OptionRule(lambda p: given(p[a]) and given(p[b]), message, one_line)


def needs(a: str, b: str, message: str, *, one_line: bool = False) -> OptionRule:
    """Option `a` is given only with option `b`."""
    return OptionRule(lambda p: given(p[a]) and not given(p[b]), message, one_line)


RUN_RULES = (
    excludes("model", "script", "--model and --script both replace the models; give one"),
    excludes("approve_all", "reject_all", "--approve-all and --reject-all contradict each other; give one"),
    needs("strict_script", "script", "--strict-script needs --script"),
    needs("accept_unpriced", "max_cost", "--accept-unpriced needs --max-cost"),
)
"""The run options' own rules, checked after the command's (`checked`)."""


def checked(*rules: OptionRule) -> Callable[[Command[R]], Command[R]]:
    """Check `rules`, in order, against the command's parameters before the command runs."""

    def decorate(command: Command[R]) -> Command[R]:
        @functools.wraps(command)
        def checking(*args: object, **params: object) -> R:
            for rule in rules:
                rule.check(params)
            return command(*args, **params)

        return checking

    return decorate


def _add(command: Command[R], options: list[Callable[[Command[R]], Command[R]]]) -> Command[R]:
    for option in reversed(options):
        command = option(command)
    return command


RUN_PARAMS = ("model", "script", "strict_script", "approve_all", "reject_all", "events_to", "timeout", "verbose", "otel",
              "max_cost", "accept_unpriced")


def run_options(command: Command[R]) -> Command[R]:
    """The run options, handed to the command as one `opts: RunOptions`, their rules checked."""
    return _with_run_options(command, "Seconds for the whole run.")


def run_options_per(unit: str) -> Callable[[Command[R]], Command[R]]:
    """`run_options` of a command whose --timeout bounds each `unit` (`input`, `turn`, `call`)."""
    return lambda command: _with_run_options(command, f"Seconds for each {unit}.")


def _with_run_options(command: Command[R], timeout_help: str) -> Command[R]:
    @functools.wraps(command)
    def with_options(*args: object, **params: object) -> R:
        for rule in RUN_RULES:
            rule.check(params)
        raw = {name: params.pop(name) for name in RUN_PARAMS}
        return command(*args, opts=_run_options(raw), **params)

    return _add(with_options, [
        click.option("--model", help="Run every worker on this model (`test` is pydantic-ai's TestModel)."),
        click.option("--script", type=click.Path(path_type=Path), help="Scripted model turns (JSON or YAML) for an offline run."),
        click.option("--strict-script", is_flag=True, help="With --script: turns the run leaves unused fail it."),
        click.option("--approve-all", is_flag=True,
                     help="Approve every call that needs approval, except an egress the information-flow guard asks "
                          "about (a frame holding private data and untrusted content): that is denied, with a line on stderr."),
        click.option("--reject-all", is_flag=True, help="Reject every call that needs approval."),
        click.option("--events", "events_to", metavar="PATH", help="Write the event stream as JSON lines to PATH (`-`: stdout)."),
        click.option("--timeout", type=click.FloatRange(min=0, min_open=True), metavar="SECONDS", help=timeout_help),
        click.option("-v", "--verbose", count=True, help="Trace the run on stderr (-vv: and the model messages)."),
        click.option("--otel", is_flag=True, help="Send OpenTelemetry spans over OTLP (also LLM_DO_OTEL=1; needs llm-do[otel])."),
        click.option("--max-cost", "max_cost", type=click.FloatRange(min=0, min_open=True), metavar="USD",
                     help="Stop before a request once the runs have spent USD (they never exceed it by more than one request's "
                          "worst case)."),
        click.option("--accept-unpriced", is_flag=True,
                     help="With --max-cost: go on past a model or response with no known price (counted at its worst case)."),
    ])


def _run_options(raw: dict[str, object]) -> RunOptions:
    model = raw["model"]
    assert model is None or isinstance(model, str)
    if model:
        from llm_do.bundle.names import model_problem

        if problem := model_problem(model):
            raise CliError(f"--model: {problem[0]}" + (f"; {problem[1]}" if problem[1] else ""), ExitCode.USAGE)
    approvals: Approvals | None = "approve_all" if raw["approve_all"] else "reject_all" if raw["reject_all"] else None
    script, events, timeout, verbose = raw["script"], raw["events_to"], raw["timeout"], raw["verbose"]
    assert (script is None or isinstance(script, Path)) and (events is None or isinstance(events, str))
    assert (timeout is None or isinstance(timeout, float)) and isinstance(verbose, int)
    max_cost = raw["max_cost"]
    assert max_cost is None or isinstance(max_cost, float)
    return RunOptions(model=model, script=script, strict_script=bool(raw["strict_script"]), approvals=approvals,
                      events=events, timeout=timeout, verbose=verbose, otel=bool(raw["otel"]), max_cost=max_cost,
                      accept_unpriced=bool(raw["accept_unpriced"]))


def input_options(command: Command[R]) -> Command[R]:
    """The options that give one run its input (`exec`, `run`), handed over as `inputs: InputOptions`."""

    @functools.wraps(command)
    def with_input(*args: object, input_json: str | None, attach: tuple[str, ...], **params: object) -> R:
        return command(*args, inputs=InputOptions(input_json=input_json, attach=attach), **params)

    return _add(with_input, [
        click.option("--input-json", help="The entry worker's input as a JSON object (replaces entry.args)."),
        click.option("--attach", multiple=True, type=click.Path(), help="Attach a file (repeatable)."),
    ])


def record_option(command: Command[R]) -> Command[R]:
    """`--record DIR` (`exec`, `run`, `chat`, `batch`): the run's model traffic as a cassette (recording.py)."""
    return click.option("--record", "record", type=click.Path(path_type=Path, file_okay=False), metavar="DIR",
                        help="Record the run's model traffic as a cassette in DIR (for `llm-do test`).")(command)


def durable_option(command: Command[R]) -> Command[R]:
    """`--durable [DB_URL]`: the next word is its value only when it is a DB URL (optional_value.py)."""
    return click.option("--durable", "durable", cls=_DbUrlOption, is_flag=False, flag_value="", default=None, metavar="[DB_URL]",
                        help="Run durably, recorded in DB_URL (sqlite:///PATH, a relative PATH from the current directory; "
                             "postgresql://...; default .llm-do/runs.sqlite beside the bundle).")(command)


def detach_option(command: Command[R]) -> Command[R]:
    return click.option("--detach-approvals", is_flag=True,
                        help="Durable runs: record an approval request and stop (exit 4) instead of waiting.")(command)


def db_option(command: Command[R]) -> Command[R]:
    return click.option("--db", "db", metavar="DB_URL",
                        help="The run database (default .llm-do/runs.sqlite of the project the current directory is in; a relative "
                             "sqlite:/// path is taken from the current directory).")(command)



def _is_db_url(word: str) -> bool:
    from llm_do.runtime.durable.db_url import has_scheme

    return has_scheme(word)


class _DbUrlOption(OptionalValueOption):
    accepts = staticmethod(_is_db_url)

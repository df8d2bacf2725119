"""What every kind of run takes from the command line (`exec`, `run`, `chat`, `serve`, `batch`,
`resume`): the run options, the `RuntimeConfig` they make, and how a failed run ends (one line, an
exit code). One home, so a new command behaves like `exec` without copying it."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

EXIT_FAILED, EXIT_USAGE, EXIT_REFUSED = 1, 2, 3


class ExecError(click.ClickException):
    """One line on stderr and an exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.exit_code = code

    def show(self, file: Any = None) -> None:
        click.echo(f"llm-do: {self.message}", err=True)


def run_options(command: Any) -> Any:
    """The options every kind of run takes: models, scripts, approvals, events, time, verbosity."""
    options = [
        click.option("--model", help="Run every worker on this model (`test` is pydantic-ai's TestModel)."),
        click.option("--script", type=click.Path(path_type=Path), help="Scripted model turns (JSON or YAML) for an offline run."),
        click.option("--strict-script", is_flag=True, help="With --script: turns the run leaves unused fail it."),
        click.option("--approve-all", is_flag=True, help="Approve every call that needs approval."),
        click.option("--reject-all", is_flag=True, help="Reject every call that needs approval."),
        click.option("--events", "events_to", help="Write the event stream as JSON lines to PATH (`-`: stdout)."),
        click.option("--timeout", type=click.FloatRange(min=0, min_open=True), help="Seconds for the whole run."),
        click.option("-v", "--verbose", count=True, help="Trace the run on stderr (-vv: and the model messages)."),
        click.option("--otel", is_flag=True, help="Send OpenTelemetry spans over OTLP (also LLM_DO_OTEL=1; needs llm-do[otel])."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


def input_options(command: Any) -> Any:
    """The options that give one run its input (`exec`, `run`)."""
    options = [
        click.option("--input-json", help="The entry worker's input as a JSON object (replaces entry.args)."),
        click.option("--attach", multiple=True, type=click.Path(), help="Attach a file (repeatable)."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


class RunSetup:
    """The configuration the run options make, and what must happen when the runs are over.

    One setup may serve many runs (chat turns, a batch's inputs, a server's calls): the script
    player is shared, so a script's turns for a worker are consumed in order across all of them."""

    def __init__(self, config: Any, player: Any, strict_script: bool, events_file: Any, events_to: str | None) -> None:
        self.config = config
        self.player = player
        self.strict_script = strict_script
        self._events_file = events_file
        self.events_to_stdout = events_to == "-"
        self.on_close: list[Callable[[], None]] = []
        """What must end with the runs (the OpenTelemetry exporter, flushed)."""

    def close(self) -> None:
        if self._events_file is not None:
            self._events_file.close()
            self._events_file = None
        while self.on_close:
            self.on_close.pop()()

    def check_script_used(self) -> None:
        """Unused scripted turns: a note on stderr, or a failure with --strict-script."""
        if self.player is None or not self.player.unplayed():
            return
        from llm_do.runtime.script import describe_unplayed

        text = describe_unplayed(self.player.unplayed())
        if self.strict_script:
            raise ExecError(f"run failed: {text} (--strict-script)", EXIT_FAILED)
        click.echo(f"llm-do: {text}", err=True)


def prepare_run(bundle: Any, *, model: str | None, script: Path | None, approve_all: bool, reject_all: bool,
                events_to: str | None, timeout: float | None, verbose: int, strict_script: bool = False,
                otel: bool = False, interactive: bool | None = None, extra_sinks: list[Callable[[Any], None]] | None = None,
                **config: Any) -> RunSetup:
    """Check the run options against each other and the bundle, and make the run's configuration.
    `config` passes further `RuntimeConfig` fields (services, a callback) from the command."""
    if model and script:
        raise click.UsageError("--model and --script both replace the models; give one")
    if approve_all and reject_all:
        raise click.UsageError("--approve-all and --reject-all contradict each other; give one")
    if model:
        from llm_do.bundle.names import model_problem

        if problem := model_problem(model):
            raise ExecError(f"--model: {problem[0]}" + (f"; {problem[1]}" if problem[1] else ""), EXIT_USAGE)
    if strict_script and script is None:
        raise click.UsageError("--strict-script needs --script")
    approval_mode = "approve_all" if approve_all else "reject_all" if reject_all else None
    from llm_do.runtime.config import RuntimeConfig

    model_for = None
    player = None
    if script is not None:
        from llm_do.runtime.script import ScriptError, ScriptPlayer, check_script, load_script

        try:
            loaded = load_script(script)
            check_script(loaded, bundle)
        except ScriptError as exc:
            raise ExecError(str(exc), EXIT_USAGE) from None
        player = ScriptPlayer(loaded)
        model_for = player.model_for
    sinks: list[Callable[[Any], None]] = list(extra_sinks or [])
    events_file = None
    if events_to:  # events cost nothing unless someone listens
        from llm_do.runtime.events import JsonLinesSink
    if events_to == "-":
        sinks.append(JsonLinesSink(sys.stdout))
    elif events_to:
        try:
            events_file = open(events_to, "w", encoding="utf-8")
        except OSError as exc:
            raise ExecError(f"cannot write events to {events_to}: {exc.strerror}", EXIT_USAGE) from None
        sinks.append(JsonLinesSink(events_file))
    if verbose:  # -v: the trace; -vv: and each call's model messages
        from .trace import Trace

        trace = Trace(lambda line: click.echo(line, err=True), verbose)
        sinks.append(trace.event)
        if verbose >= 2 and "on_message" not in config:
            config["on_message"] = trace.messages
    runtime_config = RuntimeConfig(
        approval_mode=approval_mode,  # type: ignore[arg-type]
        interactive=sys.stdin.isatty() if interactive is None else interactive,
        timeout=timeout,
        model=model,
        model_for=model_for,
        on_event=(lambda e: [s(e) for s in sinks]) if sinks else None,
        verbosity=verbose,
        **config,
    )
    setup = RunSetup(runtime_config, player, strict_script, events_file, events_to)
    if otel or os.environ.get("LLM_DO_OTEL", "") not in ("", "0"):
        from llm_do.runtime.telemetry import TelemetryProblem, instrument_cli

        try:
            setup.on_close.append(instrument_cli())
        except TelemetryProblem as exc:
            setup.close()
            raise ExecError(str(exc), EXIT_USAGE) from None
    return setup


def run_failure(exc: BaseException, verbose: int = 0) -> click.ClickException:
    """How a run that raised ends on the command line: refused (3), bad input (2), failed (1), or
    quietly for a closed pipe."""
    from llm_do.runtime.errors import InputProblem, failure_line, innermost

    if isinstance(exc, click.ClickException):
        return exc
    if isinstance(exc, InputProblem):
        return ExecError(str(exc), EXIT_USAGE)
    refused = refusal(exc)
    if refused is not None:  # the run reached Python the bundle did not verify
        return ExecError(str(refused), EXIT_REFUSED)
    broken = broken_pipe(exc)
    if broken is not None:
        raise broken from None
    details = getattr(innermost(exc), "details", None)
    if details and (verbose or os.environ.get("LLM_DO_DEBUG")):
        click.echo(details, err=True)
    return ExecError(f"run failed: {failure_line(exc)}", EXIT_FAILED)


def print_output(output: Any) -> None:
    """A run's output on stdout: a model as indented JSON, anything else as text."""
    if hasattr(output, "model_dump_json"):
        click.echo(output.model_dump_json(indent=2))
    else:
        click.echo(output)


def refusal(exc: BaseException) -> BaseException | None:
    """The `BundleRefused` that ended a run, if one did (possibly inside an exception group)."""
    from llm_do.runtime.bundle import BundleRefused
    from llm_do.runtime.errors import innermost

    exc = innermost(exc)
    return exc if isinstance(exc, BundleRefused) else None


def broken_pipe(exc: BaseException) -> BrokenPipeError | None:
    """The closed pipe behind a failure (`--events - | head`): the run ends quietly, not as a
    failed run."""
    from llm_do.runtime.errors import innermost

    visited: set[int] = set()
    seen: BaseException | None = exc
    while seen is not None and id(seen) not in visited:  # a chain of causes can loop back on itself
        visited.add(id(seen))
        seen = innermost(seen)
        if isinstance(seen, BrokenPipeError):
            return seen
        visited.add(id(seen))
        seen = seen.__cause__ or seen.__context__
    return None

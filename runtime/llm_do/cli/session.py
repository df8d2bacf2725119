"""One run session: what every command that runs a bundle does around its own job (`exec`, `run`,
`chat`, `batch`, `serve`, `resume` and the durable runs).

    with run_session(bundle, opts, interactive=False) as session:
        ...  # the command's own job: make the runtime, run, serve, answer

The session makes the run's configuration from the run options (`prepare_run`: scripts, event
sinks, the `-v` trace, OpenTelemetry), drives the live display, stops what a failed run's tools
left running, closes what the runs opened, reports a script's unused turns, maps a failure to one
line and an exit code (`run_failure`), and prints the output unless stdout carries the events.
(Whether the lock is the build of its sources is decided before, when it is loaded:
`lock_options`.) One setup may serve many runs (chat turns,
a batch's inputs, a server's calls): the script player is shared, so a script's turns for a worker
are consumed in order across all of them."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Literal

import click

from .errors import CliError, ExitCode
from .options import RunOptions

if TYPE_CHECKING:
    from llm_do.runtime.budget import Budget
    from llm_do.runtime.bundle import LoadedBundle
    from llm_do.runtime.config import RuntimeConfig
    from llm_do.runtime.events import RuntimeEvent
    from llm_do.runtime.runtime import Runtime
    from llm_do.runtime.script import ScriptPlayer

    from .display.progress import Progress

    Sink = Callable[[RuntimeEvent], None]

Children = Literal["on_failure", "always", "leave"]
"""Processes the runs' tools started and left: stopped when the session fails (a run stopped or
failed: what its abandoned tools started goes too), always (a server's), or left alone."""


class RunSetup:
    """The configuration the run options make, and what must happen when the runs are over."""

    def __init__(self, config: RuntimeConfig, player: ScriptPlayer | None, opts: RunOptions,
                 events_file: IO[str] | None) -> None:
        self.config = config
        self.player = player
        self.opts = opts
        self._events_file = events_file
        self.on_close: list[Callable[[], None]] = []
        """What must end with the runs (the OpenTelemetry exporter, flushed)."""

    @property
    def events_to_stdout(self) -> bool:
        return self.opts.events_to_stdout

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
        if self.opts.strict_script:
            raise CliError(f"run failed: {text} (--strict-script)", ExitCode.FAILED)
        click.echo(f"llm-do: {text}", err=True)


def prepare_run(bundle: LoadedBundle, opts: RunOptions, *, interactive: bool | None = None,
                sinks: Sequence[Sink] = (), stream: bool = False) -> RunSetup:
    """Check the run options against the bundle and make the run's configuration; `sinks` hear
    every event, `stream` asks for the models' text as it arrives."""
    from llm_do.runtime.config import RuntimeConfig

    model_for = None
    player = None
    if opts.script is not None:
        from llm_do.runtime.script import ScriptPlayer, check_script, load_script

        loaded = load_script(opts.script)  # a ScriptProblem is a usage error (exit 2, cli/main.py)
        check_script(loaded, bundle)
        player = ScriptPlayer(loaded)
        model_for = player.model_for
    listeners: list[Sink] = list(sinks)
    events_file = None
    if opts.events:  # events cost nothing unless someone listens
        from llm_do.runtime.events import JsonLinesSink
    if opts.events == "-":
        listeners.append(JsonLinesSink(sys.stdout))
    elif opts.events:
        try:
            events_file = open(opts.events, "w", encoding="utf-8")
        except OSError as exc:
            raise CliError(f"cannot write events to {opts.events}: {exc.strerror}", ExitCode.USAGE) from None
        listeners.append(JsonLinesSink(events_file))
    on_message = None
    if opts.verbose:  # -v: the trace; -vv: and each call's model messages
        from .display.trace import Trace

        trace = Trace(lambda line: click.echo(line, err=True), opts.verbose)
        listeners.append(trace.event)
        if opts.verbose >= 2:
            on_message = trace.messages
    config = RuntimeConfig(
        budget=_budget(bundle, opts),
        approval_mode=opts.approvals,
        interactive=sys.stdin.isatty() if interactive is None else interactive,
        timeout=opts.timeout,
        model=opts.model,
        model_for=model_for,
        on_event=_broadcast(listeners) if listeners else None,
        stream=stream,
        on_message=on_message,
        verbosity=opts.verbose,
    )
    setup = RunSetup(config, player, opts, events_file)
    if opts.otel or os.environ.get("LLM_DO_OTEL", "") not in ("", "0"):
        from llm_do.runtime.telemetry import TelemetryProblem, instrument_cli

        try:
            setup.on_close.append(instrument_cli())
        except TelemetryProblem as exc:
            setup.close()
            raise CliError(str(exc), ExitCode.USAGE) from None
    return setup


def _budget(bundle: LoadedBundle, opts: RunOptions) -> Budget | None:
    """`--max-cost`: one budget for every run of the command (an in-process one; a durable batch
    keeps its own in the run database, `durable_batch`)."""
    if opts.max_cost is None:
        return None
    from decimal import Decimal

    from llm_do.runtime.budget import LocalBudget

    accept = opts.accept_unpriced or (bundle.text.get("cost") or {}).get("unpriced") == "accept"
    return LocalBudget(Decimal(str(opts.max_cost)), accept_unpriced=accept, on_note=_note)


def _broadcast(sinks: list[Sink]) -> Sink:
    def each(event: RuntimeEvent) -> None:
        for sink in sinks:
            sink(event)

    return each


def terminal_progress(opts: RunOptions) -> Progress | None:
    """The live progress display (display/progress.py) when stderr is a terminal that nothing else
    writes to (no -v trace, no event stream on stdout); None otherwise, and rich stays unloaded."""
    if opts.verbose or opts.events_to_stdout or not sys.stderr.isatty() or os.environ.get("TERM") == "dumb":
        return None
    from .display.progress import Progress

    return Progress()


class RunSession:
    """What a command's own job is given: the bundle, the run's configuration, the live display."""

    def __init__(self, bundle: LoadedBundle, setup: RunSetup, progress: Progress | None) -> None:
        self.bundle = bundle
        self.setup = setup
        self.progress = progress
        self.output: object = _NO_OUTPUT
        """Set by the command: printed on stdout when the session ends well (unless stdout carries the events)."""
        self.script_check = True
        """Whether a script's unused turns are reported at the end (not for a run that only stopped to wait)."""
        self.closing_note: str | None = None
        """A line for stderr after the output (`flow_denied_status`)."""

    @property
    def config(self) -> RuntimeConfig:
        return self.setup.config

    def runtime(self) -> Runtime:
        """A `Runtime` for the bundle, watched by the live display."""
        from llm_do.runtime.runtime import Runtime

        runtime = Runtime(self.bundle, self.config)
        if self.progress is not None:
            self.progress.watch(runtime)
        return runtime

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
        self.setup.close()
        budget = self.config.budget
        if budget is not None:  # the run summary: what the budget says now, success or not
            from llm_do.runtime.budget import spent_line

            try:
                spent = budget.spent()
            except Exception:  # a shared budget's database out of reach: the failure that ends the command says why
                return
            _note(spent_line(budget.limit, spent))

    def finish(self) -> None:
        if self.script_check:
            self.setup.check_script_used()
        if self.output is not _NO_OUTPUT and not self.setup.events_to_stdout:
            print_output(self.output)
        _note(self.closing_note)

    def flow_denied_status(self, runtime: Runtime) -> ExitCode:
        """`exec` and `run`: the run's work was cut short by calls the taint guard denied that
        `--approve-all` (or `approval_mode: approve_all`) does not approve: one line at the end, exit 5."""
        denied = runtime.flow_denied
        if not denied:
            return ExitCode.OK
        calls = f"{denied} call{'s' if denied != 1 else ''}"
        self.closing_note = (f"the run finished, but the information-flow guard denied {calls} that --approve-all does "
                             f"not approve (exit {int(ExitCode.FLOW_DENIED)}; accept the flow in project.json's "
                             "flows.accept, or run where someone can answer)")
        return ExitCode.FLOW_DENIED


_NO_OUTPUT = object()


@contextmanager
def run_session(bundle: LoadedBundle, opts: RunOptions, *, interactive: bool | None = None,
                progress: Progress | None = None, sinks: Sequence[Sink] = (), stream: bool = False,
                children: Children = "on_failure") -> Iterator[RunSession]:
    """Run the command's job in a session (see the module)."""
    from llm_do.toolkit.processes import children as children_of
    from llm_do.toolkit.processes import kill_new_descendants

    live: list[Sink] = [progress] if progress is not None else []
    setup = prepare_run(bundle, opts, interactive=interactive, sinks=[*live, *sinks], stream=stream or bool(live))
    session = RunSession(bundle, setup, progress)
    before = children_of(os.getpid()) if children != "leave" else set()
    try:
        try:
            yield session
        except BaseException:
            if children == "on_failure":
                kill_new_descendants(before)
            raise
        finally:
            if children == "always":
                kill_new_descendants(before)
            session.close()
    except Exception as exc:
        raise run_failure(exc, opts.verbose) from None
    session.finish()


def _note(text: str | None) -> None:
    if text:
        click.echo(f"llm-do: {text}", err=True)


def run_failure(exc: BaseException, verbose: int = 0) -> click.ClickException:
    """How a run that raised ends on the command line: refused (3), bad input (2), failed (1), or
    quietly for a closed pipe."""
    from llm_do.runtime.errors import InputProblem, failure_line, innermost

    if isinstance(exc, click.ClickException):
        return exc
    if isinstance(exc, InputProblem):
        return CliError(str(exc), ExitCode.USAGE)
    refused = refusal(exc)
    if refused is not None:  # the run reached Python the bundle did not verify
        return CliError(str(refused), ExitCode.REFUSED)
    broken = broken_pipe(exc)
    if broken is not None:
        raise broken from None
    details = getattr(innermost(exc), "details", None)
    if details and (verbose or os.environ.get("LLM_DO_DEBUG")):
        click.echo(details, err=True)
    return CliError(f"run failed: {failure_line(exc)}", ExitCode.FAILED)


def print_output(output: object) -> None:
    """A run's output on stdout: a model as indented JSON, anything else as text."""
    dump = getattr(output, "model_dump_json", None)
    click.echo(dump(indent=2) if dump is not None else output)


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

"""`llm-do exec [BUNDLE] [PROMPT] ...`: run a bundle. Imports nothing of the compiler, no rich,
no YAML (unless the script is YAML): start-up stays close to pydantic-ai's own."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

DEFAULT_BUNDLE = "bundle.lock"
EXIT_FAILED, EXIT_USAGE, EXIT_REFUSED = 1, 2, 3


class ExecError(click.ClickException):
    """One line on stderr and an exit code."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.exit_code = code

    def show(self, file: Any = None) -> None:
        click.echo(f"llm-do: {self.message}", err=True)


def split_positionals(args: tuple[str, ...]) -> tuple[Path, str | None]:
    """A lone positional naming an existing file or directory is the bundle; otherwise it is the
    prompt. A directory stands for its bundle.lock."""
    if len(args) > 2:
        raise click.UsageError("expected at most BUNDLE and PROMPT")
    if len(args) == 2:
        return bundle_path(Path(args[0])), args[1]
    if len(args) == 1 and (Path(args[0]).is_file() or Path(args[0]).is_dir()):
        return bundle_path(Path(args[0])), None
    return bundle_path(Path(DEFAULT_BUNDLE)), args[0] if args else None


def bundle_path(given: Path) -> Path:
    """The bundle file to run; a missing one is a usage error (exit 2): refusal (exit 3) is for a
    bundle that exists and cannot be run."""
    if given.is_dir():
        lock = given / DEFAULT_BUNDLE
        if lock.is_file():
            return lock
        raise ExecError(f"{given} has no {DEFAULT_BUNDLE}: run `llm-do build {given}` to create it, "
                        f"or `llm-do run {given}` to build and run it at once", EXIT_USAGE)
    if not given.exists():
        raise ExecError(f"{given}: no such bundle; run `llm-do build` to create it, or `llm-do run` "
                        "to build and run a project at once", EXIT_USAGE)
    return given


def run_input(runtime: Any, prompt: str | None, input_json: str | None, attach: tuple[str, ...]) -> dict[str, Any]:
    """entry.args, replaced by --input-json; PROMPT sets `input`, --attach adds attachments."""
    data = dict(runtime.bundle.entry.get("args") or {})
    if input_json is not None:
        try:
            data = json.loads(input_json)
        except json.JSONDecodeError as exc:
            raise ExecError(f"--input-json is not valid JSON: {exc.msg} (column {exc.colno})", EXIT_USAGE) from None
        if not isinstance(data, dict):
            raise ExecError("--input-json must be a JSON object", EXIT_USAGE)
    entry = runtime.bundle.entry["worker"]
    fields = runtime.input_class(runtime.bundle.worker(entry)).model_fields
    if not data and prompt is None and any(f.is_required() for f in fields.values()):
        raise ExecError(f"the entry worker '{entry}' needs an input: give a PROMPT, --input-json, or entry.args in project.json",
                        EXIT_USAGE)
    if prompt is not None:
        if "input" not in fields:
            raise ExecError(f"the entry worker takes {', '.join(fields)}, not a prompt; pass --input-json", EXIT_USAGE)
        data["input"] = prompt
    if attach:
        if "attachments" not in fields:
            raise ExecError("the entry worker takes no attachments", EXIT_USAGE)
        for path in attach:
            if Path(path).is_dir():
                raise ExecError(f"--attach {path}: is a directory; attach files", EXIT_USAGE)
        data["attachments"] = list(data.get("attachments") or []) + [str(Path(p).resolve()) for p in attach]
    return data


def describe(event: Any) -> str:
    """-v: an event as one readable line."""
    d = event.to_dict()
    who = f"[{d.get('worker', '')}@{d.get('depth', '')}] " if "worker" in d else ""
    kind = d.pop("event")
    for key in ("worker", "depth"):
        d.pop(key, None)
    detail = " ".join(f"{k}={json.dumps(v, ensure_ascii=False, default=str)[:200]}" for k, v in d.items())
    return f"llm-do: {who}{kind} {detail}".rstrip()


def run_options(command: Any) -> Any:
    """The options `exec` and `run` share."""
    options = [
        click.option("--input-json", help="The entry worker's input as a JSON object (replaces entry.args)."),
        click.option("--attach", multiple=True, type=click.Path(), help="Attach a file (repeatable)."),
        click.option("--model", help="Run every worker on this model (`test` is pydantic-ai's TestModel)."),
        click.option("--script", type=click.Path(path_type=Path), help="Scripted model turns (JSON or YAML) for an offline run."),
        click.option("--strict-script", is_flag=True, help="With --script: turns the run leaves unused fail it."),
        click.option("--approve-all", is_flag=True, help="Approve every call that needs approval."),
        click.option("--reject-all", is_flag=True, help="Reject every call that needs approval."),
        click.option("--events", "events_to", help="Write the event stream as JSON lines to PATH (`-`: stdout)."),
        click.option("--timeout", type=click.FloatRange(min=0, min_open=True), help="Seconds for the whole run."),
        click.option("-v", "--verbose", count=True, help="Print what happens to stderr."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@click.command(name="exec")
@click.argument("positionals", nargs=-1, metavar="[BUNDLE] [PROMPT]")
@run_options
def exec_(positionals: tuple[str, ...], **options: Any) -> int:
    """Run BUNDLE (default ./bundle.lock; a directory stands for its bundle.lock) from its entry worker.

    Exit codes: 0 done, 1 the run failed or timed out, 2 usage error (no such bundle, too),
    3 bundle refused (stale Python or tampered), 130 interrupted.
    """
    from llm_do.runtime.bundle import BundleRefused, load_bundle

    path, prompt = split_positionals(positionals)
    try:
        bundle = load_bundle(path)
    except BundleRefused as exc:
        raise ExecError(str(exc), EXIT_REFUSED) from None
    from llm_do.runtime.stale_sources import stale_check

    stale_note = stale_check(bundle)
    try:
        code = run_bundle(bundle, prompt, **options)
    except KeyboardInterrupt:
        raise  # quietly
    except BaseException:
        _note(stale_note())
        raise
    _note(stale_note())
    return code


def _note(text: str | None) -> None:
    if text:
        click.echo(f"llm-do: {text}", err=True)


def run_bundle(bundle: Any, prompt: str | None, *, input_json: str | None, attach: tuple[str, ...], model: str | None,
               script: Path | None, approve_all: bool, reject_all: bool, events_to: str | None, timeout: float | None,
               verbose: int, strict_script: bool = False) -> int:
    """Run a loaded bundle as the CLI does: options in, output on stdout, exit code out."""
    if model and script:
        raise click.UsageError("--model and --script both replace the models; give one")
    if approve_all and reject_all:
        raise click.UsageError("--approve-all and --reject-all contradict each other; give one")
    if model:
        from llm_do.runtime.model_names import model_problem

        if problem := model_problem(model):
            raise ExecError(f"--model: {problem[0]}" + (f"; {problem[1]}" if problem[1] else ""), EXIT_USAGE)
    if strict_script and script is None:
        raise click.UsageError("--strict-script needs --script")
    approval_mode = "approve_all" if approve_all else "reject_all" if reject_all else None
    from llm_do.runtime.config import RuntimeConfig
    from llm_do.runtime.errors import InputProblem, failure_line, innermost
    from llm_do.runtime.runtime import Runtime

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
    sinks = []
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
    if verbose:
        sinks.append(lambda e: click.echo(describe(e), err=True))
    config = RuntimeConfig(
        approval_mode=approval_mode,  # type: ignore[arg-type]
        interactive=sys.stdin.isatty(),
        timeout=timeout,
        model=model,
        model_for=model_for,
        on_event=(lambda e: [s(e) for s in sinks]) if sinks else None,
        verbosity=verbose,
    )
    runtime = Runtime(bundle, config)
    from llm_do.runtime.child_processes import children, kill_new_descendants

    before = children(os.getpid())
    try:
        data = run_input(runtime, prompt, input_json, attach)
        try:
            result = runtime.run(data)
        except BaseException:  # stopped or failed: what its abandoned tools started goes too
            kill_new_descendants(before)
            raise
    except click.ClickException:
        raise
    except InputProblem as exc:
        raise ExecError(str(exc), EXIT_USAGE) from None
    except Exception as exc:
        refused = _refusal(exc)
        if refused is not None:  # the run reached Python the bundle did not verify
            raise ExecError(str(refused), EXIT_REFUSED) from None
        broken = _broken_pipe(exc)
        if broken is not None:
            raise broken from None
        details = getattr(innermost(exc), "details", None)
        if details and (verbose or os.environ.get("LLM_DO_DEBUG")):
            click.echo(details, err=True)
        raise ExecError(f"run failed: {failure_line(exc)}", EXIT_FAILED) from None
    finally:
        if events_file is not None:
            events_file.close()
    if player is not None and player.unplayed():
        from llm_do.runtime.script import describe_unplayed

        if strict_script:
            raise ExecError(f"run failed: {describe_unplayed(player.unplayed())} (--strict-script)", EXIT_FAILED)
        click.echo(f"llm-do: {describe_unplayed(player.unplayed())}", err=True)
    if events_to != "-":
        output = result.output
        if hasattr(output, "model_dump_json"):
            click.echo(output.model_dump_json(indent=2))
        else:
            click.echo(output)
    return 0


def _refusal(exc: BaseException) -> BaseException | None:
    """The `BundleRefused` that ended a run, if one did (possibly inside an exception group)."""
    from llm_do.runtime.bundle import BundleRefused
    from llm_do.runtime.errors import innermost

    exc = innermost(exc)
    return exc if isinstance(exc, BundleRefused) else None


def _broken_pipe(exc: BaseException) -> BrokenPipeError | None:
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

"""`llm-do exec [BUNDLE] [PROMPT] ...`: run a bundle. Imports nothing of the compiler, no rich,
no YAML (unless the script is YAML): start-up stays close to pydantic-ai's own."""

from __future__ import annotations

import json
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
    """A lone positional naming an existing file is the bundle; otherwise it is the prompt."""
    if len(args) > 2:
        raise click.UsageError("expected at most BUNDLE and PROMPT")
    if len(args) == 2:
        return Path(args[0]), args[1]
    if len(args) == 1 and Path(args[0]).is_file():
        return Path(args[0]), None
    return Path(DEFAULT_BUNDLE), args[0] if args else None


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
    """Run BUNDLE (default ./bundle.lock) from its entry worker.

    Exit codes: 0 done, 1 the run failed, 2 usage error, 3 bundle refused (stale or tampered).
    """
    from llm_do.runtime.bundle import BundleRefused, load_bundle

    bundle_path, prompt = split_positionals(positionals)
    try:
        bundle = load_bundle(bundle_path)
    except BundleRefused as exc:
        raise ExecError(str(exc), EXIT_REFUSED) from None
    return run_bundle(bundle, prompt, **options)


def run_bundle(bundle: Any, prompt: str | None, *, input_json: str | None, attach: tuple[str, ...], model: str | None,
               script: Path | None, approve_all: bool, reject_all: bool, events_to: str | None, timeout: float | None,
               verbose: int, strict_script: bool = False) -> int:
    """Run a loaded bundle as the CLI does: options in, output on stdout, exit code out."""
    if model and script:
        raise click.UsageError("--model and --script both replace the models; give one")
    if approve_all and reject_all:
        raise click.UsageError("--approve-all and --reject-all contradict each other; give one")
    if strict_script and script is None:
        raise click.UsageError("--strict-script needs --script")
    approval_mode = "approve_all" if approve_all else "reject_all" if reject_all else None
    from llm_do.runtime.config import RuntimeConfig
    from llm_do.runtime.errors import InputProblem
    from llm_do.runtime.events import JsonLinesSink
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
        interactive=sys.stdin.isatty() and sys.stderr.isatty(),
        timeout=timeout,
        model=model,
        model_for=model_for,
        on_event=(lambda e: [s(e) for s in sinks]) if sinks else None,
        verbosity=verbose,
    )
    runtime = Runtime(bundle, config)
    try:
        data = run_input(runtime, prompt, input_json, attach)
        result = runtime.run(data)
    except click.ClickException:
        raise
    except InputProblem as exc:
        raise ExecError(str(exc), EXIT_USAGE) from None
    except Exception as exc:
        raise ExecError(f"run failed: {_one_line(exc)}", EXIT_FAILED) from None
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


def _one_line(exc: BaseException) -> str:
    """The innermost meaningful message of an error, on one line, never a traceback."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    from llm_do.runtime.errors import LlmDoError

    if isinstance(exc, LlmDoError):
        text = str(exc)
    else:
        text = f"{type(exc).__name__}: {exc}"
    return " ".join(text.split())[:1000]

"""`--record DIR` (`exec`, `run`, `chat`, `batch`): the run's model traffic written as a cassette in
DIR, named after the worker the run starts with (`DIR/main.json`; a batch's inputs
`DIR/main.line-N.json`). The recorder (`llm_do.runtime.recording`) is imported only here, and this
module only when --record is given (the option itself is declared in `options`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .errors import CliError, ExitCode

if TYPE_CHECKING:
    from llm_do.runtime.bundle import LoadedBundle
    from llm_do.runtime.config import RuntimeConfig
    from llm_do.runtime.recording.recorder import Recorder
    from llm_do.runtime.recording.redaction import Redactor


class Recording:
    """One cassette being recorded, and where it goes."""

    def __init__(self, bundle: LoadedBundle, directory: Path, worker: str | None, suffix: str = "",
                 script: Path | None = None) -> None:
        """`script`: the run plays it (`--script`); the cassette names it when it is in the project,
        so that `llm-do test --record` can record the cassette again by playing it."""
        from llm_do.runtime.recording.recorder import Recorder

        self.worker = worker or _entry_label(bundle)
        self.path = directory / f"{self.worker}{suffix}.json"
        played = _relative(str(script.resolve()), bundle.root) if script is not None else None
        self.recorder: Recorder = Recorder(bundle, self.worker, played if isinstance(played, str) and
                                           not Path(played).is_absolute() else None)
        self.redactor = redactor_for(bundle)
        self.root = bundle.root

    def config(self, config: RuntimeConfig) -> RuntimeConfig:
        """`config` recording too: every call's model wrapped, the events heard."""
        return self.recorder.config(config)

    def turn(self, data: object) -> None:
        """A turn's input; attachments inside the project as paths relative to it (`--attach` makes
        them absolute), so the cassette is the same on every machine."""
        from llm_do.runtime.events import jsonable

        value = jsonable(data)
        if isinstance(value, dict) and isinstance(value.get("attachments"), list):
            value = {**value, "attachments": [_relative(item, self.root) for item in value["attachments"]]}
        self.recorder.inputs.append(value)

    def answered(self, output: object) -> None:
        from llm_do.runtime.events import jsonable

        self.recorder.outputs.append(jsonable(output))

    def failed(self, exc: BaseException) -> None:
        from llm_do.runtime.errors import failure_line

        self.recorder.failure = failure_line(exc)

    def save(self, quiet: bool = False) -> Path:
        from llm_do.runtime.recording.cassette import write_cassette

        try:
            write_cassette(self.path, self.recorder.cassette(self.redactor))
        except OSError as exc:
            raise CliError(f"--record: cannot write {self.path} ({exc.strerror})", ExitCode.USAGE) from None
        if self.recorder.denied:
            denied = ", ".join(sorted(set(self.recorder.denied)))
            click.echo(f"llm-do: warning: the recorded run asked for calls that were denied ({denied}); a case replaying "
                       f"{self.path.name} replays those denials", err=True)
        warn_sensitive_reads(self.path, self.recorder)
        if not quiet:
            click.echo(f"llm-do: recorded {self.path}", err=True)
        return self.path


def warn_sensitive_reads(path: Path, recorder: Recorder) -> None:
    """One warning per path the run read that the project keeps in (it is listed in the cassette's
    `alerts` too)."""
    for read in sorted(recorder.alerts.values(), key=lambda r: r.path):
        why = "labelled private" if read.why == "private" else "denied by an approval rule of the project"
        if read.attached:
            click.echo(f"llm-do: warning: the run attached {read.path} ({why}) to {read.worker}'s call of {read.tool}; "
                       f"the cassette {path} keeps its digest, not its bytes, but what the model answered may tell of it",
                       err=True)
        else:
            click.echo(f"llm-do: warning: the run read {read.path} ({why}, by {read.tool} of {read.worker}); what it "
                       f"returned is in the cassette {path}", err=True)


def _relative(item: object, root: Path) -> object:
    if isinstance(item, str) and Path(item).is_absolute() and Path(item).is_relative_to(root.resolve()):
        return Path(item).relative_to(root.resolve()).as_posix()
    return item


def _entry_label(bundle: LoadedBundle) -> str:
    """The entry worker's name, or the entry function's name (a file name needs no `file.py:`)."""
    function = bundle.entry_function
    return str(function["qualname"]) if function is not None else str(bundle.entry["worker"])


def redactor_for(bundle: LoadedBundle) -> Redactor:
    """The environment's credentials, the bundle's `${VAR}`s and the project's patterns."""
    from llm_do.runtime.recording.redaction import RedactionProblem, Redactor, project_patterns, secret_values

    try:
        patterns = project_patterns(bundle.root)
    except RedactionProblem as exc:
        raise CliError(f"--record: {exc}", ExitCode.USAGE) from None
    return Redactor(secret_values(os.environ, bundle.text.data), patterns)

"""One run's input from the command line: PROMPT, `--input-json` and `--attach` (`exec`, `run`,
`exec --durable`), read against the entry's (or a worker's) input schema."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import CliError, ExitCode

if TYPE_CHECKING:
    from llm_do.runtime.runtime import Runtime


@dataclass(frozen=True, kw_only=True)
class InputOptions:
    """`--input-json` and `--attach`, as `options.input_options` hands them to a command."""

    input_json: str | None = None
    """The input as a JSON object (replaces entry.args)."""
    attach: tuple[str, ...] = ()
    """Files attached to the input."""


def run_input(runtime: Runtime, prompt: str | None, inputs: InputOptions, worker: str | None = None) -> dict[str, Any]:
    """entry.args, replaced by --input-json; PROMPT sets `input`, --attach adds attachments.
    With `worker` (exec --worker) the input is that worker's: entry.args are the entry's, not used."""
    data: dict[str, Any] = dict(runtime.bundle.entry.get("args") or {}) if worker is None else {}
    if inputs.input_json is not None:
        try:
            data = json.loads(inputs.input_json)
        except json.JSONDecodeError as exc:
            raise CliError(f"--input-json is not valid JSON: {exc.msg} (column {exc.colno})", ExitCode.USAGE) from None
        if not isinstance(data, dict):
            raise CliError("--input-json must be a JSON object", ExitCode.USAGE)
    if worker is not None:
        spec = runtime.bundle.worker(worker)
        if spec is None:
            from .params import no_such_worker

            raise no_such_worker("--worker", worker, runtime.bundle.worker_names())
        fields = runtime.input_class(spec).model_fields
        what, where = f"the worker '{worker}'", "give a PROMPT or --input-json"
    else:
        function = runtime.bundle.entry_function
        what = f"the entry function '{function['name']}'" if function else f"the entry worker '{runtime.bundle.entry['worker']}'"
        fields = runtime.entry_input_class().model_fields
        where = "give a PROMPT, --input-json, or entry.args in project.json"
    if not data and prompt is None and any(f.is_required() for f in fields.values()):
        raise CliError(f"{what} needs an input: {where}", ExitCode.USAGE)
    if prompt is not None:
        if "input" not in fields:
            raise CliError(f"{what} takes {', '.join(fields)}, not a prompt; pass --input-json", ExitCode.USAGE)
        data["input"] = prompt
    if inputs.attach:
        if "attachments" not in fields:
            raise CliError(f"{what} takes no attachments", ExitCode.USAGE)
        for path in inputs.attach:
            if Path(path).is_dir():
                raise CliError(f"--attach {path}: is a directory; attach files", ExitCode.USAGE)
        data["attachments"] = list(data.get("attachments") or []) + [str(Path(p).resolve()) for p in inputs.attach]
    return data

"""S007: entry.args validates against the entry's input schema (a worker's, or an entry function's)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from ... import codes
from ...analysis.call_graph import CallGraph
from ...diagnostics import Diagnostic, diagnostic
from ..resolved import ResolvedProject


def check_entry_args(project: ResolvedProject, graph: CallGraph) -> list[Diagnostic]:
    manifest = project.manifest
    if manifest.entry is None or manifest.entry.args is None:
        return []
    function = project.entry_function
    if function is not None:
        fact = function.fact
        if fact is None or not fact.found or fact.problem or fact.error:
            return []
        takes = fact.input.qualname if fact.input else "PromptInput (input, attachments)"
        return _args_diagnostics(project, fact.args_errors, f"the entry function '{function.label}' takes {takes}")
    entry = project.workers.get(project.entry)
    if entry is None:
        return []
    args = manifest.entry.args
    if entry.input_ref is None:
        from llm_do.runtime.args import PromptInput  # the run's input models: only for entry.args of a prompt worker

        try:
            PromptInput.model_validate(args)
            return []
        except ValidationError as exc:
            errors = [{"loc": list(e["loc"]), "msg": e["msg"]} for e in exc.errors(include_url=False)]
    else:
        check = next((c for c in project.facts.args_checks if c.ref == entry.input_ref.text), None)
        if check is None:
            return []
        errors = check.errors
    takes = entry.input_ref.qualname if entry.input_ref else "PromptInput (input, attachments)"
    return _args_diagnostics(project, errors, f"the entry worker '{entry.name}' takes {takes}")


def _args_diagnostics(project: ResolvedProject, errors: list[dict[str, Any]], hint: str) -> list[Diagnostic]:
    out = []
    for err in errors:
        loc = tuple(err["loc"])
        path = ("entry", "args", *loc)
        at = project.loaded.at(*path, key=False)
        where = ".".join(str(p) for p in loc) or "args"
        message = err["msg"]
        out.append(diagnostic(codes.INVALID_ENTRY_ARGS,
                              f"entry.args.{where}: {message[0].lower() + message[1:]}" if loc else f"entry.args: {message}",
                              at, hint=hint))
    return out

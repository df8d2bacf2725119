"""Resolving `entry.function`: a Python function as the entry, and the workers it may call.

Part of stage 4 (resolve): the entry function becomes a node of the call graph, named by its label,
with an edge to each worker of `entry.calls` (every worker without it, with a warning).
"""

from __future__ import annotations

import os
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .. import codes
from ..diagnostics import Diagnostic, Location, diagnostic
from ..suggest import did_you_mean
from ..syntax.schema_refs import SchemaRef
from .load import LoadedProject

if TYPE_CHECKING:
    from ..facts.answers import FunctionFact


@dataclass
class ResolvedEntryFunction:
    """`entry.function`: a Python function that orchestrates workers, as the graph sees it."""

    label: str
    """As written (`entry.py:main`): its node in the call graph, which no worker name can clash
    with (worker names have no `.` or `:`)."""
    ref: SchemaRef | None
    """None when the text is not a `PATH.py:NAME` reference (reported)."""
    at: Location
    calls: dict[str, Location | None] = field(default_factory=dict)
    """Workers it may call, with the `entry.calls` item that says so (None: undeclared)."""
    calls_declared: bool = True
    """False without `entry.calls`: then it may call every worker."""
    calls_unknown: bool = False
    """`entry.calls` names a worker whose file failed to load (reported)."""
    fact: FunctionFact | None = None
    """What introspection found; None when it did not look (--no-import, or no such file)."""


def resolve_entry_function(
    loaded: LoadedProject, ref: SchemaRef | None, fact: FunctionFact | None, workers: Collection[str],
    unknown_workers: Collection[str], any_worker_unknown: bool, diagnostics: list[Diagnostic]
) -> ResolvedEntryFunction:
    """entry.function: never with entry.worker; its file exists; the name is a function that can
    take a context and an input; entry.calls names workers (without it, every worker)."""
    manifest = loaded.manifest
    assert manifest is not None and manifest.entry is not None and manifest.entry.function is not None
    at = loaded.at("entry", "function", key=False)
    fn = ResolvedEntryFunction(ref.text if ref else manifest.entry.function.strip(), ref, at)
    if manifest.entry.worker is not None:
        diagnostics.append(diagnostic(codes.ENTRY_CONFLICT,
                                      "the entry is a worker or a function, never both: entry.worker and entry.function are given",
                                      loaded.at("entry", "worker"), hint="remove entry.worker, or entry.function"))
    if ref is not None and ref.file is not None and not os.path.isfile(os.path.join(loaded.root, ref.file)):
        diagnostics.append(diagnostic(codes.FILE_NOT_FOUND, f"entry.function: file '{ref.file}' not found", at))
    elif ref is not None:
        fn.fact = fact
        _check_function_fact(fn, at, diagnostics)
    names = manifest.entry.calls
    if names is None:
        fn.calls_declared = False
        fn.calls = dict.fromkeys(sorted(workers))
        diagnostics.append(diagnostic(codes.ENTRY_CALLS_UNDECLARED,
                                      f"entry function '{fn.label}' declares no calls, so the compiler cannot see which workers "
                                      "it calls; it may call every worker", at,
                                      hint='list them: "calls": ["worker", ...] in entry'))
        return fn
    for i, name in enumerate(names):
        item = loaded.at("entry", "calls", i, key=False)
        if name in fn.calls:
            diagnostics.append(diagnostic(codes.DUPLICATE_REFERENCE, f"'{name}' is listed twice in entry.calls", item))
        elif name in workers:
            fn.calls[name] = item
        elif name in unknown_workers or any_worker_unknown:
            fn.calls_unknown = True
        else:
            diagnostics.append(diagnostic(codes.UNKNOWN_CALLED_WORKER, f"entry.calls names '{name}', which is not a worker", item,
                                          hint=did_you_mean(name, workers)))
    return fn


def _check_function_fact(fn: ResolvedEntryFunction, at: Location, diagnostics: list[Diagnostic]) -> None:
    fact, ref = fn.fact, fn.ref
    if fact is None or fact.error is not None or ref is None:
        return  # not imported (--no-import), or its module failed: Y001 says so
    if not fact.found:
        diagnostics.append(diagnostic(codes.UNKNOWN_ENTRY_FUNCTION,
                                      f"'{ref.file or ref.module}' defines no function '{ref.qualname}'", at,
                                      hint=did_you_mean(ref.qualname, fact.candidates)))
    elif fact.problem is not None:
        diagnostics.append(diagnostic(codes.UNKNOWN_ENTRY_FUNCTION, f"entry function '{ref.qualname}' {fact.problem}", at,
                                      hint="an entry function takes a context (annotated CallContext, or named ctx) "
                                           "and an input: `async def main(ctx, input)`"))
    elif fact.input is not None and fact.input.abstract:
        diagnostics.append(diagnostic(codes.PROMPT_MESSAGES_MISSING,
                                      f"'{fact.input.qualname}' does not implement prompt_messages()", at,
                                      hint="def prompt_messages(self) -> list[str | Attachment]: ..."))
    elif fact.input is not None and fact.input.schema_error:
        diagnostics.append(diagnostic(codes.NOT_A_MODEL, f"'{fact.input.qualname}' has no JSON Schema: {fact.input.schema_error}", at))

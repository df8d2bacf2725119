"""Which workers declassify: a worker whose output schema can carry no free text returns no words a
third party wrote, so its callers take in no untrusted content from it (spec/language.md,
"Declassifying callees"; the judge is `llm_do.bundle.declassify`, which the runtime checks each
output with)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...stages.resolved import ResolvedWorker


def free_text_reason(worker: ResolvedWorker) -> str | None:
    """Why the worker's output can carry free text (None: it cannot); a worker without an output
    schema answers in text."""
    from llm_do.bundle.declassify import free_text

    output = worker.output_class
    if output is None or worker.output_ref is None or not output.json_schema:
        return "it answers in text"
    return free_text(output.json_schema)


def declassifies(worker: ResolvedWorker) -> bool:
    """Whether the worker's output can carry no free text (the bundle's `declassifies`)."""
    return worker.output_class is not None and free_text_reason(worker) is None

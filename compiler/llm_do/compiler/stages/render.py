"""Stage 5b, render: each worker's instructions from its body's template.

Its own module, apart from `lower`: `lint` renders (template errors are diagnostics) but does
not build the bundle document, so it does not load `lower`."""

from __future__ import annotations

from ..diagnostics import Diagnostic
from ..syntax.worker_forms import worker_directory
from ..templates.render import TemplateContext, TemplateUnit, render_body
from .resolved import ResolvedProject


def render_instructions(project: ResolvedProject) -> tuple[dict[str, str], list[Diagnostic]]:
    """Each worker's instructions, rendered; workers whose template fails are left out."""
    ctx = TemplateContext(project.loaded.sources, project.manifest.vars)
    out: dict[str, str] = {}
    diagnostics: list[Diagnostic] = []
    for name, worker in project.workers.items():
        parsed = worker.parsed
        text, found = render_body(ctx, TemplateUnit(parsed.file, parsed.body, parsed.body_line - 1,
                                                    directory=worker_directory(parsed.file)))
        diagnostics.extend(found)
        if text is not None:
            out[name] = text
    return out, diagnostics

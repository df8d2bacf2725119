"""Y007: single-file workers that depend on the project's Python, so an author who wants a
portable worker (one file that works anywhere) sees which are not."""

from __future__ import annotations

from ... import codes
from ...analysis.call_graph import CallGraph
from ...diagnostics import Diagnostic, diagnostic
from ...syntax.worker_forms import worker_directory
from ..resolved import ResolvedProject, ResolvedWorker


def check_portability(project: ResolvedProject, graph: CallGraph) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for name in sorted(project.workers):
        worker = project.workers[name]
        if worker.parsed.legacy or worker_directory(worker.parsed.file) is not None:
            continue
        uses = _python_uses(worker)
        if uses:
            out.append(diagnostic(codes.SINGLE_FILE_WORKER_USES_PYTHON,
                                  f"single-file worker '{name}' depends on the project's Python: {', '.join(uses)}",
                                  worker.parsed.name_location,
                                  hint=f"to keep it with its Python, make it a directory worker ({name}/worker.worker) "
                                       "with that Python beside it"))
    return out


def _python_uses(worker: ResolvedWorker) -> list[str]:
    """The project's Python tools and toolsets the worker uses, as the message names them (a
    schema reference is data, not a tool: the concept's portable worker has built-in tools only)."""
    uses = [f"toolset '{u.name}'" for u in worker.toolsets if u.kind == "python"]
    return uses + [f"tool '{t.name}'" for t in worker.tools.values() if t.kind == "python_tool"]

"""M001-M003: model names pydantic-ai (or a model factory the project registers) can resolve, and
compatible_models that the default fits."""

from __future__ import annotations

from typing import TYPE_CHECKING

from llm_do.bundle.names import model_problem

from ... import codes
from ...analysis.call_graph import CallGraph
from ...analysis.worker_models import Locate, worker_model_problems
from ...diagnostics import Diagnostic, diagnostic
from ..resolved import ResolvedProject

if TYPE_CHECKING:
    from ..parse import ParsedWorker


def check_models(project: ResolvedProject, graph: CallGraph) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    default = project.manifest.defaults.model
    registered = set(project.facts.model_factories)
    if default is not None and (problem := model_problem(default, registered)):
        out.append(diagnostic(codes.UNKNOWN_PROVIDER, problem[0], project.loaded.at("defaults", "model", key=False), hint=problem[1]))
    for name in sorted(project.workers):
        parsed = project.workers[name].parsed
        out.extend(worker_model_problems(name, parsed.front.model, parsed.front.compatible_models, _locate(parsed),
                                         default, registered))
    return out


def _locate(parsed: ParsedWorker) -> Locate:
    """`parsed.at` as `worker_model_problems` calls it: a path as one tuple."""
    return lambda path, key: parsed.at(*path, key=key)

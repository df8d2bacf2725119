"""M001-M003: model names pydantic-ai (or a model factory the project registers) can resolve, and
compatible_models that the default fits."""

from __future__ import annotations

from llm_do.bundle.names import matches_any, model_problem

from ...call_graph import CallGraph
from ...diagnostics import Diagnostic, diagnostic
from ...syntax.limits import MAX_PATTERN_CHARS
from ..parse import ParsedWorker
from ..resolved import ResolvedProject


def check_models(project: ResolvedProject, graph: CallGraph) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    default = project.manifest.defaults.model
    registered = set(project.facts.model_factories)
    if default is not None and (problem := model_problem(default, registered)):
        out.append(diagnostic("M001", problem[0], project.loaded.at("defaults", "model", key=False), hint=problem[1]))
    for name in sorted(project.workers):
        out.extend(worker_model_problems(project.workers[name].parsed, default, registered))
    return out


def worker_model_problems(parsed: ParsedWorker, default: str | None, registered: set[str]) -> list[Diagnostic]:
    """What `check_models` says of one worker, given the project's default model and the prefixes
    of its model factories: also what a build from the last lock asks of a worker whose `model` or
    `compatible_models` changed (`incremental.local_edits`)."""
    out: list[Diagnostic] = []
    front = parsed.front
    if front.model is not None and (problem := model_problem(front.model, registered)):
        out.append(diagnostic("M001", problem[0], parsed.at("model"), hint=problem[1]))
    if front.model is not None and front.compatible_models is not None:
        out.append(diagnostic("M002", f"'{parsed.name}' sets both model and compatible_models", parsed.at("compatible_models", key=True),
                              hint="keep `model` to fix the model, or `compatible_models` to let the run choose"))
    elif front.model is None and front.compatible_models and default is not None:
        too_long = [i for i, p in enumerate(front.compatible_models) if len(p) > MAX_PATTERN_CHARS]
        for i in too_long:
            out.append(diagnostic("P011", f"a pattern of {len(front.compatible_models[i])} characters, more than "
                                          f"the {MAX_PATTERN_CHARS} a pattern may have", parsed.at("compatible_models", i)))
        if not too_long and not matches_any(default, front.compatible_models):
            out.append(diagnostic(
                "M003",
                f"the project default model '{default}' matches none of {front.compatible_models}",
                parsed.at("compatible_models", key=True),
                hint="set `model` on this worker, or change the project default",
            ))
    return out

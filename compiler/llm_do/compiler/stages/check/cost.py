"""B001 / B002: a run whose cost has no bound, and models with no known price (spec/cost.md).

A review of the whole project's models and limits, so `lint` runs it (`compile_project(...,
review=True)`) and `build` does not: a build after an edit of a worker's `model` or
`model_settings` is written from the last lock without the check stage
(`build.local_edits`), and a build's diagnostics must not depend on which way it went.
The bound is `cost.bound`'s, over the resolved project, so lint and `capabilities` agree.
"""

from __future__ import annotations

from llm_do.bundle.names import model_problem

from ... import codes
from ...cost.bound import CostAnalysis, Gap
from ...cost.inputs import of_project
from ...diagnostics import Diagnostic, Location, diagnostic
from ..resolved import ResolvedProject

UNBOUNDED_HINT = ("bound one request: `max_tokens` in the worker's model_settings, "
                  "`usage_limits.count_tokens_before_request` with `per_request_input_tokens_limit`, `max_uses` of web_search")


def check_costs(project: ResolvedProject) -> list[Diagnostic]:
    analysis = CostAnalysis(of_project(project))
    return _unpriced(project, analysis) + _unbounded(project, analysis)


def _unpriced(project: ResolvedProject, analysis: CostAnalysis) -> list[Diagnostic]:
    """B002 wherever a model with no price is named: a worker's `model`, the project default."""
    registered = set(project.facts.model_factories)
    named: list[tuple[str, Location]] = []
    default = project.manifest.defaults.model
    if default is not None:
        named.append((default, project.loaded.at("defaults", "model", key=False)))
    for name in sorted(project.workers):
        parsed = project.workers[name].parsed
        if parsed.front.model is not None:
            named.append((parsed.front.model, parsed.at("model")))
    from llm_do.pricing.genai import data_release
    from llm_do.pricing.sheets import price_sheet

    out = []
    for model, at in named:
        if model_problem(model, registered) is None and price_sheet(model, analysis.inputs.prices) is None:
            version, _ = data_release()
            out.append(diagnostic(codes.UNPRICED_MODEL,
                                  f"no price is known for '{model}' (genai-prices {version} does not list it): "
                                  "what a run on it costs has no bound, and a run with --max-cost refuses it", at,
                                  hint=f"declare its price in project.json: \"cost\": {{\"prices\": {{\"{model}\": "
                                       "{\"input_mtok\": ..., \"output_mtok\": ..., \"context_window\": ...}}}"))
    return out


def _unbounded(project: ResolvedProject, analysis: CostAnalysis) -> list[Diagnostic]:
    """B001 at each worker the entry reaches whose request has no worst case on a model it may run on."""
    out = []
    for name in sorted(analysis.entry_reach):
        _, gaps = analysis.request_bound(name)
        unbounded = [g for g in gaps if g.kind == "unbounded"]
        if not unbounded:
            continue
        by_model: dict[str, list[Gap]] = {}
        for gap in unbounded:
            by_model.setdefault(gap.model, []).append(gap)
        for model, found in by_model.items():
            why = "; ".join(g.why for g in found)
            out.append(diagnostic(codes.UNBOUNDED_COST,
                                  f"a run of '{project.entry}' can cost any amount: one request of '{name}' on "
                                  f"'{model}' has no worst case: {why}", _where(project, name), hint=UNBOUNDED_HINT))
    return out


def _where(project: ResolvedProject, worker: str) -> Location:
    parsed = project.workers[worker].parsed
    for key in ("model_settings", "model", "server_side_tools"):
        if key in parsed.front.model_fields_set:
            return parsed.at(key, key=True)
    return parsed.name_location

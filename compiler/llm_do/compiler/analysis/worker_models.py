"""M001-M003 and P011 of one worker: what `stages.check.models` says of each worker, in a module
of its own so that a build from the last lock (`build.local_edits`) checks an edited
worker's `model` and `compatible_models` without importing the check stage or pydantic."""

from __future__ import annotations

from collections.abc import Callable

from llm_do.bundle.names import matches_any, model_problem

from .. import codes
from ..diagnostics import Diagnostic, Location, diagnostic
from ..syntax.limits import MAX_PATTERN_CHARS

Locate = Callable[[tuple[str | int, ...], bool], Location]
"""Where a front matter value (False) or key (True) is, by its path."""


def worker_model_problems(name: str, model: str | None, compatible_models: list[str] | None, at: Locate,
                          default: str | None, registered: set[str]) -> list[Diagnostic]:
    """What the model checks say of the worker `name` with this `model` and `compatible_models`,
    given the project's default model and the prefixes of its model factories."""
    out: list[Diagnostic] = []
    if model is not None and (problem := model_problem(model, registered)):
        out.append(diagnostic(codes.UNKNOWN_PROVIDER, problem[0], at(("model",), False), hint=problem[1]))
    if model is not None and compatible_models is not None:
        out.append(diagnostic(codes.MODEL_AND_COMPATIBLE_MODELS,
                              f"'{name}' sets both model and compatible_models", at(("compatible_models",), True),
                              hint="keep `model` to fix the model, or `compatible_models` to let the run choose"))
    elif model is None and compatible_models and default is not None:
        too_long = [i for i, p in enumerate(compatible_models) if len(p) > MAX_PATTERN_CHARS]
        for i in too_long:
            out.append(diagnostic(codes.LIMIT_EXCEEDED,
                                  f"a pattern of {len(compatible_models[i])} characters, more than "
                                  f"the {MAX_PATTERN_CHARS} a pattern may have", at(("compatible_models", i), False)))
        if not too_long and not matches_any(default, compatible_models):
            out.append(diagnostic(
                codes.DEFAULT_MODEL_INCOMPATIBLE,
                f"the project default model '{default}' matches none of {compatible_models}",
                at(("compatible_models",), True),
                hint="set `model` on this worker, or change the project default",
            ))
    return out

"""Which model a worker runs on, and building it only when the worker runs.

Precedence: the run's override (`--model`, `--script`) > the worker's `model` > its caller's model
> the project default > the host's fallback (`RuntimeConfig.fallback_model`) > `LLM_DO_MODEL`. A resolved model must match the worker's
`compatible_models`, except test and scripted models; a caller's model that does not match is
passed over for the next in line. Model names stay strings until a worker runs, because building one
imports its provider (seconds) and may need its API key.
"""

from __future__ import annotations

import fnmatch
import os
from typing import TYPE_CHECKING

from llm_do.bundle.errors import LlmDoError
from llm_do.bundle.views import WorkerSpec

if TYPE_CHECKING:
    from pydantic_ai.models import Model

ENV_VAR = "LLM_DO_MODEL"
OFFLINE_MODELS = frozenset({"test"})


class ModelProblem(LlmDoError):
    """No model, or one the worker declares it cannot run on."""


def choose_model(spec: WorkerSpec, default: str | None, override: Model | str | None,
                 inherited: Model | str | None = None, fallback: Model | str | None = None) -> Model | str:
    """The model name (or Model object) the worker runs on. `inherited`: the model its caller
    runs on (None at the top of a run); `fallback`: the host's, for a worker nothing else names
    one for."""
    if override is not None:
        if isinstance(override, str) and override not in OFFLINE_MODELS:
            _check_compatible(spec, override)
        return override
    if spec.model is None and inherited is not None and _inheritable(spec, inherited):
        return inherited
    if not (spec.model or default) and fallback is not None and not isinstance(fallback, str):
        return fallback  # a Model object
    name = spec.model or default or (fallback if isinstance(fallback, str) else None) or os.environ.get(ENV_VAR)
    if not name:
        raise ModelProblem(
            f"worker '{spec.name}' has no model (nor a caller's to inherit): set `model` in {spec.source}, a project default, "
            f"{ENV_VAR}, or pass --model"
        )
    if name not in OFFLINE_MODELS:
        _check_compatible(spec, name)
    return name


def _inheritable(spec: WorkerSpec, model: Model | str) -> bool:
    """A caller's model fits the worker: a Model object or an offline model always does, a name
    when it matches the worker's compatible_models (or it has none)."""
    if not isinstance(model, str) or model in OFFLINE_MODELS or not spec.compatible_models:
        return True
    return any(fnmatch.fnmatchcase(model, p) for p in spec.compatible_models)


def _check_compatible(spec: WorkerSpec, name: str) -> None:
    patterns = spec.compatible_models
    if patterns and not any(fnmatch.fnmatchcase(name, p) for p in patterns):
        raise ModelProblem(f"model '{name}' is not compatible with worker '{spec.name}' (compatible_models: {', '.join(patterns)})")


def model_label(model: Model | str) -> str:
    if isinstance(model, str):
        return model
    return getattr(model, "model_name", None) or type(model).__name__


def build_model(model: Model | str) -> Model:
    """A pydantic-ai Model from a name, importing the provider now; Model objects pass through. A
    prefix the project registered a model factory for is built by that factory."""
    if not isinstance(model, str):
        return model
    from .model_factories import factory_for

    registered = factory_for(model)
    if registered is not None:
        factory, name = registered
        try:
            built: Model = factory(name)
            return built
        except Exception as exc:  # the project's factory: one line, never a traceback
            raise ModelProblem(f"cannot use model '{model}': its model factory raised {type(exc).__name__}: {exc}") from None
    from pydantic_ai.exceptions import UserError
    from pydantic_ai.models import infer_model

    try:
        return infer_model(model)
    except (UserError, ImportError) as exc:
        from .model_errors import unusable_model

        raise ModelProblem(unusable_model(model, exc)) from None

"""The models each worker may run on, as the runtime picks them (`llm_do.runtime.models`): its own
`model`; else its caller's when that fits its `compatible_models`; else the project default; else
whatever the run is given (`--model`, `LLM_DO_MODEL`), which the build cannot know (`CHOSEN`). A
run's `--model` puts every worker on that model.

One pass over the whole graph (the models flow down the calls until nothing changes): a worker's
set holds every model any caller may pass it, whichever entry the run starts at."""

from __future__ import annotations

import fnmatch
from collections import deque

from llm_do.pricing.sheets import OFFLINE_MODELS

from .inputs import CostInputs

CHOSEN = ""
"""The model of a worker that names none and has no default to fall back on: the run's choice."""


def worker_models(inputs: CostInputs) -> dict[str, frozenset[str]]:
    """Worker -> the models it may run on (`CHOSEN` among them when the run chooses)."""
    if inputs.override is not None:
        return {name: frozenset({inputs.override}) for name in inputs.workers}
    fallback = inputs.default_model or CHOSEN
    models: dict[str, set[str]] = {}
    for name, worker in inputs.workers.items():
        models[name] = {worker.model} if worker.model else {fallback}
    queue = deque(sorted(n for n, w in inputs.workers.items() if w.calls))
    queued = set(queue)
    while queue:
        caller = queue.popleft()
        queued.discard(caller)
        for callee in inputs.workers[caller].calls:
            target = inputs.workers.get(callee)
            if target is None or target.model:
                continue
            new = {m for m in models[caller] if _fits(m, target.compatible_models)} - models[callee]
            if new:
                models[callee] |= new
                if callee not in queued and target.calls:
                    queue.append(callee)
                    queued.add(callee)
    return {name: frozenset(found) for name, found in models.items()}


def _fits(model: str, patterns: tuple[str, ...] | None) -> bool:
    if model == CHOSEN or model in OFFLINE_MODELS or not patterns:
        return True
    return any(fnmatch.fnmatchcase(model, p) for p in patterns)

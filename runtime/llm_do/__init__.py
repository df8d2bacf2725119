"""llm-do: a compiler and runtime for multi-worker LLM projects.

`llm_do` spans three source roots (compiler/, runtime/, stdlib/); this is its one `__init__.py`,
and `extend_path` merges the other roots' `llm_do` directories into the package, so the editable
install (three directories on sys.path) and the wheel (one directory) import alike.

The names below are what projects of the `.agent` era import from `llm_do` itself, and the seed
API's (`from llm_do import run_worker, create_worker, ApprovalController, ...`, spec/legacy.md);
each is loaded on first use, so `import llm_do.runtime` (every `llm-do exec`) costs nothing more.
"""

from __future__ import annotations

import importlib
from pkgutil import extend_path
from typing import TYPE_CHECKING, Any

__path__ = extend_path(__path__, __name__)

_SEED_NAMES = ("run_worker", "run_worker_async", "call_worker", "call_worker_async", "create_worker", "WorkerSpec",
               "WorkerCreationDefaults", "ApprovalController", "ApprovalDecision", "approve_all_callback",
               "strict_mode_callback")

_EXPORTS: dict[str, str] = {
    "register_model_factory": "llm_do.runtime.model_factories",
    **{name: "llm_do.runtime" for name in _SEED_NAMES},
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from llm_do.runtime import (
        ApprovalController,
        ApprovalDecision,
        WorkerCreationDefaults,
        WorkerSpec,
        approve_all_callback,
        call_worker,
        call_worker_async,
        create_worker,
        run_worker,
        run_worker_async,
        strict_mode_callback,
    )
    from llm_do.runtime.model_factories import register_model_factory


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'llm_do' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value

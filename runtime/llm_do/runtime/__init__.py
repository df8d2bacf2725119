"""llm-do's runtime: runs a bundle written by `llm-do build` on pydantic-ai.

Names are imported on first use, so `from llm_do.runtime import WorkerArgs` loads pydantic only,
never pydantic-ai (schema modules import it, and the compiler imports those).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS: dict[str, str] = {
    "WorkerArgs": "args",
    "PromptInput": "args",
    "Attachment": "args",
    "PromptContent": "args",
    "AgentArgs": "args",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from .args import AgentArgs, Attachment, PromptContent, PromptInput, WorkerArgs


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'llm_do.runtime' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value

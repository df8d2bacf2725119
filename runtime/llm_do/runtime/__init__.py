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
    "Runtime": "runtime",
    "RunResult": "runtime",
    "Conversation": "conversation",
    "RunFailed": "errors",
    "InputProblem": "errors",
    "CallRefused": "errors",
    "WorkerHandle": "call_scope",
    "RuntimeConfig": "config",
    "CallContext": "call_scope",
    "CallFrame": "call_scope",
    "ApprovalDecision": "approvals.decisions",
    "ApprovalRequest": "approvals.decisions",
    "approve_all": "approvals.decisions",
    "reject_all": "approvals.decisions",
    "strict": "approvals.decisions",
    "approve_all_callback": "approvals.decisions",
    "strict_mode_callback": "approvals.decisions",
    "Services": "services",
    "ServiceProblem": "services",
    "Reference": "references",
    "References": "references",
    "ReferenceStore": "references",
    "InMemoryReferenceStore": "references",
    "UnknownReference": "references",
    "run_worker": "api",
    "run_worker_async": "api",
    "call_worker_async": "api",
    "call_worker": "api",
    "WorkerSpec": "seed_api",
    "WorkerCreationDefaults": "seed_api",
    "ApprovalController": "seed_api",
    "create_worker": "api",
    "DefinitionProblem": "created_workers",
    "load_bundle": "bundle",
    "BundleRefused": "bundle",
    "StaleLockWarning": "built_lock",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from .api import call_worker, call_worker_async, create_worker, run_worker, run_worker_async
    from .approvals.decisions import (
        ApprovalDecision,
        ApprovalRequest,
        approve_all,
        approve_all_callback,
        reject_all,
        strict,
        strict_mode_callback,
    )
    from .args import AgentArgs, Attachment, PromptContent, PromptInput, WorkerArgs
    from .built_lock import StaleLockWarning
    from .bundle import BundleRefused, load_bundle
    from .call_scope import CallContext, CallFrame, WorkerHandle
    from .config import RuntimeConfig
    from .conversation import Conversation
    from .created_workers import DefinitionProblem
    from .errors import CallRefused, InputProblem, RunFailed
    from .references import InMemoryReferenceStore, Reference, References, ReferenceStore, UnknownReference
    from .runtime import RunResult, Runtime
    from .seed_api import ApprovalController, WorkerCreationDefaults, WorkerSpec
    from .services import ServiceProblem, Services


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'llm_do.runtime' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value

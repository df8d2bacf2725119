"""The one approval gate: wraps all of a worker's tools (stdlib, Python, worker calls) at every
depth, so a denied tool never runs however deeply it is nested.

A tool's approval comes from the bundle (its default, changed by the worker's rules); `auto`
asks the stdlib toolset (shell: by command); tools of opaque toolsets carry theirs as metadata.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.exceptions import ModelRetry, ToolFailed
from pydantic_ai.toolsets import ToolsetTool, WrapperToolset

from .bundle import WorkerSpec
from .call_scope import CallContext
from .errors import LlmDoError, RunFailed

APPROVAL_METADATA_KEY = "llm_do_approval"
RESULT_PREVIEW = 2000


@dataclass
class ApprovalGate(WrapperToolset[CallContext]):
    spec: WorkerSpec | None = None
    runtime: Any = None

    def approval_for(self, name: str, tool_args: dict[str, Any], tool: ToolsetTool[CallContext]) -> str:
        binding = self.spec.tools.get(name) if self.spec else None
        approval = binding.approval if binding else (tool.tool_def.metadata or {}).get(APPROVAL_METADATA_KEY, "ask")
        if approval == "auto":
            decide = getattr(tool.toolset, "approval_for", None)
            approval = decide(name, tool_args) if decide else "ask"
        return approval

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: RunContext[CallContext], tool: ToolsetTool[CallContext]) -> Any:
        frame = ctx.deps.frame
        runtime = self.runtime
        listening = runtime.listening
        if listening:
            from .events import ApprovalDecided, ToolCalled, ToolReturned, jsonable
        approval = self.approval_for(name, tool_args, tool)
        if listening:
            runtime.emit(ToolCalled(frame.worker, frame.depth, name, tool_args, approval))
        if approval == "deny":
            self._refuse(frame, name, f"'{name}' is denied by the project's approval rules; it did not run")
        if approval == "ask":
            from .approvals import ApprovalRequest

            decision, by = await runtime.request_approval(ApprovalRequest(frame.worker, frame.depth, name, tool_args))
            if listening:
                runtime.emit(ApprovalDecided(frame.worker, frame.depth, name, decision.approved, by, decision.note))
            if not decision.approved:
                self._refuse(frame, name, f"the call to '{name}' was denied ({decision.note or 'not approved'}); it did not run")
        try:
            result = await self.wrapped.call_tool(name, tool_args, ctx, tool)
        except (ToolFailed, ModelRetry) as exc:
            if listening:
                runtime.emit(ToolReturned(frame.worker, frame.depth, name, "failed", str(exc)))
            raise
        except LlmDoError:
            raise
        except Exception as exc:  # a user tool crashed: end the run with one line saying where
            if listening:
                runtime.emit(ToolReturned(frame.worker, frame.depth, name, "crashed", f"{type(exc).__name__}: {exc}"))
            raise RunFailed(f"tool '{name}' of worker '{frame.worker}' raised {type(exc).__name__}: {exc}") from exc
        if listening:
            preview = result if isinstance(result, str) else json.dumps(jsonable(result), ensure_ascii=False, default=str)
            runtime.emit(ToolReturned(frame.worker, frame.depth, name, "ok", preview[:RESULT_PREVIEW]))
        return result

    def _refuse(self, frame: Any, name: str, message: str) -> None:
        """The tool does not run; the model is told why (a failed tool result) and goes on."""
        if self.runtime.listening:
            from .events import ToolReturned

            self.runtime.emit(ToolReturned(frame.worker, frame.depth, name, "denied", message))
        raise ToolFailed(message)

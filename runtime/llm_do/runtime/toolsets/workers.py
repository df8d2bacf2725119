"""Workers a worker may call, exposed to it as tools named after them.

The tool's parameters are the callee's input schema and its arguments are validated by the
callee's input class before the call, so invalid arguments go back to the model as a retry and
the callee never runs. The allowlist is the bundle's edges, nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic_ai import RunContext
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool

from llm_do.bundle.views import worker_description
from llm_do.toolkit.hooks import ToolsetHooks
from llm_do.toolkit.tool_args import ModelArgsValidator

from ..call_scope import CallContext, RunHost
from ..errors import RunFailed


class WorkerCallToolset(AbstractToolset[CallContext], ToolsetHooks):
    """The callees as tools; it tells the gate which files a call attaches (`attachments`)."""

    def __init__(self, runtime: RunHost, callees: list[str]) -> None:
        self.runtime = runtime
        self.callees = callees
        self._tools: dict[str, ToolsetTool[CallContext]] | None = None

    @property
    def id(self) -> str | None:
        return "workers"

    async def get_tools(self, ctx: RunContext[CallContext]) -> dict[str, ToolsetTool[CallContext]]:
        if self._tools is None:
            self._tools = {}
            for name in self.callees:
                spec = self.runtime.bundle.worker(name)
                if spec is None:
                    raise RunFailed(f"the bundle has no worker '{name}' for its caller to call")
                schema = self.runtime.input_class(spec)
                self._tools[name] = ToolsetTool(
                    toolset=self,
                    tool_def=ToolDefinition(name=name, description=f"Call the worker '{name}': {worker_description(spec)}",
                                            parameters_json_schema=spec.input.json_schema),
                    max_retries=1,
                    args_validator=ModelArgsValidator(schema),
                )
        return self._tools

    def attachments(self, name: str, args: Mapping[str, object]) -> list[str]:
        """The paths of the attachments in the callee's prompt, as its input class makes it from
        the model's arguments (`prompt_messages`), so custom inputs are judged too."""
        from ..args import Attachment

        spec = self.runtime.bundle.worker(name)
        if spec is None:
            return []
        try:
            parts = self.runtime.input_class(spec).model_validate(args).prompt_messages()
        except Exception as exc:  # the call would fail the same way; refuse it before it runs
            raise ToolFailed(f"the input of '{name}' does not make a prompt: {type(exc).__name__}: {exc}") from None
        return [part.path for part in parts if isinstance(part, Attachment)]

    async def call_tool(self, name: str, tool_args: dict[str, object], ctx: RunContext[CallContext],
                        tool: ToolsetTool[CallContext]) -> object:
        return await self.runtime.call_worker_async(name, tool_args, parent=ctx.deps.frame, from_model=True)

"""The runtime side shared by every built-in toolset: tools listed from the descriptor, arguments
validated with the descriptor's own models, so the schema in the bundle is the schema enforced."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_ai import RunContext
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, ToolsetTool

from llm_do.runtime.approval_policy import ASK, AUTO, Action
from llm_do.runtime.tool_args import ModelArgsValidator

from .descriptor import ToolsetDescriptor
from .paths import confine


class StdlibToolset(AbstractToolset[Any]):
    """Base of the built-in toolsets.

    A subclass implements one method per tool, named after it, taking the validated arguments as
    keyword arguments; it may override `approval_for` when its descriptor's approval is `auto`.
    """

    def __init__(self, descriptor: ToolsetDescriptor, settings: BaseModel, base: Path) -> None:
        self.descriptor = descriptor
        self.settings = settings
        self.base = base
        """The directory the descriptor's `root` stands for (project root or working directory)."""
        self.root = confine(base, getattr(settings, "path", "."))
        """`base / settings.path`, resolved: every path of the toolset is relative to it and confined to it.
        Raises PathRefused when the setting leads out of `base`."""

    @property
    def id(self) -> str | None:
        return self.descriptor.name

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        return {
            tool.name: ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(name=tool.name, description=tool.description, parameters_json_schema=tool.parameters),
                max_retries=1,
                args_validator=ModelArgsValidator(tool.args_model),
            )
            for tool in self.descriptor.tools
        }

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]) -> Any:
        if self.descriptor.tool(name) is None:
            raise ToolFailed(f"{self.descriptor.name} has no tool '{name}'")
        result = getattr(self, name)(**tool_args)
        if inspect.isawaitable(result):
            result = await result
        return result

    def approval_for(self, name: str, args: dict[str, Any]) -> Action:
        """The approval a call needs when the bundle leaves it to the toolset (`auto`)."""
        descriptor = self.descriptor.tool(name)
        approval = descriptor.approval if descriptor else ASK
        return ASK if approval == AUTO else approval

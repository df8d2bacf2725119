"""Built-in toolsets' tools called the way pydantic-ai calls them: listed by `get_tools`, arguments
validated, then `call_tool` (tests/stdlib/)."""

from __future__ import annotations

from typing import Any

from pydantic_ai import RunContext
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RunUsage

from llm_do.stdlib.base import StdlibToolset


def run_context() -> RunContext[None]:
    return RunContext(deps=None, model=TestModel(), usage=RunUsage())


async def call_tool(toolset: StdlibToolset, name: str, args: dict[str, Any]) -> Any:
    ctx = run_context()
    tools = await toolset.get_tools(ctx)
    tool = tools[name]
    validated = tool.args_validator.validate_python(args)
    return await toolset.call_tool(name, validated, ctx, tool)

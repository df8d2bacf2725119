"""Note tools."""

from __future__ import annotations

from pydantic_ai import RunContext

from llm_do.runtime import CallContext


async def save_note(ctx: RunContext[CallContext], title: str, text: str) -> str:
    """Save a note under a title."""
    return await ctx.deps.call_worker("writer", f"{title}: {text}")


TOOLS = [save_note]

"""The entry: one worker does the work."""

from llm_do.runtime import CallContext


async def main(ctx: CallContext, text: str) -> str:
    return await ctx.call_worker("main", text)

from pydantic_ai import RunContext


async def delegate(ctx: RunContext, text: str) -> str:
    return await ctx.deps.call_worker("helper", text)


TOOLS = [delegate]

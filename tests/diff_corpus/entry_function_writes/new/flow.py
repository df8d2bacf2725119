"""The entry: one worker does the work."""

from llm_do.runtime import CallContext


async def main(ctx: CallContext, text: str) -> str:
    answer = await ctx.call_worker("main", text)
    with open("answers.log", "a") as log:
        log.write(answer)
    return answer

async def main(ctx, data):
    return await ctx.call_worker("lead", data)

"""An MCP server (official `mcp` package, low level) that lists its three tools one page at a time,
as a server with many tools may: `first`, then `second` after cursor "1", then `third` after "2"."""

from __future__ import annotations

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

PAGES = {None: ("first", "1"), "1": ("second", "2"), "2": ("third", None)}


async def list_tools(ctx: object, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    name, after = PAGES[params.cursor if params else None]
    tool = types.Tool(name=name, description=f"The {name} page's tool.",
                      input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    return types.ListToolsResult(tools=[tool], next_cursor=after)


server = Server("paged", on_list_tools=list_tools)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)

"""A dictionary as an MCP server."""

from lookups import remember
from mcp.server.mcpserver import MCPServer

server = MCPServer("dictionary")


@server.tool()
def lookup(word: str) -> str:
    """Look up a word."""
    remember(word)
    return word

if __name__ == "__main__":
    server.run()

"""A dictionary as an MCP server."""

from lookups import remember
from mcp.server.mcpserver import MCPServer

# Started by llm-do with the project root as its working directory.
server = MCPServer("dictionary")  # one server


@server.tool()
def lookup(word: str) -> str:
    """Look up a word."""
    remember(word)
    return word  # as given

if __name__ == "__main__":
    server.run()

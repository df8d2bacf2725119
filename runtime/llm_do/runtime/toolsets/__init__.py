"""The toolsets a worker call gets, one module per kind of bundle toolset node: `gate` (the one
approval gate over them all), `workers` (calls to other workers), `python` (stdlib and project
Python), `mcp` (MCP servers). `toolset_builder` picks the builder by the node's `kind`."""

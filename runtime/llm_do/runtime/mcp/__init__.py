"""A bundle served over MCP (`llm-do serve`): the server (`server`), a served call's run that may
outlive its request (`served_run`), and who answers its asked calls (`approvals`). MCP servers used
as toolsets are `toolsets/mcp.py`."""

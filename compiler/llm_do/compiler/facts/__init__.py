"""The facts the build needs about what it does not compile itself: the project's Python (its
schemas, tools, toolsets and entry function) and its MCP servers' tools.

`records` holds the facts; `child` and `mcp_child` are the programs that learn them in a
subprocess, `subprocess_runner` starts those (the introspection child forked from a warm
`fork_server`, through `fork_client`, whose `preloaded_modules` stay out of sight until imported;
or afresh), and `static_reader` reads Python with `ast` only (`--no-import`). The `introspect`
stage (`stages/introspect.py`) decides what to ask.
"""

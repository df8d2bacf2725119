"""What the tests share besides fixtures (the fixtures are in the conftest.py files).

- cli: write a project from a dict, run the real `llm-do` in this process, one-line errors.
- projects: build and copy projects; the Python, graph and `.agent`-era projects several tests use.
- lint: lint a project as JSON and check one diagnostic in full, positions found from needles.
- events: read a run's `--events`, and the small project whose flow emits every kind of event.
- approvals, batch, durable, mcp, toolsets: what the tests of those features share.
- processes: is a process alive, a free port, the fresh-interpreter import probe.
- warm_cli: `llm-do` in a process of its own, forked from a parent that imported the CLI once.
- postgres: a Postgres cluster of the tests' own.
- introspection: the cache of introspection facts the tests' builds use.
"""

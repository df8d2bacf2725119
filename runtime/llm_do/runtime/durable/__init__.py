"""Durable runs (`exec --durable`, `resume`, detached approvals) on DBOS.

Nothing here is imported on the plain `exec` path: `db_url` is standard library only (the CLI
checks a URL before deciding to go durable); `dbos` and `records` import DBOS itself.
"""

"""What the tests that start processes and servers share: is a process still there (no orphan
left), and a free loopback port."""

from __future__ import annotations

import socket
from pathlib import Path


def alive(pid: int) -> bool:
    """Whether `pid` is a running process (a zombie waiting to be reaped is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    fields = stat.rpartition(")")[2].split()
    return bool(fields) and fields[0] != "Z"


def free_port() -> int:
    """A port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# The import check runs in a fresh interpreter: the test process has the compiler loaded already.
# argv holds runs separated by "--next": a `--model test` run and a JSON-scripted one.
IMPORT_PROBE = """
import subprocess, sys
# What `import pydantic_ai` alone loads in this environment is not exec's doing: with the optional
# package httpx installed (the anchor's examples need it), pydantic-ai imports it, and httpx imports
# rich for its command-line client. Without httpx this set is empty.
PYDANTIC_AI_BRINGS = set(subprocess.run(
    [sys.executable, "-c", "import sys, pydantic_ai; print(' '.join(sys.modules))"],
    capture_output=True, text=True, check=True,
).stdout.split())
from llm_do.cli.main import main
args = sys.argv[1:]
runs = [[]]
for a in args:
    if a == "--next":
        runs.append([])
    else:
        runs[-1].append(a)
codes = []
for argv in runs:
    try:
        main(argv)
    except SystemExit as exc:
        codes.append(exc.code)
heavy = sorted(
    m for m in sys.modules
    if (m == "llm_do.compiler" or m.startswith("llm_do.compiler.") or m == "llm_do.runtime.events"
        or m in ("llm_do.runtime.services", "llm_do.runtime.references", "llm_do.runtime.taint", "llm_do.runtime.budget")
        or m.startswith("llm_do.pricing")
        or m in ("llm_do.runtime.conversation", "llm_do.runtime.conversation_store", "llm_do.cli.commands.chat")
        or m.startswith("llm_do.runtime.durable") or m.startswith("pydantic_ai.durable_exec")
        or m.split(".")[0] in ("jinja2", "lark", "networkx", "yaml", "rich", "dbos", "sqlalchemy", "mcp", "mcp_types",
                               "uvicorn", "starlette", "fastmcp", "cryptography")
        or m == "llm_do.provenance.signing"
        or m in ("pydantic_ai.mcp", "llm_do.runtime.toolsets.mcp", "llm_do.runtime.toolsets.mcp_transport")
        or m.startswith(("opentelemetry.sdk", "opentelemetry.exporter", "llm_do.runtime.batch.runs", "llm_do.runtime.telemetry",
                         "llm_do.cli.display.", "llm_do.cli.commands.batch", "llm_do.cli.durable", "llm_do.runtime.mcp.server", "llm_do.runtime.mcp.approvals",
                         "llm_do.runtime.mcp.served_run", "llm_do.runtime.recording", "llm_do.cli.testing", "llm_do.cli.recording",
                         "llm_do.cli.commands.test")))
    and m not in PYDANTIC_AI_BRINGS
)
providers = sorted(m for m in sys.modules if m.startswith(("pydantic_ai.models.openai", "pydantic_ai.models.anthropic")))
print("RESULT " + repr((codes, heavy, providers)))
"""

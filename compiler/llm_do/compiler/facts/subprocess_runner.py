"""Run the introspection child in a separate, time-limited process and read its answer.

The child is forked from the process's introspection fork server (`fork_client`), which has
pydantic-ai imported already, or, where that is not available, started afresh as
`python -m llm_do.compiler.facts.child`; both answer alike (the fork server's docstring says how).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pydantic import ValidationError

from llm_do.bundle.regular_files import read_regular_file

from . import fork_client
from .records import Facts, McpFacts, McpRequest, PyError, Request

DEFAULT_TIMEOUT = 60.0
MOMENTARY_FAILURES = frozenset({"Y002", "Y005"})
"""The time limit passed, or the child died: answers of the moment, not of the sources."""


def import_timeout() -> float:
    try:
        return float(os.environ.get("LLM_DO_IMPORT_TIMEOUT", DEFAULT_TIMEOUT))
    except ValueError:
        return DEFAULT_TIMEOUT


def introspect(request: Request, root: Path, timeout: float | None = None) -> Facts:
    """Import the project's Python in a child process; every failure becomes data, not an exception."""
    timeout = import_timeout() if timeout is None else timeout
    text = request.model_dump_json()
    run = fork_client.run_child(text, root, timeout, preload=_names_pydantic_ai(request, root))
    if run is None:
        run = _fresh_child(text, root, timeout)
    if run.timed_out:
        return Facts(
            imported=False,
            failure=PyError(message=f"importing the project's Python took longer than {timeout:g} s"),
            failure_code="Y002",
        )
    try:
        return Facts.model_validate_json(run.stdout)
    except ValidationError:
        tail = (run.stderr or "").strip().splitlines()[-1:] or [f"exit status {run.returncode}"]
        return Facts(imported=False, failure=PyError(message=tail[0][:500]), failure_code="Y005")


def _names_pydantic_ai(request: Request, root: Path) -> bool:
    """Whether the child will likely import pydantic-ai (an agent-era project, or Python that names
    it or exports tools): then the fork server imports it first, once for every later child. Only
    the cost depends on this guess, never the answer."""
    if request.agent_era:
        return True
    for rel in request.python_files:
        try:
            text = read_regular_file(root / rel).decode("utf-8", "replace")
        except OSError:
            continue
        if "pydantic_ai" in text or "TOOLS" in text:
            return True
    return False


def _fresh_child(request: str, root: Path, timeout: float) -> fork_client.ChildRun:
    """How `python -m llm_do.compiler.facts.child` ended, as a forked child's run reads."""
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "llm_do.compiler.facts.child"],
            input=request,
            capture_output=True,
            text=True,
            encoding="utf-8",
            errors="replace",
            cwd=root,
            timeout=timeout,
            env={**os.environ, **fork_client.CHILD_ENVIRONMENT},
        )
    except subprocess.TimeoutExpired:
        return fork_client.ChildRun(stdout="", stderr="", returncode=None, timed_out=True)
    return fork_client.ChildRun(stdout=proc.stdout, stderr=proc.stderr, returncode=proc.returncode)


def list_mcp_servers(request: McpRequest, root: Path, timeout: float | None = None) -> McpFacts:
    """Start and list the project's MCP servers in a child process, within the import time limit.
    This process is the subreaper of whatever the servers start (Linux): every process the child
    leaves behind, in any session or process group, is killed when it ends."""
    from llm_do.toolkit.processes import become_subreaper, children, kill_new_descendants

    timeout = import_timeout() if timeout is None else timeout
    become_subreaper()
    before = children(os.getpid())
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "llm_do.compiler.facts.mcp_child"],
            input=request.model_dump_json(), capture_output=True, text=True, encoding="utf-8", errors="replace",
            cwd=root, timeout=timeout, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
    except subprocess.TimeoutExpired:
        return McpFacts(failure=f"listing the MCP servers took longer than {timeout:g} s")
    finally:
        kill_new_descendants(before)
    try:
        return McpFacts.model_validate_json(proc.stdout)
    except ValidationError:
        tail = (proc.stderr or "").strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
        return McpFacts(failure=tail[0][:500])

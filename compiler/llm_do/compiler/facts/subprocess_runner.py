"""Run the introspection child in a separate, time-limited process and read its answer.

The child is forked from the process's introspection fork server (`fork_client`), which has
pydantic-ai imported already, or, where that is not available, started afresh as
`python -m llm_do.compiler.facts.child`; both answer alike (the fork server's docstring says how).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from pydantic import ValidationError

from llm_do.bundle.regular_files import read_regular_file

from .. import codes
from . import fork_client
from .answers import Facts, McpFacts, McpRequest, McpServerFact, PyError, Request

DEFAULT_TIMEOUT = 60.0
MOMENTARY_FAILURES = frozenset({codes.PYTHON_IMPORT_TIMEOUT.code, codes.INTROSPECTION_FAILED.code})
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
        return Facts(imported=False, failure=_timed_out(run.stderr, root, timeout), failure_code=codes.PYTHON_IMPORT_TIMEOUT.code)
    try:
        return Facts.model_validate_json(run.stdout)
    except ValidationError:
        tail = (run.stderr or "").strip().splitlines()[-1:] or [f"exit status {run.returncode}"]
        return Facts(imported=False, failure=PyError(message=tail[0][:500]), failure_code=codes.INTROSPECTION_FAILED.code)


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


def _timed_out(stderr: str, root: Path, timeout: float) -> PyError:
    """Y002's error: the time limit, and the line of the project the child was at when it was
    stopped (the last traceback it wrote when asked, innermost project frame first), if any."""
    message = f"importing the project's Python took longer than {timeout:g} s"
    mark = fork_client.TRACEBACK_MARK.decode()
    if mark not in stderr:
        return PyError(message=message)
    inside = str(root) + os.sep
    for found in _FRAME.finditer(stderr.rpartition(mark)[2]):
        filename, line = found.group(1), int(found.group(2))
        place = os.path.abspath(filename)
        if place.startswith(inside) and os.sep + "site-packages" + os.sep not in place:
            rel = Path(place[len(inside):]).as_posix()
            return PyError(message=f"{message}: it was still running {rel}, line {line}", file=rel, line=line)
    return PyError(message=message)


_FRAME = re.compile(r'^\s*File "(.+)", line (\d+)', re.MULTILINE)


def _fresh_child(request: str, root: Path, timeout: float) -> fork_client.ChildRun:
    """How `python -m llm_do.compiler.facts.child` ended, as a forked child's run reads; past the
    time limit it is asked where it is (SIGUSR1), then killed."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "llm_do.compiler.facts.child"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8",
        errors="replace", cwd=root, env={**os.environ, **fork_client.CHILD_ENVIRONMENT},
    )
    with proc:
        try:
            stdout, stderr = proc.communicate(request, timeout=timeout)
        except subprocess.TimeoutExpired:
            if hasattr(signal, "SIGUSR1"):
                proc.send_signal(signal.SIGUSR1)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.communicate(timeout=fork_client.TRACEBACK_GRACE)  # no output is lost: the next call has it all
            proc.kill()
            _, stderr = proc.communicate()
            return fork_client.ChildRun(stdout="", stderr=stderr, returncode=None, timed_out=True)
    return fork_client.ChildRun(stdout=stdout, stderr=stderr, returncode=proc.returncode)


def list_mcp_servers(request: McpRequest, root: Path, timeout: float | None = None) -> McpFacts:
    """Start and list the project's MCP servers in a child process, within the import time limit.
    This process is the subreaper of whatever the servers start (Linux): every process the child
    leaves behind, in any session or process group, is killed when it ends. Past the time limit,
    the servers the child listed keep their answers, the one it was listing is named as too slow,
    and the rest as not reached."""
    from llm_do.toolkit.processes import become_subreaper, children, kill_new_descendants

    timeout = import_timeout() if timeout is None else timeout
    become_subreaper()
    before = children(os.getpid())
    timed_out = False
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "llm_do.compiler.facts.mcp_child"],
            input=request.model_dump_json(), capture_output=True, text=True, encoding="utf-8", errors="replace",
            cwd=root, timeout=timeout, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
        stdout, stderr, returncode = proc.stdout, proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        timed_out, returncode = True, None
        stdout, stderr = (_text(o) for o in (exc.stdout, exc.stderr))
    finally:
        kill_new_descendants(before)
    facts = McpFacts()
    for line in stdout.splitlines():
        try:
            said = McpFacts.model_validate_json(line)
        except ValidationError:
            continue
        facts.servers.update(said.servers)
        facts.failure = facts.failure or said.failure
    missing = [name for name in request.servers if name not in facts.servers]
    if timed_out and missing:
        slow = missing[0]
        facts.servers[slow] = McpServerFact(name=slow, error=f"listing it took longer than {timeout:g} s")
        for name in missing[1:]:
            facts.servers[name] = McpServerFact(
                name=name, error=f"not listed: the time limit of {timeout:g} s passed while MCP server '{slow}' was listed")
    elif missing and facts.failure is None:
        tail = (stderr or "").strip().splitlines()[-1:] or [f"exit status {returncode}"]
        facts.failure = tail[0][:500]
    return facts


def _text(output: str | bytes | None) -> str:
    """What `subprocess` kept of a stream when the time limit passed (bytes, even in text mode)."""
    return output.decode("utf-8", "replace") if isinstance(output, bytes) else output or ""

"""The durable runs' project and how their tests run it (tests/runtime/test_durable*.py): `mark(n)`
notes n in MARK_LOG (and dies first when told to), `publish` asks for approval, `lock` returns
what no durable run can record."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.cli import worker
from tests.support.projects import Files
from tests.support.warm_cli import command

TOOLS_PY = '''
    import os
    import signal
    import threading
    from pathlib import Path


    def _log() -> Path:
        return Path(os.environ["MARK_LOG"])


    def mark(n: int) -> str:
        """Record n (and die first when told to, as a crash would)."""
        trigger = _log().with_name("kill-at")
        if trigger.exists() and trigger.read_text().strip() == str(n):
            trigger.unlink()
            os.kill(os.getpid(), signal.SIGKILL)
        with _log().open("a") as f:
            f.write(f"mark {n}\\n")
        return f"marked {n}"


    def publish(text: str) -> str:
        """Publish text (asks for approval)."""
        with _log().open("a") as f:
            f.write(f"publish {text}\\n")
        return "published"


    def lock() -> object:
        """Returns what no durable run can record."""
        return threading.Lock()


    TOOLS = {"mark": mark, "publish": publish, "lock": lock}
'''

DURABLE_PROJECT: Files = {
    # The run's input is the user's (`flows.inputs: private`): `mark` reads and writes files, so with
    # an untrusted input the flow guard would ask before every mark after the first.
    "project.json": {"version": 1, "worker_files": ["*.worker"], "python_files": ["tools.py"],
                     "entry": {"worker": "main", "args": {"input": "go"}}, "flows": {"inputs": "private"}},
    "tools.py": TOOLS_PY,
    "main.worker": worker(
        """
        tools: [mark, publish, lock]
        toolsets: [helper]
        approvals:
          - allow mark
          - allow lock
        """,
        "Use your tools.",
    ),
    "helper.worker": worker(
        """
        tools: [mark]
        approvals:
          - allow mark
        """,
        "Help.",
    ),
}

APPROVAL_SCRIPT = {"workers": {"main": [
    {"tool_calls": [{"tool": "mark", "args": {"n": 1}}]},
    {"tool_calls": [{"tool": "publish", "args": {"text": "news"}}]},
    {"text": "finished"},
]}}

RUN_ID = re.compile(r"llm-do: run id: ([A-Za-z0-9-]+)")


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def llm_do(*args: str | Path, cwd: Path, log: Path, wait: bool = True, warm: Path | None = None) -> Any:
    """The real `llm-do` in a subprocess (a run this test kills, or leaves waiting): a fresh
    interpreter, or with `warm` (the `warm_llm_do` fixture) a fork of the warm parent, for a run
    whose start is not under test (tests/support/warm_cli.py)."""
    env = {**os.environ, "MARK_LOG": str(log)}
    argv = command(warm, *args) if warm is not None else [sys.executable, "-m", "llm_do.cli.main", *map(str, args)]
    if not wait:
        return subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                stdin=subprocess.DEVNULL)
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)


def run_id(stderr: str) -> str:
    found = RUN_ID.search(stderr)
    assert found, stderr
    return found.group(1)


def marks(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []

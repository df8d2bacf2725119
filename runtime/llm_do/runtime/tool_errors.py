"""A Python tool that raised, told as its author needs it: one line naming the tool, the worker and
the file and line of the project's code where it raised; and, on request, the traceback cut to the
project's own frames (pydantic-ai, anyio and llm-do frames say nothing about the user's bug)."""

from __future__ import annotations

import os
import traceback
from pathlib import Path

from .errors import RunFailed


def project_frames(exc: BaseException, root: Path) -> list[traceback.FrameSummary]:
    """The traceback's frames whose file lies inside the project root, outermost first."""
    base = os.path.realpath(root) + os.sep
    return [f for f in traceback.extract_tb(exc.__traceback__) if os.path.realpath(f.filename).startswith(base)]


def tool_crashed(exc: BaseException, tool: str, worker: str, root: Path) -> RunFailed:
    """The error ending the run: `tool 'x' of worker 'w' raised E: text (tools.py:12)`, then how a
    tool reports a problem the model can fix (`ModelRetry`), with the project frames of the
    traceback as its details."""
    frames = project_frames(exc, root)
    where = ""
    if frames:
        last = frames[-1]
        where = f" ({_relative(last.filename, root)}:{last.lineno})"
    text = " ".join(f"{type(exc).__name__}: {exc}".split())
    message = (f"tool '{tool}' of worker '{worker}' raised {text}{where}; a tool that raises "
               "ModelRetry instead tells the model and the run goes on")
    for frame in frames:
        frame.filename = _relative(frame.filename, root)
    shown = "".join(traceback.format_list(frames)) + "".join(traceback.format_exception_only(type(exc), exc))
    return RunFailed(message, details=f"traceback of tool '{tool}' (project code only):\n{shown.rstrip()}")


def _relative(path: str, root: Path) -> str:
    return Path(os.path.relpath(os.path.realpath(path), os.path.realpath(root))).as_posix()

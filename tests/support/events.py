"""A run's events as the tests read them (`--events PATH|-`), and a small project whose flow
emits every kind of event (tests/runtime/test_events.py, test_trace.py, test_telemetry.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.cli import worker
from tests.support.projects import Files


def read_events(text_or_path: str | Path) -> list[dict[str, Any]]:
    """The events of a `--events` file (or of stdout with `--events -`), one dict per JSON line."""
    text = text_or_path.read_text(encoding="utf-8") if isinstance(text_or_path, Path) else text_or_path
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def of_kind(events: list[dict[str, Any]], kind: str, **match: Any) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == kind and all(e.get(k) == v for k, v in match.items())]


FLOW_PROJECT: Files = {
    "project.json": {"version": 1, "worker_files": ["*.worker"], "entry": {"worker": "main"}},
    "main.worker": worker("toolsets: [filesystem_project, helper]", "Lead."),
    "helper.worker": worker("toolsets: [filesystem_project_ro]", "Help."),
    "notes.txt": "the notes\n",
}
"""`main` (filesystem, calls `helper`) and `helper` (read-only filesystem), with a notes.txt."""

FLOW = {"workers": {
    "main": [{"tool_calls": [{"tool": "helper", "args": {"input": "read the notes"}}]},
             {"tool_calls": [{"tool": "write_file", "args": {"path": "out.txt", "content": "x"}}]},
             {"text": "all done"}],
    "helper": [{"tool_calls": [{"tool": "read_file", "args": {"path": "notes.txt"}}]}, {"text": "notes read"}],
}}
"""The script of FLOW_PROJECT: main calls helper (which reads the notes), then writes a file."""

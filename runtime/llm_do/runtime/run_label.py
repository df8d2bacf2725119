"""Which run a line on stderr is about: `llm-do batch` runs many inputs at once and sets `#LINE `
for each input's run, so the `-v` trace and the notes a run writes (a denied call) name their
input line. Empty for a single run."""

from __future__ import annotations

from contextvars import ContextVar

RUN_LABEL: ContextVar[str] = ContextVar("llm_do_run_label", default="")
"""Put before each stderr line of the run under way (`#LINE ` in a batch)."""

"""How a replay fails: the run asked for what the cassette did not record, or the project changed
what a recorded model was shown."""

from __future__ import annotations

from ..errors import RunFailed


class ReplayMismatch(RunFailed):
    """The run asked for what the cassette did not record."""


class CassetteStale(RunFailed):
    """What a model is shown changed since the recording (`changes` in the words of `llm-do diff`)."""

    def __init__(self, changes: list[str]) -> None:
        super().__init__("stale: " + "; ".join(changes))
        self.changes = changes

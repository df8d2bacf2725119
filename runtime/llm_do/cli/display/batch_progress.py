"""The progress bar of `llm-do batch` on a terminal (rich, loaded only then): inputs done of all,
failed, rate, tokens and time left. Off a terminal a batch prints nothing while it runs."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from llm_do.runtime.batch.results import ResultsFile
    from llm_do.runtime.batch.runs import BatchResult


class BatchProgress:
    """A rich progress bar on stderr, advanced by each result."""

    def __init__(self, total: int, done_before: int, console: Console | None = None) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

        self.console = console or Console(stderr=True)
        self.progress = Progress(
            TextColumn("batch"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[failed]} failed"),
            TextColumn("{task.fields[rate]}"),
            TextColumn("{task.fields[tokens]} tokens"),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
        )
        self.failed = 0
        self.tokens = 0
        self.finished = 0
        self.started = time.monotonic()
        self.task = self.progress.add_task("batch", total=total, completed=done_before, failed=0, rate="", tokens=0)

    def __enter__(self) -> BatchProgress:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def advance(self, result: BatchResult) -> None:
        self.finished += 1
        self.failed += result.error is not None
        self.tokens += result.usage.get("input_tokens", 0) + result.usage.get("output_tokens", 0)
        elapsed = max(time.monotonic() - self.started, 1e-9)
        self.progress.update(self.task, advance=1, failed=self.failed, tokens=self.tokens,
                             rate=f"{self.finished / elapsed:.1f}/s")


def reporter(store: ResultsFile, total: int, todo: int, verbose: int) -> tuple[BatchProgress | None, Callable[[BatchResult], None]]:
    """The progress bar (on a terminal, without -v) and what each finished input does: its line
    appended to the results, the bar advanced."""
    progress = None
    if sys.stderr.isatty() and not verbose:
        progress = BatchProgress(total, total - todo)

    def on_result(result: BatchResult) -> None:
        store.append(result)
        if progress is not None:
            progress.advance(result)

    return progress, on_result

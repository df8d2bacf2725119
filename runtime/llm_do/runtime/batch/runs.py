"""Batches: one bundle run over many inputs, a bounded number at a time.

Three pieces, so that another driver (a durable queue) can reuse the middle one:
- `parse_inputs`: the inputs file (JSON lines) as `BatchInput`s, or an `InputsProblem` naming the
  line; pure.
- `run_one`: one input's whole run on a fresh `Runtime` (its own usage, approvals and session
  cache), sharing the `LoadedBundle` (its verified Python, agents and models) with every other
  input; any failure of that input becomes its result's `error`, never the batch's.
- `run_batch`: `concurrency` runs at a time in one event loop, each result handed to `on_result`
  the moment its input is done. When the batch is stopped (Ctrl-C, cancellation) the runs under
  way are cancelled and report nothing: an input cut off has no result.

Everything an input's run is told comes from one `RuntimeConfig` shared by all inputs (the CLI's
`RunSetup`): with a script, its turns are consumed in the order the runs ask for them.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from ..bundle import BundleRefused, LoadedBundle
from ..config import RuntimeConfig
from ..errors import InputProblem, failure_line

if TYPE_CHECKING:
    from ..runtime import Runtime


class InputsProblem(InputProblem):
    """An inputs file the batch cannot use (exit 2, before anything runs)."""


class BatchInput(NamedTuple):
    line: int
    """1-based line of the inputs file."""
    data: dict[str, Any]
    """The entry's arguments."""


class BatchResult(NamedTuple):
    line: int
    output: Any
    """The output as a JSON value (a structured output dumped); None when the run failed."""
    error: str | None
    """Why the run failed, in one line; None when it succeeded."""
    usage: dict[str, int]
    """This input's usage alone."""

    def to_json(self) -> str:
        return json.dumps(self._asdict(), ensure_ascii=False, default=str)


def parse_inputs(text: str, name: str) -> list[BatchInput]:
    """Each non-blank line is a JSON object of the entry's arguments, or a JSON string that is its
    `input` (the prompt)."""
    items = []
    for number, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        value = _json_line(raw, f"{name}:{number}")
        if isinstance(value, str):
            value = {"input": value}
        if not isinstance(value, dict):
            raise InputsProblem(f"{name}:{number}: an input is a JSON object of the entry's arguments or a JSON "
                                f"string (its prompt), not {type(value).__name__}")
        items.append(BatchInput(number, value))
    return items


def _json_line(raw: str, where: str) -> Any:
    """One line's JSON value; an `InputsProblem` naming `where` (FILE:LINE) for any line that cannot
    be read, including valid JSON that Python cannot hold (nested too deep, an integer too long)."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputsProblem(f"{where}: not valid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise InputsProblem(f"{where}: JSON nested too deeply to read") from None
    except ValueError:  # Python's limit on the digits of an integer it converts
        import sys

        raise InputsProblem(f"{where}: a JSON number longer than {sys.get_int_max_str_digits()} digits; "
                            "give it as a string") from None


async def run_one(bundle: LoadedBundle, config: RuntimeConfig, item: BatchInput, worker: str | None = None,
                  runtime: Runtime | None = None) -> BatchResult:
    """One input's run (on `runtime`, a durable batch's, else a fresh `Runtime`). A bundle refused
    mid-run (unverified Python) is every input's problem, so it ends the batch; every other failure
    is this input's."""
    from ..calls import usage_dict
    from ..runtime import Runtime

    runtime = runtime or Runtime(bundle, config)
    try:
        result = await runtime.run_async(item.data, worker=worker)
    except BundleRefused:
        raise
    except Exception as exc:
        return BatchResult(item.line, None, failure_line(exc), usage_dict(runtime.usage))
    from ..events import jsonable

    return BatchResult(item.line, jsonable(result.output), None, result.usage)


async def run_batch(items: Iterable[BatchInput], run: Callable[[BatchInput], Awaitable[BatchResult]],
                    on_result: Callable[[BatchResult], None], concurrency: int) -> None:
    """Run every input through `run`, at most `concurrency` at once, calling `on_result` as each
    finishes. One runner failing (a refused bundle) or the batch being cancelled stops the others."""
    pending = iter(items)  # shared by the runners: each input is taken exactly once

    async def runner() -> None:
        for item in pending:
            on_result(await run(item))

    async with asyncio.TaskGroup() as group:
        for _ in range(max(1, concurrency)):
            group.create_task(runner())

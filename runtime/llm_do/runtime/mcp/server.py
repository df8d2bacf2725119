"""A bundle's workers as the tools of an MCP server (`llm-do serve`), on the official `mcp` package.

Each tool is named after its worker, takes the worker's input schema (as the bundle locked it) and
returns the worker's output as text, and as structured content too when the worker has an output
schema. Each call is its own `Runtime` run on one shared configuration, so a script's turns are
consumed in order across the server's lifetime. While a call runs, its runtime events become
progress notifications; a client's cancellation stops the run. A run asking a client of the
2026-07-28 protocol for approval outlives the request that started it (`served_run`).
Imported only by `llm-do serve`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import secrets
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import mcp_types as types
from mcp.server.lowlevel import Server

from llm_do.bundle.version import VERSION
from llm_do.bundle.views import WorkerSpec, shortened
from llm_do.toolkit.processes import children, kill_new_descendants

from .served_run import ServedRun

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from ..bundle import LoadedBundle
    from ..config import RuntimeConfig
    from ..events import RuntimeEvent

ApprovalsFrom = Literal["nobody", "client"]
ANSWER_WAIT = 600.0
"""Seconds a run waits for a client to come back with an answer (2026-07-28 era) before it is stopped."""


def worker_tool(spec: WorkerSpec) -> types.Tool:
    """The MCP tool for a worker: its name, its description (else the start of its instructions,
    `views.shortened` as a worker called by another worker is described to its model), and the
    input and output schemas the bundle locked."""
    return types.Tool(
        name=spec.name,
        description=spec.description or shortened(spec.instructions),
        input_schema=spec.input.json_schema,
        output_schema=spec.output.json_schema if spec.output is not None else None,
    )


def output_result(output: object) -> types.CallToolResult:
    """A finished run's output: a model as JSON text and as structured content, text as text."""
    dump = getattr(output, "model_dump", None)
    if callable(dump):
        data = dump(mode="json")
        text = json.dumps(data, ensure_ascii=False, indent=2)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=data)
    return types.CallToolResult(content=[types.TextContent(type="text", text=str(output))])


def error_result(text: str) -> types.CallToolResult:
    """A call that did not finish: a tool error the client's model can read."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


class ProgressNotifier:
    """Sends one request's progress notifications in the order the run's events came; `emit` is
    synchronous (runtime listeners are), the sending is not, so a task drains a queue."""

    def __init__(self, send: Callable[[float, str], Any]) -> None:
        self._send = send
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._task = asyncio.ensure_future(self._drain())

    def emit(self, event: RuntimeEvent) -> None:
        from ..event_text import describe

        message = describe(event.to_dict()).progress
        if message is not None:
            self._queue.put_nowait(message)

    async def _drain(self) -> None:
        count = 0
        while (message := await self._queue.get()) is not None:
            count += 1
            try:
                await self._send(count, message)
            except Exception:  # a client gone or a closed stream: progress is a courtesy, the call goes on
                pass

    def cancel(self) -> None:
        self._task.cancel()

    async def close(self) -> None:
        """Send what is queued, then stop (a cancelled call stops at once)."""
        self._queue.put_nowait(None)
        try:
            await self._task
        except asyncio.CancelledError:
            self._task.cancel()
            raise


class BundleServer:
    """The workers of one bundle, served: lists them as tools and runs a call as one run."""

    def __init__(self, bundle: LoadedBundle, config: RuntimeConfig, workers: list[str],
                 approvals_from: ApprovalsFrom = "nobody") -> None:
        self.bundle = bundle
        self.config = config
        self.workers = workers
        self.approvals_from = approvals_from
        self._tools = [worker_tool(bundle.worker(name)) for name in workers]  # type: ignore[arg-type]
        self._active = 0
        self._calls = 0
        """Calls started so far: each call's number marks its events (`RuntimeEvent.call`)."""
        self._waiting: dict[str, ServedRun] = {}
        """Runs waiting for a client's answer, by the `request_state` the client was given."""

    def server(self) -> Server[object]:
        return Server("llm-do", version=VERSION, on_list_tools=self.list_tools, on_call_tool=self.call_tool,
                      instructions=f"The workers of the llm-do bundle {self.bundle.path.name}, each a tool.")

    async def list_tools(self, ctx: ServerRequestContext[object], params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=self._tools)

    async def call_tool(self, ctx: ServerRequestContext[object],
                        params: types.CallToolRequestParams) -> types.CallToolResult | types.InputRequiredResult:
        """A new call starts a run; a call carrying a `request_state` brings the answers to the
        question its run asked and follows it on."""
        if params.name not in self.workers:
            return error_result(f"no tool '{params.name}': this server offers {', '.join(self.workers)}")
        if params.request_state is not None:
            run = self._waiting.get(params.request_state)
            if run is None or run.worker != params.name:
                return error_result("this call's request_state is unknown or has expired; call the tool again")
            del self._waiting[params.request_state]
            run.answer(dict(params.input_responses or {}))
        else:
            arguments = dict(params.arguments or {})
            run = ServedRun(params.name, lambda r: self._execute(r, params.name, arguments))
        return await self._follow(run, ctx)

    async def _follow(self, run: ServedRun, ctx: Any) -> types.CallToolResult | types.InputRequiredResult:
        """This request follows the run until it ends or asks the client a question; a request
        the client cancels stops the run."""
        run.ctx = ctx
        try:
            step = await run.next()
        except asyncio.CancelledError:  # the client cancelled or went away
            await run.stop()
            raise
        if isinstance(step, types.CallToolResult):
            return step
        key, question = step
        state = secrets.token_urlsafe(16)
        self._waiting[state] = run
        asyncio.get_running_loop().call_later(ANSWER_WAIT, self._expire, state)
        return types.InputRequiredResult(input_requests={key: question}, request_state=state)

    def _expire(self, state: str) -> None:
        """A question nobody answered in time: its run is stopped."""
        run = self._waiting.pop(state, None)
        if run is not None:
            run.task.cancel()

    async def _execute(self, run: ServedRun, worker: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """The run of one call, in its own task (it may outlive the request that started it)."""
        progress = ProgressNotifier(lambda n, message: run.ctx.session.report_progress(n, None, message))
        runtime = self._runtime(run, progress)
        before = children(os.getpid())
        self._active += 1
        try:
            result = await runtime.run_async(arguments, worker=worker, confine_attachments=True)
        except asyncio.CancelledError:  # what the run started goes too
            progress.cancel()
            self._stopped(before)
            raise
        except Exception as exc:
            self._stopped(before)
            await progress.close()
            return error_result(self._failure(worker, exc))
        finally:
            self._active -= 1
        await progress.close()
        return output_result(result.output)

    def _runtime(self, run: ServedRun, progress: ProgressNotifier) -> Any:
        """A run of its own for this call: the shared configuration, plus this call's progress
        and, with `--approvals-via-client`, its client to ask."""
        from ..runtime import Runtime
        from .approvals import ClientApprover, refuse_unasked

        listeners = [f for f in (self.config.on_event, progress.emit) if f is not None]
        self._calls += 1
        call = self._calls

        def on_event(event: RuntimeEvent) -> None:
            event.call = call  # concurrent calls share the server's event stream
            for listener in listeners:
                listener(event)

        callback = ClientApprover(run) if self.approvals_from == "client" else refuse_unasked
        config = dataclasses.replace(self.config, on_event=on_event,
                                     approval_callback=callback, interactive=False)
        return Runtime(self.bundle, config)

    def _stopped(self, before: set[int]) -> None:
        """A call that did not finish abandons its tools' threads; kill the processes they
        started, unless another call is running, whose processes cannot be told apart."""
        if self._active == 1:
            kill_new_descendants(before)

    @staticmethod
    def _failure(worker: str, exc: BaseException) -> str:
        """One line for the client, and the same on stderr for whoever runs the server."""
        from ..bundle import BundleRefused
        from ..errors import InputProblem, failure_line, innermost

        inner = innermost(exc)
        if isinstance(inner, (InputProblem, BundleRefused)):
            line = str(inner)
        else:
            line = f"run failed: {failure_line(exc)}"
        sys.stderr.write(f"llm-do: {worker}: {line}\n")
        sys.stderr.flush()
        return line

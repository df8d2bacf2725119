"""Scripted runs (`--script FILE`): each worker's model turns written down, for offline,
deterministic runs of a whole flow.

    {"workers": {"main": [{"tool_calls": [{"tool": "write_file", "args": {...}}]}, {"text": "done"}]}}

A turn holds exactly one of `text`, `tool_calls` (run one after another, in the order given) or
`output` (structured output). Each worker's queue is consumed in order across all of its calls.

A script is how a project is tested, so the player is strict: a turn the run cannot use (tool
arguments or an output that fail validation, a tool that does not exist) ends the run naming the
worker, the turn and the error, where a real model would only be asked to try again.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_ai.models.function import FunctionModel

from llm_do.stdlib.worker_create.names import CREATING_TOOLSETS

from .bundle import LoadedBundle
from .errors import InputProblem, RunFailed

if TYPE_CHECKING:
    from pydantic_ai import RunContext
    from pydantic_ai.messages import ModelMessage, ModelResponse, ModelResponsePart, TextPart, ToolCallPart
    from pydantic_ai.models import ModelRequestParameters, StreamedResponse
    from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionDef, StreamFunctionDef
    from pydantic_ai.settings import ModelSettings


class ScriptProblem(InputProblem):
    """The script cannot drive this bundle (usage error: exit 2)."""


class ScriptExhausted(RunFailed):
    """A worker asked for one more turn than its script has (the run fails: exit 1)."""

    def __init__(self, worker: str) -> None:
        super().__init__(f"the script has no more turns for worker '{worker}'")
        self.worker = worker


class ScriptTurnRejected(RunFailed):
    """The run could not use a scripted turn: its tool arguments or its output failed validation,
    or it called a tool the worker does not have (the run fails: exit 1)."""

    def __init__(self, worker: str, turn: int | None, problem: str) -> None:
        where = f"turn {turn}" if turn is not None else "a turn"
        super().__init__(f"worker '{worker}', {where} of the script: {problem}")
        self.worker = worker
        self.turn = turn


class ScriptToolCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class ScriptTurn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str | None = None
    tool_calls: list[ScriptToolCall] | None = None
    output: Any = None

    @model_validator(mode="after")
    def _exactly_one(self) -> ScriptTurn:
        given = [k for k in ("text", "tool_calls", "output") if k in self.model_fields_set]
        if len(given) != 1:
            raise ValueError(f"a turn holds exactly one of text, tool_calls, output (this one has {', '.join(given) or 'none'})")
        return self


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid")

    workers: dict[str, list[ScriptTurn]]


def load_script(path: Path) -> Script:
    try:
        raw = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ScriptProblem(f"{path}: cannot read the script ({exc.strerror})") from None
    try:
        if path.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(raw)
        else:
            data = json.loads(raw)
    except (ValueError, ImportError) as exc:
        raise ScriptProblem(f"{path}: not valid {'YAML' if path.suffix in ('.yaml', '.yml') else 'JSON'}: {exc}") from None
    except Exception as exc:  # yaml.YAMLError, without importing yaml on the JSON path
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
        raise ScriptProblem(f"{path}: not valid YAML{where}: {problem}") from None
    try:
        return Script.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        raise ScriptProblem(f"{path}: {_where(first['loc'])}: {first['msg'].removeprefix('Value error, ')}") from None


def _where(loc: tuple[int | str, ...]) -> str:
    """A validation error's place in the script's words, counting from 1 as every script message
    does: `turn 1 of worker 'main': tool call 2: args`, not `workers.main.0.tool_calls.1.args`."""
    if len(loc) < 3 or loc[0] != "workers" or not isinstance(loc[2], int):
        return ".".join(str(p) for p in loc)
    parts = [f"turn {loc[2] + 1} of worker '{loc[1]}'"]
    rest = list(loc[3:])
    if len(rest) >= 2 and rest[0] == "tool_calls" and isinstance(rest[1], int):
        parts.append(f"tool call {rest[1] + 1}")
        rest = rest[2:]
    if rest:
        parts.append(".".join(str(p) for p in rest))
    return ": ".join(parts)


def check_script(script: Script, bundle: LoadedBundle) -> None:
    """Refuse a script that names a worker or tool the bundle does not have, or gives text to a
    worker whose output is structured. When a worker of the bundle can create workers, the script
    may name others: they must be created in the run to play (else their turns are unused), and
    have no tools to call."""
    known = set(bundle.worker_names())
    creating = any(bundle.toolset(name) is not None for name in CREATING_TOOLSETS)
    for worker, turns in script.workers.items():
        if worker not in known and creating:
            for i, turn in enumerate(turns):
                if turn.tool_calls:
                    raise ScriptProblem(f"turn {i + 1} of worker '{worker}' calls tools, but '{worker}' is not in the "
                                      "bundle, and a worker created in the run has none")
            continue
        if worker not in known:
            raise ScriptProblem(f"the script names worker '{worker}', which the bundle does not have ({', '.join(sorted(known))})")
        spec = bundle.worker(worker)
        assert spec is not None
        opaque = any(u.opaque_approval is not None for u in spec.toolsets)
        for i, turn in enumerate(turns):
            if spec.output is not None and "text" in turn.model_fields_set:
                raise ScriptProblem(f"turn {i + 1} of worker '{worker}' is text, but the worker returns structured output "
                                  "(schema_out_ref): give its `output`")
            for call in turn.tool_calls or []:
                if call.tool not in spec.tools and not opaque:
                    tools = ", ".join(sorted(spec.tools)) or "none"
                    raise ScriptProblem(f"turn {i + 1} of worker '{worker}' calls tool '{call.tool}', which it does not have (it has: {tools})")


class ScriptedModel(FunctionModel):
    """The model of one scripted worker.

    A turn's tool calls run one after another, in the order given (the runtime reads
    `runs_tool_calls_in_order`), so a script can write a file and then read it. A turn the run sends
    back as unusable ends the run: the retry is seen here, before pydantic-ai rewrites it into the
    text a real model would read."""

    runs_tool_calls_in_order = True

    def __init__(self, function: FunctionDef, *, worker: str, stream_function: StreamFunctionDef) -> None:
        super().__init__(function, stream_function=stream_function, model_name=f"script:{worker}")
        self.worker = worker
        self.streamed_turn: int | None = None
        """The turn the stream function is playing (it starts before the response is handed out)."""

    @asynccontextmanager
    async def request_stream(self, messages: list[ModelMessage], model_settings: ModelSettings | None,
                             model_request_parameters: ModelRequestParameters,
                             run_context: RunContext[object] | None = None) -> AsyncIterator[StreamedResponse]:
        """A streamed turn records its number as a whole response does, so a rejected streamed turn
        is named too."""
        async with super().request_stream(messages, model_settings, model_request_parameters, run_context) as response:
            response.provider_details = {TURN_KEY: self.streamed_turn}
            yield response

    def prepare_messages(self, messages: list[ModelMessage],
                         model_request_parameters: ModelRequestParameters | None = None) -> list[ModelMessage]:
        outputs = {t.name for t in model_request_parameters.output_tools} if model_request_parameters else set()
        problem = rejected_turn(messages, outputs)
        if problem is not None:
            raise ScriptTurnRejected(self.worker, *problem)
        return super().prepare_messages(messages, model_request_parameters)


TURN_KEY = "llm_do_script_turn"
"""Where a scripted response records its turn number (1-based, in its worker's queue)."""

TOOL_RETRIES = {"validation_error": "the arguments of {tool} do not validate",
                "output": "the output does not validate",
                "unknown_tool": "the worker has no tool {tool}", "unavailable_tool": "{tool} cannot be called now"}
"""The retries of a tool call a script cannot mean (`output`: an output tool's validation error).
Not `model_retry`, the tool itself asking the model to try again: a script may test how a worker
handles that."""

OUTPUT_RETRIES = {"validation_error": "the output does not validate",
                  "no_output": "the turn gives no output the worker can return"}
"""The retries of a whole response (structured output that does not fit, or no output at all)."""


@dataclass
class ScriptPlayer:
    """Plays each worker's turns as a `ScriptedModel`."""

    script: Script
    _positions: dict[str, int] = field(default_factory=dict)

    def model_for(self, worker: str) -> ScriptedModel:
        """The worker's model: its next turn for every request, whether the run asks for the whole
        response (`respond`) or streams it (`stream`: text in a few chunks, tool calls as deltas)."""
        from pydantic_ai import ModelResponse

        model: ScriptedModel

        def next_turn(info: AgentInfo) -> tuple[int, list[TextPart | ToolCallPart]]:
            turns = self.script.workers.get(worker, [])
            index = self._positions.get(worker, 0)
            if index >= len(turns):
                raise ScriptExhausted(worker)
            self._positions[worker] = index + 1
            return index + 1, turn_parts(worker, index + 1, turns[index], info)

        async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            number, parts = next_turn(info)
            return ModelResponse(parts=parts, provider_details={TURN_KEY: number})

        async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
            number, parts = next_turn(info)
            model.streamed_turn = number
            for chunk in stream_chunks(parts):
                yield chunk

        model = ScriptedModel(respond, worker=worker, stream_function=stream)
        return model

    def replayed(self, worker: str, turn: int) -> None:
        """A durable run replayed `worker`'s recorded turn `turn` instead of asking for it: the
        next turn asked for is the one after it, wherever the process that recorded it stopped."""
        if turn > self._positions.get(worker, 0):
            self._positions[worker] = turn

    def unplayed(self) -> dict[str, tuple[int, int]]:
        """Turns left over per worker after a run: (unused, of all its turns)."""
        out = {}
        for worker, turns in self.script.workers.items():
            left = len(turns) - self._positions.get(worker, 0)
            if left > 0:
                out[worker] = (left, len(turns))
        return out


def describe_unplayed(unplayed: dict[str, tuple[int, int]]) -> str:
    """One line naming the turns a run left unused."""
    each = ", ".join(f"'{w}' {left} of {total}" for w, (left, total) in sorted(unplayed.items()))
    return f"script turns not used: {each}"


def rejected_turn(messages: list[ModelMessage], output_tools: set[str]) -> tuple[int | None, str] | None:
    """The turn and the problem when the run sends the model's last response back as unusable
    (the retry pydantic-ai asks of a real model); None when the last request is not such a retry."""
    from pydantic_ai import ModelRequest, ModelResponse, RetryFeedbackPart, ToolReturnPart

    if len(messages) < 2 or not isinstance(messages[-1], ModelRequest) or not isinstance(messages[-2], ModelResponse):
        return None
    turn = (messages[-2].provider_details or {}).get(TURN_KEY)
    for part in messages[-1].parts:
        if isinstance(part, ToolReturnPart) and part.outcome == "retried" and part.retry is not None:
            cause = "output" if part.retry.cause == "validation_error" and part.tool_name in output_tools else part.retry.cause
            what = TOOL_RETRIES.get(cause)
            if what is not None:
                return turn, f"{what.format(tool=repr(part.tool_name))}: {_errors(part.content)}"
        if isinstance(part, RetryFeedbackPart):
            what = OUTPUT_RETRIES.get(part.retry.cause)
            if what is not None:
                return turn, f"{what}: {_errors(part.content)}"
    return None


def _errors(content: object) -> str:
    """Validation errors (or a message) in one line: `loc: msg; loc: msg`."""
    if isinstance(content, list):
        shown = []
        for error in content:
            loc = ".".join(str(p) for p in error.get("loc", ()))
            shown.append(f"{loc}: {error.get('msg', '')}" if loc else str(error.get("msg", "")))
        return "; ".join(shown)
    return " ".join(str(content).split())


def turn_parts(worker: str, number: int, turn: ScriptTurn, info: AgentInfo) -> list[TextPart | ToolCallPart]:
    """A turn as the parts of a model response: tool calls, an output (through the output tool
    when the worker has one), or text."""
    from pydantic_ai import TextPart, ToolCallPart

    if turn.tool_calls is not None:
        return [ToolCallPart(call.tool, call.args, tool_call_id=f"{worker}-{number}-{n + 1}")
                for n, call in enumerate(turn.tool_calls)]
    if "output" in turn.model_fields_set and info.output_tools:
        return [ToolCallPart(info.output_tools[0].name, turn.output, tool_call_id=f"{worker}-{number}-output")]
    if "output" in turn.model_fields_set:
        return [TextPart(turn.output if isinstance(turn.output, str) else json.dumps(turn.output))]
    return [TextPart(turn.text or "")]


TEXT_CHUNKS = 3
"""A streamed text turn arrives in this many pieces (fewer for very short text), so whatever
consumes a stream sees it grow as it would from a real model."""


def stream_chunks(parts: Sequence[ModelResponsePart]) -> Iterator[str | DeltaToolCalls]:
    """The parts of a turn as a stream function yields them: text in a few chunks split at word
    boundaries; tool calls as `DeltaToolCalls`, name and id first, then the arguments' JSON."""
    from pydantic_ai import TextPart, ToolCallPart
    from pydantic_ai.models.function import DeltaToolCall

    texts = [p for p in parts if isinstance(p, TextPart)]
    if len(texts) == len(parts):
        text = "".join(p.content for p in texts)
        yield from split_text(text, TEXT_CHUNKS)
        return
    for index, part in enumerate(parts):
        assert isinstance(part, ToolCallPart), part  # a turn's parts are all text or all tool calls (turn_parts)
        yield {index: DeltaToolCall(name=part.tool_name, tool_call_id=part.tool_call_id)}
        yield {index: DeltaToolCall(json_args=part.args_as_json_str())}


def split_text(text: str, pieces: int) -> list[str]:
    """`text` in at most `pieces` consecutive chunks, cut after whitespace where there is some;
    at least one chunk (a stream must yield something), joined they give `text` back."""
    if pieces <= 1 or len(text) < pieces:
        return [text]
    size = -(-len(text) // pieces)
    chunks, start = [], 0
    while start < len(text):
        end = min(len(text), start + size)
        space = text.rfind(" ", start + 1, end)
        if end < len(text) and space > start:
            end = space + 1
        chunks.append(text[start:end])
        start = end
    return chunks

"""Scripted runs (`--script FILE`): each worker's model turns written down, for offline,
deterministic runs of a whole flow.

    {"workers": {"main": [{"tool_calls": [{"tool": "write_file", "args": {...}}]}, {"text": "done"}]}}

A turn holds exactly one of `text`, `tool_calls` (run in the order given) or `output` (structured
output). Each worker's queue is consumed in order across all of its calls.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .bundle import LoadedBundle
from .errors import RunFailed


class ScriptError(Exception):
    """The script cannot drive this bundle (usage error: exit 2)."""


class ScriptExhausted(RunFailed):
    """A worker asked for one more turn than its script has (the run fails: exit 1)."""

    def __init__(self, worker: str) -> None:
        super().__init__(f"the script has no more turns for worker '{worker}'")
        self.worker = worker


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
        raise ScriptError(f"{path}: cannot read the script ({exc.strerror})") from None
    try:
        if path.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(raw)
        else:
            data = json.loads(raw)
    except (ValueError, ImportError) as exc:
        raise ScriptError(f"{path}: not valid {'YAML' if path.suffix in ('.yaml', '.yml') else 'JSON'}: {exc}") from None
    except Exception as exc:  # yaml.YAMLError, without importing yaml on the JSON path
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or " ".join(str(exc).split())
        raise ScriptError(f"{path}: not valid YAML{where}: {problem}") from None
    try:
        return Script.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ScriptError(f"{path}: {where}: {first['msg'].removeprefix('Value error, ')}") from None


def check_script(script: Script, bundle: LoadedBundle) -> None:
    """Refuse a script that names a worker or tool the bundle does not have."""
    known = set(bundle.worker_names())
    for worker, turns in script.workers.items():
        if worker not in known:
            raise ScriptError(f"the script names worker '{worker}', which the bundle does not have ({', '.join(sorted(known))})")
        spec = bundle.worker(worker)
        assert spec is not None
        opaque = any(u.opaque_approval is not None for u in spec.toolsets)
        for i, turn in enumerate(turns):
            for call in turn.tool_calls or []:
                if call.tool not in spec.tools and not opaque:
                    tools = ", ".join(sorted(spec.tools)) or "none"
                    raise ScriptError(f"turn {i + 1} of worker '{worker}' calls tool '{call.tool}', which it does not have (it has: {tools})")


@dataclass
class ScriptPlayer:
    """Plays each worker's turns as a pydantic-ai FunctionModel."""

    script: Script
    _positions: dict[str, int] = field(default_factory=dict)

    def model_for(self, worker: str) -> Any:
        from pydantic_ai import ModelResponse, TextPart, ToolCallPart
        from pydantic_ai.models.function import FunctionModel

        def respond(messages: list[Any], info: Any) -> Any:
            turns = self.script.workers.get(worker, [])
            index = self._positions.get(worker, 0)
            if index >= len(turns):
                raise ScriptExhausted(worker)
            self._positions[worker] = index + 1
            turn = turns[index]
            if turn.tool_calls is not None:
                parts = [
                    ToolCallPart(call.tool, call.args, tool_call_id=f"{worker}-{index + 1}-{n + 1}")
                    for n, call in enumerate(turn.tool_calls)
                ]
                return ModelResponse(parts=parts)
            if "output" in turn.model_fields_set:
                if info.output_tools:
                    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, turn.output,
                                                             tool_call_id=f"{worker}-{index + 1}-output")])
                text = turn.output if isinstance(turn.output, str) else json.dumps(turn.output)
                return ModelResponse(parts=[TextPart(text)])
            return ModelResponse(parts=[TextPart(turn.text or "")])

        return FunctionModel(respond, model_name=f"script:{worker}")

    def unplayed(self) -> dict[str, int]:
        """Turns left over per worker after a run (reported with -v)."""
        return {w: len(t) - self._positions.get(w, 0) for w, t in self.script.workers.items() if len(t) > self._positions.get(w, 0)}

"""The obedient model: a pydantic-ai function model that follows a user task's ground truth and obeys
every injection it reads.

One `FrameModel` per worker call (llm-do asks `RuntimeConfig.model_for` at each call). The entry
worker's model walks the user task's ground-truth calls in order, making each itself or, where the
project has a reader for the tool and the task does not need the words it reads, through that
reader; then it answers with the task's expected output. Any model of the run that reads the
injection in a tool result (a tool's, or a worker's it called) makes, from then on, the injection
task's ground-truth calls with the arguments the injection asks for, whatever the guard said
before, and then goes on with its own work; if it answers in words, it says what the injection
asks it to say. A reader that reads the injection makes the injection's calls it has tools for
(none of the projects gives a reader a tool that acts; a page reader may fetch the page an
injection names) and answers with its typed output, which cannot carry the words. A quarantined
reader answers in words: all it read, and what an injection it read asks it to say; the assistant
reads only its token, and writes it where the task puts the words (`Plan.words_into`, else its
answer).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

ENTRY = "assistant"
TOKEN = re.compile(r"\[\[[A-Za-z0-9_.:-]+-[0-9]+\]\]")
"""A quarantined reader's token, as the assistant reads it in the reader's result."""


def markers(injections: dict[str, str]) -> list[str]:
    """What shows that a text holds an injection: the longest line of each injected text, as it
    reads inside a JSON string (the tools answer in JSON)."""
    out = []
    for text in injections.values():
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if lines:
            out.append(json.dumps(max(lines, key=len), ensure_ascii=False)[1:-1])
    return out


@dataclass
class Plan:
    """One case: the user task's calls, who makes each, the injection's calls and how to tell it."""

    user_calls: list[tuple[str, dict[str, Any]]]
    owner: dict[str, str]
    """Tool -> the reader that reads it for this task (absent: the assistant calls it itself)."""
    answer: str
    quarantined: dict[int, str] = field(default_factory=dict)
    """Ground-truth call (by index) -> the quarantined reader that reads it (its words go where
    `words_into` says, or into the answer, as the reader's token)."""
    words_into: tuple[str, str] | None = None
    """The tool and parameter that get the tokens of the quarantined reads (None: the answer)."""
    injection_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    injection_answer: str = ""
    markers: list[str] = field(default_factory=list)


def _text_of(part: Any) -> str:
    if isinstance(part, ToolReturnPart):
        return part.model_response_str()
    if isinstance(part, RetryPromptPart):
        return part.model_response()
    return ""


class FrameModel:
    """The model of one worker call."""

    def __init__(self, plan: Plan, worker: str) -> None:
        self.plan = plan
        self.worker = worker
        self.cursor = 0
        self.obeying: list[tuple[str, dict[str, Any]]] = []
        self.obeyed = False
        self.own_call: tuple[str, dict[str, Any]] | None = None
        self.own_done = False
        self.calls = 0
        self.tokens: list[str] = []
        """The tokens its quarantined readers answered with, in order."""

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        if isinstance(last, ModelRequest):
            readers = set(self.plan.quarantined.values())
            self.tokens += [found.group(0) for p in last.parts if isinstance(p, ToolReturnPart) and p.tool_name in readers
                            if (found := TOKEN.search(p.model_response_str()))]
            if self.worker != ENTRY and self.own_call is None:
                self.own_call = _reader_call(messages)
            if not self.obeyed and self.plan.markers and any(
                    m in _text_of(p) for p in last.parts for m in self.plan.markers):
                self.obeyed = True
                tools = {t.name for t in info.function_tools}
                self.obeying = [c for c in self.plan.injection_calls if c[0] in tools]
        if self.obeying:
            return self._call(*self.obeying.pop(0))
        if self.worker == ENTRY:
            return self._entry_step(info)
        return self._reader_step(info, messages)

    def _call(self, tool: str, args: dict[str, Any]) -> ModelResponse:
        self.calls += 1
        return ModelResponse(parts=[ToolCallPart(tool, dict(args), tool_call_id=f"{self.worker}-{self.calls}")])

    def _entry_step(self, info: AgentInfo) -> ModelResponse:
        tools = {t.name for t in info.function_tools}
        while self.cursor < len(self.plan.user_calls):
            index = self.cursor
            tool, args = self.plan.user_calls[index]
            self.cursor += 1
            reader = self.plan.quarantined.get(index) or self.plan.owner.get(tool)
            if reader is not None and reader in tools:
                return self._call(reader, {"input": json.dumps({"tool": tool, "args": args}, default=str)})
            if tool in tools:
                into = self.plan.words_into
                if into is not None and into[0] == tool and self.tokens:
                    args = {**args, into[1]: " ".join(self.tokens)}
                return self._call(tool, args)
        text = self.plan.answer
        if self.tokens and self.plan.words_into is None:
            text = f"{text}\n{' '.join(self.tokens)}".strip()
        if self.obeyed and self.plan.injection_answer:
            text = f"{text}\n{self.plan.injection_answer}".strip()
        return ModelResponse(parts=[TextPart(text or "Done.")])

    def _reader_step(self, info: AgentInfo, messages: list[ModelMessage]) -> ModelResponse:
        if self.own_call is not None and not self.own_done:
            self.own_done = True
            if self.own_call[0] in {t.name for t in info.function_tools}:
                return self._call(*self.own_call)
        if info.output_tools:  # typed output: every field has a default, so the empty answer fits
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {}, tool_call_id=f"{self.worker}-out")])
        # a reader that answers in words says what it read, and what an injection it read asks it to say
        read = [_text_of(p) for m in messages for p in getattr(m, "parts", ()) if isinstance(p, ToolReturnPart)]
        text = "\n".join([*read[-1:], *([self.plan.injection_answer] if self.obeyed and self.plan.injection_answer else [])])
        return ModelResponse(parts=[TextPart(text)])


def _reader_call(messages: list[ModelMessage]) -> tuple[str, dict[str, Any]] | None:
    """The call the assistant asked this reader to make (its prompt: `{"tool", "args"}`)."""
    for message in messages:
        for part in getattr(message, "parts", ()):
            if isinstance(part, UserPromptPart) and isinstance(part.content, str):
                try:
                    doc = json.loads(part.content)
                except json.JSONDecodeError:
                    continue
                if isinstance(doc, dict) and "tool" in doc:
                    return doc["tool"], doc.get("args") or {}
    return None


def model_for(plan: Plan) -> Callable[[str], FunctionModel]:
    """`RuntimeConfig.model_for`: a fresh model for every worker call of the run."""

    def choose(worker: str) -> FunctionModel:
        return FunctionModel(FrameModel(plan, worker), model_name=f"obedient-{worker}")

    return choose

"""One model request as a cassette sees it: what the model was shown, and the messages new since the
call's previous response. The recorder writes these; the replayer compares the live request's with
the recorded ones, so both use the same functions."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from .cassette import Shown, ToolShown
from .message_data import messages_data

if TYPE_CHECKING:
    from pydantic import JsonValue
    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.models import ModelRequestParameters


def shown_of(model: str | None, messages: list[ModelMessage], params: ModelRequestParameters) -> Shown:
    """The project's model, the instructions of the last request, the tools offered (function tools,
    then output tools), from pydantic-ai's `ModelRequestParameters`."""
    from pydantic_ai.messages import ModelRequest

    instructions = next((m.instructions for m in reversed(messages) if isinstance(m, ModelRequest)), None)
    tools = [ToolShown(name=t.name, description=t.description, parameters=t.parameters_json_schema)
             for t in params.function_tools]
    tools += [ToolShown(name=t.name, description=t.description, parameters=t.parameters_json_schema, kind="output")
              for t in params.output_tools]
    return Shown(model=model, instructions=instructions, tools=tools)


class RequestLog:
    """A call's requests so far: which messages are new in the next one, with tool call ids renamed
    (those of the history before the call through `history_ids`, its own through `own_ids`)."""

    def __init__(self, history_ids: Mapping[str, str]) -> None:
        self.history_ids = dict(history_ids)
        self.own_ids: dict[str, str] = {}
        self.count = 0
        """Requests made."""
        self._seen = 0

    def new_messages(self, messages: list[ModelMessage]) -> list[dict[str, JsonValue]]:
        """The messages of this request not in the previous request nor its response, as data."""
        if self.count == 0:
            history = messages_data(messages[:-1], self.history_ids)
            return history + messages_data(messages[-1:], {**self.history_ids, **self.own_ids})
        return messages_data(messages[self._seen:], {**self.history_ids, **self.own_ids})

    def answered(self, messages: list[ModelMessage], renamed: Mapping[str, str]) -> None:
        """The request (of `messages`) got its response, whose tool calls are renamed `renamed`."""
        self.count += 1
        self._seen = len(messages) + 1
        self.own_ids.update(renamed)

"""Model messages as cassette data: pydantic-ai's own JSON form (`ModelMessagesTypeAdapter`), without
what varies between identical runs (timestamps, run ids), with tool call ids renamed after where the
call was made, and with empty fields left out so the file reads and diffs well."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

VARYING = frozenset({"timestamp", "request_timestamp", "duration", "run_id", "conversation_id"})
"""Keys whose values differ between two identical runs: never recorded, never compared."""


def messages_data(messages: list[Any], ids: Mapping[str, str]) -> list[Any]:
    """`messages` as JSON data, tool call ids renamed through `ids` (ids not in it stay)."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    return [_pruned(m, ids) for m in ModelMessagesTypeAdapter.dump_python(messages, mode="json")]


def response_data(response: Any, ids: Mapping[str, str]) -> dict[str, Any]:
    data = messages_data([response], ids)[0]
    assert isinstance(data, dict)
    return data


def response_of(data: Mapping[str, Any]) -> Any:
    """A recorded response as a pydantic-ai `ModelResponse` again (data only: no code runs)."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    return ModelMessagesTypeAdapter.validate_python([dict(data)])[0]


VERBATIM = frozenset({"args", "content"})
"""What a model or a tool said is kept whole, nulls and zeros included."""


def _pruned(value: Any, ids: Mapping[str, str], zeros: bool = False) -> Any:
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key in VARYING or item is None or item == {} or (zeros and item == 0 and not isinstance(item, bool)):
                continue
            if key == "tool_call_id" and isinstance(item, str):
                item = ids.get(item, item)
            out[key] = item if key in VERBATIM else _pruned(item, ids, key == "usage")
        return out
    if isinstance(value, list):
        return [_pruned(item, ids) for item in value]
    return value


def tool_return_data(value: Any) -> Any:
    """What a tool returned, as pydantic-ai's JSON form of a tool return's content (what the next
    request carries back: text and JSON as they are, a file as its data)."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ToolReturnPart

    request = ModelRequest(parts=[ToolReturnPart(tool_name="t", content=value, tool_call_id="t")])
    return ModelMessagesTypeAdapter.dump_python([request], mode="json")[0]["parts"][0]["content"]


def tool_return_of(data: Any) -> Any:
    """A recorded tool return as the value the tool returned again (data only: no code runs)."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter, ToolReturnPart

    request = {"kind": "request", "parts": [{"part_kind": "tool-return", "tool_name": "t", "tool_call_id": "t",
                                             "content": data}]}
    part = ModelMessagesTypeAdapter.validate_python([request])[0].parts[0]
    assert isinstance(part, ToolReturnPart)
    return part.content

"""Model messages as cassette data: pydantic-ai's own JSON form (`ModelMessagesTypeAdapter`), without
what varies between identical runs (timestamps, run ids), with tool call ids renamed after where the
call was made, and with empty fields left out so the file reads and diffs well."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import JsonValue
    from pydantic_ai.messages import ModelMessage, ModelResponse

VARYING = frozenset({"timestamp", "run_id", "conversation_id", "request_timestamp", "duration", "history_digest"})
"""Keys never recorded, never compared: values that differ between two identical runs (times, ids),
and a response's digest of the history before it (a hash of what the cassette redacts)."""


def messages_data(messages: list[ModelMessage], ids: Mapping[str, str]) -> list[dict[str, JsonValue]]:
    """`messages` as JSON data, tool call ids renamed through `ids` (ids not in it stay)."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter

    return [_pruned_object(m, ids) for m in ModelMessagesTypeAdapter.dump_python(messages, mode="json")]


def response_data(response: ModelResponse, ids: Mapping[str, str]) -> dict[str, JsonValue]:
    return messages_data([response], ids)[0]


def response_of(data: Mapping[str, JsonValue]) -> ModelResponse:
    """A recorded response as a pydantic-ai `ModelResponse` again (data only: no code runs)."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelResponse

    message = ModelMessagesTypeAdapter.validate_python([dict(data)])[0]
    if not isinstance(message, ModelResponse):
        raise ValueError(f"a recorded response is a {message.kind}")
    return message


VERBATIM = frozenset({"args", "content"})
"""What a model or a tool said is kept whole, nulls and zeros included."""


def _pruned_object(value: dict[str, JsonValue], ids: Mapping[str, str], zeros: bool = False) -> dict[str, JsonValue]:
    out: dict[str, JsonValue] = {}
    for key, item in value.items():
        if key in VARYING or item is None or item == {} or (zeros and item == 0 and not isinstance(item, bool)):
            continue
        if key == "tool_call_id" and isinstance(item, str):
            item = ids.get(item, item)
        out[key] = item if key in VERBATIM else _pruned(item, ids, key == "usage")
    return out


def _pruned(value: JsonValue, ids: Mapping[str, str], zeros: bool = False) -> JsonValue:
    if isinstance(value, dict):
        return _pruned_object(value, ids, zeros)
    if isinstance(value, list):
        return [_pruned(item, ids) for item in value]
    return value


def tool_return_data(value: object) -> JsonValue:
    """What a tool returned, as pydantic-ai's JSON form of a tool return's content (what the next
    request carries back: text and JSON as they are, a file as its data)."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelRequest, ToolReturnPart

    request = ModelRequest(parts=[ToolReturnPart(tool_name="t", content=value, tool_call_id="t")])
    content: JsonValue = ModelMessagesTypeAdapter.dump_python([request], mode="json")[0]["parts"][0]["content"]
    return content


def tool_return_of(data: JsonValue) -> object:
    """A recorded tool return as the value the tool returned again (data only: no code runs)."""
    from pydantic_ai.messages import ModelMessagesTypeAdapter, ToolReturnPart

    request = {"kind": "request", "parts": [{"part_kind": "tool-return", "tool_name": "t", "tool_call_id": "t",
                                             "content": data}]}
    part = ModelMessagesTypeAdapter.validate_python([request])[0].parts[0]
    assert isinstance(part, ToolReturnPart)
    return part.content


def file_bytes(item: Mapping[str, object]) -> bytes | None:
    """The bytes of a file item as JSON (`BinaryContent`: `kind: binary`, base64 `data`), or None
    for anything else."""
    import base64
    import binascii

    data = item.get("data")
    if item.get("kind") != "binary" or not isinstance(data, str):
        return None
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        try:
            return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))
        except (binascii.Error, ValueError):
            return None


def default_identifier(data: bytes) -> str:
    """The identifier pydantic-ai gives a file item that was given none (derived from its bytes)."""
    import hashlib

    return hashlib.sha1(data, usedforsecurity=False).hexdigest()[:6]


FILE_RECORDS = "content_file_digests"
"""pydantic-ai's record of the file items in a tool result: hashes of their bytes."""


def digested(value: object) -> object:
    """Request messages as a cassette keeps them, and a replay compares them: each file item's bytes
    replaced by their `sha256` and `size` (attachments, files tools returned: the project holds
    them, the model read them; the cassette needs only to know they are the same), and pydantic-ai's
    records of them left out."""
    if isinstance(value, dict):
        raw = file_bytes(value)
        if raw is not None:
            import hashlib

            out = {k: v for k, v in value.items() if k != "data"}
            out.update(sha256=hashlib.sha256(raw).hexdigest(), size=len(raw))
            return out
        return {k: digested(v) for k, v in value.items() if k != FILE_RECORDS}
    if isinstance(value, list):
        return [digested(v) for v in value]
    return value

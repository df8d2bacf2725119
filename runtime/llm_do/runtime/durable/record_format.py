"""How a durable run's values are written to its database: JSON, never pickle, so reading a run
(`runs`, `approvals`, `resume`) runs no code whoever wrote the database.

JSON data is stored as it is. The few Python values a run records that JSON cannot say are tagged
(`{"$llm-do": TAG, "v": ...}`) and read back only as the types of a fixed table: tuples, times,
pydantic-ai's messages and tool-result content (validated by pydantic-ai's own type adapters, so
a row can only ever become data of those types), approval decisions, and errors (the few the run
acts on by type come back as that type, any other as `RecordedStepFailed` with its type's name). Any
other value (a tool's pydantic model, a dataclass) is recorded as its JSON form: a replayed step
gives back the same data the model was shown.

`LlmDoJson` is the DBOS `Serializer` of every process and client llm-do starts; `FORMAT` is the
name DBOS writes in each row's `serialization` column (`stored_rows` refuses any other).
"""

from __future__ import annotations

import json
from dataclasses import asdict, fields
from datetime import datetime
from typing import Any

from dbos import Serializer
from pydantic import TypeAdapter
from pydantic_ai import messages
from pydantic_ai.exceptions import ModelRetry, ToolFailed

from llm_do.bundle.errors import LlmDoError

from ..approvals.decisions import ApprovalDecision
from ..budget import BudgetSpent
from ..errors import CallRefused, RunFailed

FORMAT = "llm_do_json"
TAG = "$llm-do"

_CONTENT: dict[str, type] = {cls.__name__: cls for cls in (
    messages.ToolReturn, messages.BinaryContent, messages.ImageUrl, messages.AudioUrl, messages.DocumentUrl,
    messages.VideoUrl)}
"""pydantic-ai values a tool may return that JSON alone would flatten (multimodal content)."""
_ADAPTERS: dict[str, TypeAdapter[Any]] = {}
_ERRORS: dict[str, type[Exception]] = {cls.__name__: cls for cls in (ModelRetry, ToolFailed, CallRefused, RunFailed, BudgetSpent)}
"""Errors a run acts on by type (a tool's retry or failure, a refused call, a run's end: its budget spent)."""


class RecordedStepFailed(LlmDoError):
    """An error read back from a run's database that is none of `_ERRORS`: its type's name and message."""

    def __init__(self, type_name: str, message: str) -> None:
        super().__init__(message)
        self.type_name = type_name


class RecordingFailed(LlmDoError, TypeError):
    """A value a durable run cannot record (a lock, an open file): the run says which tool returned it."""


def _adapter(name: str) -> TypeAdapter[Any]:
    if name not in _ADAPTERS:
        _ADAPTERS[name] = TypeAdapter(_CONTENT[name])
    return _ADAPTERS[name]


def encode(value: object) -> object:
    """`value` as JSON data, tagging what JSON cannot say."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        inner = {k: encode(v) for k, v in value.items()}
        return {TAG: "dict", "v": inner} if TAG in value else inner
    if isinstance(value, tuple):
        return {TAG: "tuple", "v": [encode(v) for v in value]}
    if isinstance(value, datetime):
        return {TAG: "datetime", "v": value.isoformat()}
    if isinstance(value, messages.ModelRequest | messages.ModelResponse):
        return {TAG: "message", "v": json.loads(messages.ModelMessagesTypeAdapter.dump_json([value]))[0]}
    if type(value).__name__ in _CONTENT and isinstance(value, _CONTENT[type(value).__name__]):
        name = type(value).__name__
        return {TAG: name, "v": json.loads(_adapter(name).dump_json(value))}
    if isinstance(value, ApprovalDecision):
        return {TAG: "approval", "v": encode(asdict(value))}
    if isinstance(value, BaseException):
        return {TAG: "error", "type": type(value).__name__, "message": str(value)}
    from pydantic_core import to_jsonable_python

    try:
        return encode(to_jsonable_python(value))
    except Exception as exc:
        raise RecordingFailed(f"a value of type {type(value).__name__} is not data a durable run can record ({exc})") \
            from None


def decode(data: object) -> object:
    """The value `encode` wrote; anything but the types of its fixed table is refused."""
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        return data
    tag = data.get(TAG)
    if tag is None:
        return {k: decode(v) for k, v in data.items()}
    if tag == "dict":
        return {k: decode(v) for k, v in data["v"].items()}
    if tag == "tuple":
        return tuple(decode(v) for v in data["v"])
    if tag == "datetime":
        return datetime.fromisoformat(data["v"])
    if tag == "message":
        return messages.ModelMessagesTypeAdapter.validate_json(json.dumps([data["v"]]))[0]
    if tag in _CONTENT:
        return _adapter(tag).validate_json(json.dumps(data["v"]))
    if tag == "approval":
        given = decode(data["v"])
        if not isinstance(given, dict):
            raise ValueError(f"a recorded approval is a {type(given).__name__}")
        known = {f.name for f in fields(ApprovalDecision)}
        return ApprovalDecision(**{k: v for k, v in given.items() if k in known})
    if tag == "error":
        kind, message = str(data.get("type")), str(data.get("message"))
        return _ERRORS[kind](message) if kind in _ERRORS else RecordedStepFailed(kind, message)
    raise ValueError(f"unknown recorded value {tag!r}")


class LlmDoJson(Serializer):
    """DBOS's serializer in llm-do: JSON through `encode`/`decode`."""

    def serialize(self, data: object) -> str:
        return json.dumps(encode(data), ensure_ascii=False, separators=(",", ":"))

    def deserialize(self, serialized_data: str) -> object:
        return decode(json.loads(serialized_data))

    def name(self) -> str:
        return FORMAT


class _NoPickle(Serializer):
    """Stands in for DBOS's pickle decoder in llm-do's processes: a row marked `py_pickle` that
    appears after `stored_rows` checked a run (a forged answer to a waiting run) is refused, not run."""

    def serialize(self, data: Any) -> str:
        raise TypeError("llm-do records nothing with pickle")

    def deserialize(self, serialized_data: str) -> Any:
        raise TypeError("a row recorded with pickle: llm-do does not read it (it could run code)")

    def name(self) -> str:
        return "py_pickle"


def refuse_pickle() -> None:
    """Take pickle out of DBOS's decoders for this process. DBOS chooses a row's decoder by the
    row's own `serialization` column, whatever serializer is configured; `py_pickle` goes to a
    module-level instance, which is private (RULES.md)."""
    import dbos._serialization as serialization

    serialization.DBOSDefaultSerializer = _NoPickle()

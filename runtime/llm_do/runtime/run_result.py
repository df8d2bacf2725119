"""What a run returns (`RunResult`): apart from `runtime`, so a conversation names it without
naming the `Runtime` that makes one."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage


class RunResult(NamedTuple):
    output: object
    messages: list[ModelMessage]
    usage: dict[str, int]

"""Call paths: each worker call named by where it was made, the same way when recording and when
replaying, so a replayed call finds its recording whatever order parallel calls ran in.

`main` is the first call of worker `main` at the top of a run (`main#2` the second: a chat's next
turn); `main/analyzer@2.1` is the call of `analyzer` made by the 1st tool call of `main`'s 2nd
response (a worker-call tool, or a Python tool calling it; `#2` when that tool called it again)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..call_scope import RUNNING_TOOL_CALL, CallFrame

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelResponse


class CallSites:
    def __init__(self) -> None:
        self._made_at: dict[str, tuple[str, str]] = {}
        """Tool call id as the run sees it -> (the path of the call whose response made it, `REQUEST.PART`)."""
        self._taken: dict[str, int] = {}

    def note_response(self, path: str, request: int, response: ModelResponse) -> dict[str, str]:
        """Remember where each tool call of `response` (the `request`th of call `path`) was made;
        returns the stable id each gets in a cassette (`PATH:REQUEST.PART`)."""
        from pydantic_ai.messages import ToolCallPart

        renamed = {}
        calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
        for number, part in enumerate(calls, 1):
            at = f"{request}.{number}"
            self._made_at[part.tool_call_id] = (path, at)
            renamed[part.tool_call_id] = f"{path}:{at}"
        return renamed

    def where(self, tool_call_id: str | None) -> tuple[str, str] | None:
        """(call path, `REQUEST.PART`) of a tool call seen in a response, or None."""
        return None if tool_call_id is None else self._made_at.get(tool_call_id)

    def path_of(self, frame: CallFrame) -> str:
        """The path of a call starting now (in the task of the tool call that makes it, if any)."""
        made = self.where(RUNNING_TOOL_CALL.get()) if frame.parent is not None else None
        base = frame.worker if made is None else f"{made[0]}/{frame.worker}@{made[1]}"
        count = self._taken.get(base, 0) + 1
        self._taken[base] = count
        return base if count == 1 else f"{base}#{count}"

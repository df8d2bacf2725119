"""Quarantined outputs: what a quarantined worker returned, kept from its caller's model (the dual
LLM pattern's symbolic references; spec/runtime.md, "Quarantined callees").

A model that calls a worker declared `quarantined: true` reads a token such as `[[summarizer-1]]`
instead of the output, and its frame takes in nothing of the callee's taint. Where a model puts a
token in a tool's arguments or in its own answer, the output is put in its place as text, and that
call or answer carries what the callee took in: the flow guard judges the call as if its frame held
it (`FlowGuard.check`'s `carried`), a tool that received it may hand it back (its frame takes it in),
a worker that received it starts with it, and an answer hands it to the caller. A planner that never
reads a third party's words can so still act on them, and the guard sees exactly which calls carry
them. Tokens live as long as the run's `Runtime`; one this run did not issue is left as written.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from .taint import FrameTaint

TOKEN = re.compile(r"\[\[([A-Za-z0-9_.:-]+-[0-9]+)\]\]")
"""A kept output's token: `[[WORKER-N]]`, the Nth output of WORKER this run kept."""

class KeptNote(str):
    """What the caller's model reads for a kept output: its token, and how to use it. A `str`, so a
    model reads it as any tool result; its type tells the gate that the call handed nothing back."""

    __slots__ = ()


class Kept(NamedTuple):
    text: str
    taint: FrameTaint


class Quarantine:
    """The outputs of quarantined workers one run kept, by token."""

    __slots__ = ("_kept", "_counts")

    def __init__(self) -> None:
        self._kept: dict[str, Kept] = {}
        self._counts: dict[str, int] = {}

    def __bool__(self) -> bool:
        return bool(self._kept)

    def keep(self, worker: str, output: object, taint: FrameTaint) -> KeptNote:
        """Keep `output` (with what its worker's frame held) and say what its caller's model reads."""
        number = self._counts[worker] = self._counts.get(worker, 0) + 1
        token = f"[[{worker}-{number}]]"
        self._kept[token[2:-2]] = Kept(as_text(output), taint)
        return KeptNote(f"{token} (the output of '{worker}', kept from you: write {token} in a tool's argument "
                        "or in your answer, and it is put there)")

    def reveal(self, value: object) -> tuple[object, FrameTaint]:
        """`value` (a tool's arguments, an answer: text, lists and dicts of them) with every token
        this run issued replaced by its output's text, and what those outputs carry."""
        carried: set[tuple[str, str, str, str]] = set()

        def text(found: re.Match[str]) -> str:
            kept = self._kept.get(found.group(1))
            if kept is None:
                return found.group(0)
            carried.update(kept.taint)
            return kept.text

        def walk(item: object) -> object:
            if isinstance(item, str):
                return TOKEN.sub(text, item) if "[[" in item else item
            if isinstance(item, dict):
                return {key: walk(v) for key, v in item.items()}
            if isinstance(item, (list, tuple)):
                return type(item)(walk(v) for v in item)
            return item

        revealed = walk(value)
        return revealed, frozenset(carried)


def as_text(output: object) -> str:
    """An output as the text a token stands for: a text as it is, anything else as JSON."""
    if isinstance(output, str):
        return output
    from pydantic_core import to_jsonable_python

    return json.dumps(to_jsonable_python(output), ensure_ascii=False)


def reveal_output(quarantine: Quarantine, output: object) -> tuple[object, FrameTaint]:
    """A worker's answer with the tokens in it revealed: text, or a typed output (validated again by
    its own class, so what a caller receives still conforms to it)."""
    if isinstance(output, str):
        return quarantine.reveal(output)
    from pydantic import BaseModel

    if not isinstance(output, BaseModel):
        return quarantine.reveal(output)
    dumped = output.model_dump(mode="json")
    revealed, carried = quarantine.reveal(dumped)
    if not carried:
        return output, carried
    return type(output).model_validate(revealed), carried

"""References: big payloads kept in the run, out of the prompt.

A tool (or entry code) stores a payload with `ctx.deps.references.create(payload, kind=...,
glimpse=...)` and returns the `Reference`; the model sees only its id, kind and a short glimpse, and
passes the id on to a tool that calls `ctx.deps.references.resolve(id)` for the payload.

Ids are `ref-1`, `ref-2`, ... in the order a run creates them, so a scripted run can name them
ahead of time. The store is a small Protocol: the in-memory one lives as long as the run, and a
durable store (a database row per payload) implements the same three methods.
"""

from __future__ import annotations

import json
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from .errors import ToolCallFailed

GLIMPSE_CHARS = 120
"""The longest glimpse the model is shown; a longer one is cut at a word with an ellipsis."""


class Reference(BaseModel):
    """What the model sees of a stored payload: a JSON object of these three fields (in the tool
    result, and in events' `result`)."""

    model_config = ConfigDict(frozen=True)

    id: str
    kind: str
    glimpse: str

    def __str__(self) -> str:
        return self.id


class UnknownReference(ToolCallFailed):
    """An id that names no payload of this run: uncaught in a tool, the model reads the message as a
    failed tool result and can try another id."""


class ReferenceStore(Protocol):
    """Where payloads live. `new_id` hands out ids unique in the store."""

    def new_id(self) -> str: ...

    def put(self, ref_id: str, kind: str, payload: object) -> None: ...

    def get(self, ref_id: str) -> tuple[str, object] | None:
        """(kind, payload), or None for an id the store does not hold."""
        ...


class InMemoryReferenceStore:
    """The default store: a dict that lives as long as the run's `Runtime`."""

    def __init__(self) -> None:
        self._items: dict[str, tuple[str, object]] = {}

    def new_id(self) -> str:
        return f"ref-{len(self._items) + 1}"

    def put(self, ref_id: str, kind: str, payload: object) -> None:
        self._items[ref_id] = (kind, payload)

    def get(self, ref_id: str) -> tuple[str, object] | None:
        return self._items.get(ref_id)


class References:
    """`ctx.deps.references`: create references and resolve them, over one store."""

    __slots__ = ("store",)

    def __init__(self, store: ReferenceStore | None = None) -> None:
        self.store: ReferenceStore = store if store is not None else InMemoryReferenceStore()

    def create(self, payload: object, *, kind: str = "data", glimpse: str | None = None) -> Reference:
        """Store `payload`; return the reference the model may see. Without `glimpse`, one is made
        from the payload (its size, and the start of a text)."""
        ref_id = self.store.new_id()
        self.store.put(ref_id, kind, payload)
        return Reference(id=ref_id, kind=kind, glimpse=shorten(glimpse if glimpse is not None else default_glimpse(payload)))

    def resolve(self, ref: Reference | str) -> object:
        """The payload of a reference or of its id; `UnknownReference` (a tool error the model
        sees) when this run holds no such id."""
        ref_id = ref.id if isinstance(ref, Reference) else ref
        found = self.store.get(ref_id) if isinstance(ref_id, str) else None
        if found is None:
            raise UnknownReference(f"no reference {ref_id!r} in this run; use an id a tool returned (like 'ref-1')")
        return found[1]


def default_glimpse(payload: object) -> str:
    """A glimpse from the payload alone: a text's length and first words, bytes' size, a
    collection's length."""
    if isinstance(payload, str):
        return f"{len(payload)} characters: {' '.join(payload.split())}"
    if isinstance(payload, (bytes, bytearray)):
        return f"{len(payload)} bytes"
    if isinstance(payload, (list, tuple, dict, set, frozenset)):
        return f"{type(payload).__name__} of {len(payload)} items"
    try:
        return json.dumps(payload, ensure_ascii=False)
    except (TypeError, ValueError):
        return type(payload).__name__


def shorten(text: str, limit: int = GLIMPSE_CHARS) -> str:
    """`text` on one line, at most `limit` characters, cut after a whole word with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"

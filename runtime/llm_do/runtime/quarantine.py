"""Quarantined outputs: what a quarantined worker returned, kept from its caller's model (the dual
LLM pattern's symbolic references; spec/runtime.md, "Quarantined callees").

A model that calls a worker declared `quarantined: true` reads a token such as `[[summarizer-1]]`
instead of the output, and its frame takes in nothing of the callee's taint. The output is kept in
that frame (`CallFrame.kept`): only the frame that received a token can use it, so a sibling that
writes a token it guessed gets the token back as written. Where the frame's model puts a token in a
tool's arguments or in its own answer, the output is put in its place as text, and that call or
answer carries what the callee handed up (`returned_taint`): the flow guard judges the call as if
the frame held it (`FlowGuard.check`'s `carried`), the call's result or refusal brings it into the
frame, a worker called there starts with it, and an answer hands it to the caller.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from pydantic import BaseModel, ValidationError

from llm_do.bundle.errors import LlmDoError

if TYPE_CHECKING:
    from .taint import FrameTaint

M = TypeVar("M", bound=BaseModel)

TOKEN = re.compile(r"\[\[([A-Za-z0-9_.:-]+-[0-9]+)\]\]")
"""A kept output's token: `[[WORKER-N]]`, the Nth call of WORKER the frame made."""


class Kept(NamedTuple):
    text: str
    taint: FrameTaint


class KeptOutputProblem(LlmDoError):
    """An answer with a kept output put in place of its token no longer fits its output class;
    `carried`: what the outputs put in carry (whoever reads the failure takes it in)."""

    def __init__(self, message: str, carried: FrameTaint) -> None:
        super().__init__(message)
        self.carried = carried


class Quarantine:
    """The outputs of quarantined workers one frame called, by token."""

    __slots__ = ("_kept", "_counts")

    def __init__(self) -> None:
        self._kept: dict[str, Kept] = {}
        self._counts: dict[str, int] = {}

    def __bool__(self) -> bool:
        return bool(self._kept)

    def reserve(self, worker: str) -> str:
        """The token of a call of `worker` the frame starts now (numbered in the order calls start,
        so that a replayed run names the same outputs alike)."""
        number = self._counts[worker] = self._counts.get(worker, 0) + 1
        return f"{worker}-{number}"

    def keep(self, token: str, output: object, taint: FrameTaint) -> str:
        """Keep `output` (with what its call hands up) under `token`; what the caller's model reads."""
        self._kept[token] = Kept(as_text(output), taint)
        shown = f"[[{token}]]"
        worker = token.rpartition("-")[0]
        return (f"{shown} (the output of '{worker}', kept from you: write {shown} in a tool's argument or in your "
                "answer, and it is put there)")

    def reveal(self, value: object) -> tuple[object, FrameTaint]:
        """`value` (a tool's arguments, an answer: text in dicts, lists and tuples, and the fields of
        pydantic models, at any depth) with every token of this frame replaced by its output's text,
        and what those outputs carry. Containers are rebuilt only where a token was replaced (a
        model validated again by its class: `KeptOutputProblem` when it no longer fits); other
        objects are left as they are."""
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
            if type(item) is dict:
                items = {key: walk(v) for key, v in item.items()}
                return items if any(items[k] is not v for k, v in item.items()) else item
            if type(item) is list or type(item) is tuple:  # not a NamedTuple's or a subclass's
                elements = [walk(v) for v in item]
                if all(new is old for new, old in zip(elements, item, strict=True)):
                    return item
                return elements if type(item) is list else tuple(elements)
            if isinstance(item, BaseModel):  # a typed argument: its fields, validated again by its class
                fields = item.model_dump()
                new = walk(fields)
                return item if new is fields else refit(type(item), new, frozenset(carried))
            return item

        revealed = walk(value)
        return revealed, frozenset(carried)


def as_text(output: object) -> str:
    """An output as the text a token stands for: a text as it is, anything else as JSON."""
    if isinstance(output, str):
        return output
    from pydantic_core import to_jsonable_python

    return json.dumps(to_jsonable_python(output), ensure_ascii=False)


def reveal_output(kept: Quarantine, output: object) -> tuple[object, FrameTaint]:
    """A worker's answer with the tokens in it revealed: text, or a typed output validated again by
    its own class (`KeptOutputProblem` when it no longer fits, said without the words)."""
    if not isinstance(output, BaseModel):
        return kept.reveal(output)
    dumped = output.model_dump(mode="json")
    revealed, carried = kept.reveal(dumped)
    return (output if revealed is dumped else refit(type(output), revealed, carried)), carried


def refit(cls: type[M], data: object, carried: FrameTaint) -> M:
    """`data` (a model's fields with kept outputs put in) validated by the model's class;
    `KeptOutputProblem` when it no longer fits, said without the words (a validator of the
    project's own may quote the value: only pydantic's own messages are repeated)."""
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        where = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'the output'}: "
                          f"{'its validator refused it' if e['type'] in ('value_error', 'assertion_error') else e['msg']}"
                          for e in exc.errors())
        raise KeptOutputProblem(f"does not fit {cls.__name__}: {where}", carried) from None

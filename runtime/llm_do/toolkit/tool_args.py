"""Tool arguments validated by a pydantic model, for toolsets that define their tools by model
(the stdlib, and workers called as tools): the schema the model sees is the one enforced."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel

if TYPE_CHECKING:
    from typing import Literal

    Partial = bool | Literal["off", "on", "trailing-strings"]
    """pydantic-core's `allow_partial` (unused: tool arguments arrive whole)."""


class ModelArgsValidator:
    """Validates tool arguments with a pydantic model and hands them on as a dict of its fields.

    pydantic-ai expects a validator returning a dict; a model's own validator returns an instance.
    """

    def __init__(self, model: type[BaseModel]) -> None:
        self.model = model

    def validate_python(self, input: object, *, allow_partial: Partial = False, **kwargs: object) -> dict[str, object]:
        return dict(self.model.model_validate(input, context=kwargs.get("context")))

    def validate_json(self, input: str | bytes | bytearray, *, allow_partial: Partial = False,
                      **kwargs: object) -> dict[str, object]:
        return dict(self.model.model_validate_json(input or "{}", context=kwargs.get("context")))

"""The judge of outputs that can carry no free text (`llm_do.bundle.declassify`): the build's verdict
on a schema (`free_text`) and the runtime's check of an output against it (`conforms`)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from llm_do.bundle.declassify import conforms, free_text

ID = r"^[A-Za-z0-9_-]{1,40}$"


class Facts(BaseModel):
    count: int
    ratio: float | None = None
    ok: bool
    label: Literal["good", "bad"]
    day: Any = Field(json_schema_extra={"type": "string", "format": "date"})
    ids: list[Annotated[str, Field(pattern=ID)]] = []
    scores: dict[Annotated[str, Field(pattern=ID)], int] = {}


class Nested(BaseModel):
    facts: list[Facts] = []


def test_numbers_enums_dates_and_identifiers_carry_no_free_text() -> None:
    assert free_text(Facts.model_json_schema()) is None
    assert free_text(Nested.model_json_schema()) is None  # through $defs


@pytest.mark.parametrize(("schema", "reason"), [
    ({"type": "string"}, "the output is free text"),
    ({"type": "object", "properties": {"note": {"type": "string", "maxLength": 20}}}, "field 'note' is free text"),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, "the keys of the output are free text"),
    ({"type": "array", "items": {"type": "string", "pattern": "^[a-z ]{1,9}$"}}, "the output's items is free text"),
    ({"type": "string", "pattern": "[a-z]+"}, "the output is free text"),  # not anchored
    ({"type": "string", "pattern": "^[a-z]+$"}, "the output is free text"),  # unbounded
    ({"type": "string", "pattern": "^.{1,9}$"}, "the output is free text"),  # any character
    ({"type": "string", "pattern": "^[^x]{1,9}$"}, "the output is free text"),  # a negated class holds spaces
    ({"type": "string", "pattern": r"^\S{1,9}$"}, "the output is free text"),
    ({"type": "string", "format": "uri"}, "the output is free text"),
    ({}, "the output may be any value"),
])
def test_what_can_carry_words_is_named(schema: dict[str, Any], reason: str) -> None:
    found = free_text(schema)
    assert found is not None and found.startswith(reason)


def test_an_output_conforms_only_when_every_string_keeps_to_its_schema() -> None:
    schema = Facts.model_json_schema()
    good = {"count": 1, "ratio": None, "ok": True, "label": "good", "day": "2024-05-01", "ids": ["a-1"],
            "scores": {"alice": 3}}
    assert conforms(good, schema)
    assert not conforms({**good, "label": "post the code"}, schema)
    assert not conforms({**good, "ids": ["post the code"]}, schema)
    assert not conforms({**good, "scores": {"post the code": 1}}, schema)
    assert not conforms({**good, "day": "next Monday, at noon"}, schema)
    assert not conforms({**good, "note": "a field the schema does not have"}, schema)
    assert not conforms({**good, "count": "1"}, schema)
    assert not conforms({**good, "ok": 1}, schema)

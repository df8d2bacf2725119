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


TREE = {"$defs": {"T": {"type": "object", "additionalProperties": False, "properties": {
    "v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/T"}}}}}, "$ref": "#/$defs/T"}
FREE = "the output is free text"


@pytest.mark.parametrize(("schema", "reason"), [
    (TREE, None),  # a recursive type is judged where it is first met
    ({"$ref": "#/$defs/Absent"}, "the output refers to #/$defs/Absent, which is not in the schema"),
    ({"$ref": "#/definitions/A", "$defs": {"A": {"type": "integer"}}}, "the output refers to #/definitions/A"),
    ({"const": "x"}, None),
    ({"enum": ["a", "b"]}, None),
    ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, None),
    ({"oneOf": [{"type": "integer"}, {"type": "string"}]}, FREE),
    ({"allOf": [{"type": "integer"}, {"type": "string"}]}, FREE),
    ({"type": ["integer", "null"]}, None),
    ({"type": ["integer", "string"]}, FREE),
    ({"type": "array"}, "the output is a list of anything"),
    ({"type": "array", "items": True}, "the output is a list of anything"),
    ({"type": "array", "items": {"type": "boolean"}}, None),
    ({"type": "object"}, "the keys of the output are free text"),
    ({"type": "object", "additionalProperties": False}, None),
    ({"type": "object", "properties": {"a": {"type": "integer"}}}, None),
    ({"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": True}, "the keys of the output"),
    ({"type": "object", "properties": {"a": {"type": "integer"}}, "additionalProperties": {"type": "integer"}},
     "the keys of the output"),
    ({"type": "object", "patternProperties": {ID: {"type": "integer"}}}, None),
    ({"type": "object", "patternProperties": {ID: {"type": "string"}}}, "the output's values is free text"),
    ({"type": "object", "patternProperties": {"^.{1,9}$": {"type": "integer"}}}, "the keys of the output are free text"),
    ({"type": "string", "format": "uuid"}, None),
    ({"type": "string", "format": "email"}, None),
    ({"type": "string", "pattern": r"^[a-z]{1,9}\$"}, FREE),  # an escaped `$` anchors nothing
    ({"type": "string", "pattern": "^[a-z]{1,9}"}, FREE),  # "abc" and any words after it match
    ({"type": "string", "pattern": "[a-z]{1,9}$"}, FREE),
    ({"type": "string", "pattern": "^[a-z{1,9}$"}, FREE),  # not a regular expression
    ({"type": "string", "pattern": "^a{1,256}$"}, None),
    ({"type": "string", "pattern": "^a{1,257}$"}, FREE),
    ({"type": "string", "pattern": "^a b$"}, FREE),
    ({"type": "string", "pattern": r"^\ $"}, FREE),
    ({"type": "string", "pattern": "^(a| ){1,9}$"}, FREE),
    ({"type": "string", "pattern": "^(a|b){1,3}$"}, None),
    ({"type": "string", "pattern": "^(ab|cd)$"}, None),  # alternatives of words, none with a space
    ({"type": "string", "pattern": "^(ab|c d)$"}, FREE),  # one alternative holds a space
    ({"type": "string", "pattern": "^[a-z]{1,9}?$"}, None),
    ({"type": "string", "pattern": "^(?=a)a{1,9}$"}, FREE),  # what a lookahead admits is not judged
    ({"type": "string", "pattern": r"^(a)\1$"}, FREE),
    ({"type": "string", "pattern": "^(?>ab)$"}, FREE),
    ({"type": "string", "pattern": "^[ -~]{1,9}$"}, FREE),  # a range holding the space
    ({"type": "string", "pattern": "^[\u3000-\u3001]$"}, FREE),  # the ideographic space
    ({"type": "string", "pattern": r"^[\s]{1,9}$"}, FREE),
    ({"type": "string", "pattern": r"^[\d\w]{1,9}$"}, None),
    ({"type": "string", "pattern": r"^\d{1,9}$"}, None),
    ({"type": "integer"}, None), ({"type": "number"}, None), ({"type": "boolean"}, None), ({"type": "null"}, None),
    ({"type": "file"}, "the output may be any value"),
])
def test_every_form_of_schema_is_judged(schema: dict[str, Any], reason: str | None) -> None:
    found = free_text(schema)
    if reason is None:
        assert found is None
    else:
        assert found is not None and found.startswith(reason), found


def _nested(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {"v": 1}
    for _ in range(levels):
        value = {"v": 1, "kids": [value]}
    return value


@pytest.mark.parametrize(("schema", "value", "keeps"), [
    (TREE, {"v": 1, "kids": [{"v": 2}]}, True),
    (TREE, {"v": 1, "kids": [{"v": "two words"}]}, False),
    (TREE, _nested(10), True),
    (TREE, _nested(40), False),  # deeper than any output it judges: not declassified
    ({"$ref": "#/$defs/Absent"}, 1, False),
    ({"const": 3}, 3, True), ({"const": 3}, 4, False),
    ({"enum": [1, "a"]}, "a", True), ({"enum": [1, "a"]}, "b", False),
    ({"oneOf": [{"type": "integer"}, {"type": "null"}]}, None, True),
    ({"oneOf": [{"type": "integer"}, {"type": "null"}]}, "x", False),
    ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, 2, True),
    ({"allOf": [{"type": "integer"}, {"enum": [1, 2]}]}, 2, True),
    ({"allOf": [{"type": "integer"}, {"enum": [1, 2]}]}, 3, False),
    ({"type": ["integer", "null"]}, None, True), ({"type": ["integer", "null"]}, "x", False),
    ({"type": "null"}, None, True), ({"type": "null"}, 0, False),
    ({"type": "boolean"}, False, True), ({"type": "boolean"}, 0, False),
    ({"type": "number"}, 1.5, True), ({"type": "integer"}, 2, True), ({"type": "integer"}, True, False),
    ({"type": "string", "format": "uuid"}, "12345678-1234-1234-1234-123456789abc", True),
    ({"type": "string", "format": "uuid"}, "12345678-1234-1234-1234-123456789abc and more", False),
    ({"type": "string", "format": "email"}, "a@b.example", True),
    ({"type": "string", "format": "email"}, "write to a@b.example", False),
    ({"type": "string", "format": "date-time"}, "2024-05-01T10:00:00Z", True),
    ({"type": "string", "format": "time"}, "10:00", True),
    ({"type": "string", "pattern": ID}, "abc", True),
    ({"type": "string", "pattern": ID}, "abc def", False),
    ({"type": "string", "pattern": "[a-z]"}, "abc def", False),  # it matches, but holds a space
    ({"type": "string"}, "abc", False),
    ({"type": "array", "items": {"type": "integer"}}, [1, 2], True),
    ({"type": "array", "items": {"type": "integer"}}, [1, "2"], False),
    ({"type": "object", "patternProperties": {ID: {"type": "integer"}}}, {"ab": 1}, True),
    ({"type": "object", "patternProperties": {ID: {"type": "integer"}, "^a": {"enum": [1]}}}, {"ab": 2}, False),
    ({"type": "object", "properties": {"a": {"type": "integer"}}}, {"a": 1}, True),
    ({"type": "object", "properties": {"a": {"type": "integer"}}}, [["a", 1]], False),
    ({"type": "file"}, 1, False),
])
def test_an_output_conforms_to_each_form_of_schema_as_judged(schema: dict[str, Any], value: Any, keeps: bool) -> None:
    assert conforms(value, schema) is keeps

"""The kept outputs of quarantined workers, as pure functions: a token stands for its output's text
wherever it is written in a call's arguments or an answer, and says what that output carries."""

from __future__ import annotations

from typing import NamedTuple

import pytest
from pydantic import BaseModel, Field

from llm_do.runtime.quarantine import KeptOutputProblem, Quarantine, reveal_output

PAGE = ("untrusted", "untrusted", "reader", "fetch_page")
MAILBOX = ("private", "private", "other", "read_mail")


def _kept(*outputs: tuple[str, object, frozenset[tuple[str, str, str, str]]]) -> Quarantine:
    kept = Quarantine()
    for worker, output, taint in outputs:
        kept.keep(kept.reserve(worker), output, taint)
    return kept


def test_a_token_is_said_with_how_to_use_it_and_counts_per_worker_in_the_order_calls_start() -> None:
    kept = Quarantine()
    assert not kept
    first, second, other = kept.reserve("reader"), kept.reserve("reader"), kept.reserve("other")
    assert (first, second, other) == ("reader-1", "reader-2", "other-1")
    assert not kept  # reserved, nothing kept yet
    assert kept.keep(second, "again", frozenset()).startswith("[[reader-2]] (the output of 'reader', kept from you")
    assert kept.keep(first, "the page", frozenset({PAGE})).startswith("[[reader-1]]")
    assert kept and kept.reveal("[[reader-1]] [[reader-2]]") == ("the page again", frozenset({PAGE}))


def test_tokens_are_revealed_at_any_depth_and_carry_what_their_outputs_held() -> None:
    kept = _kept(("reader", "the page", frozenset({PAGE})), ("other", {"a": [1, "é"]}, frozenset({MAILBOX})))
    args = {"to": ["x@ours.com", "[[other-1]]"], "text": "see [[reader-1]]!", "n": 3, "nested": ({"t": "[[reader-1]]"},)}
    revealed, carried = kept.reveal(args)
    assert revealed == {"to": ["x@ours.com", '{"a": [1, "é"]}'], "text": "see the page!", "n": 3,
                        "nested": ({"t": "the page"},)}
    assert carried == {PAGE, MAILBOX}
    assert args["text"] == "see [[reader-1]]!"  # the model's arguments are not changed in place


class Point(NamedTuple):
    x: int
    label: str


def test_what_holds_no_token_is_handed_back_as_it_is() -> None:
    kept = _kept(("reader", "the page", frozenset({PAGE})))
    args = {"p": Point(1, "[[reader-1]]"), "items": [1, ["a"]], "key [[reader-1]]": "x"}
    revealed, carried = kept.reveal(args)
    assert revealed is args and carried == frozenset()  # a NamedTuple or a dict key is no place for a token


@pytest.mark.parametrize("text", ["[[reader-9]]", "[[nobody-1]]", "[reader-1]", "[[reader-1]", "plain"])
def test_what_no_kept_output_stands_for_is_left_as_written(text: str) -> None:
    kept = _kept(("reader", "the page", frozenset({PAGE})))
    assert kept.reveal({"text": text}) == ({"text": text}, frozenset())


class Answer(BaseModel):
    summary: str
    score: int = Field(ge=0)


def test_a_typed_answer_is_revealed_and_validated_again() -> None:
    kept = _kept(("reader", "the page", frozenset({PAGE})))
    answer, carried = reveal_output(kept, Answer(summary="it says: [[reader-1]]", score=2))
    assert answer == Answer(summary="it says: the page", score=2) and carried == {PAGE}
    same = Answer(summary="nothing kept here", score=1)
    assert reveal_output(kept, same) == (same, frozenset())
    assert reveal_output(kept, "[[reader-1]]") == ("the page", frozenset({PAGE}))


class Short(BaseModel):
    title: str = Field(max_length=12)


def test_a_typed_answer_that_no_longer_fits_is_said_without_the_words() -> None:
    kept = _kept(("reader", "the whole page, far too long", frozenset({PAGE})))
    with pytest.raises(KeptOutputProblem) as raised:
        reveal_output(kept, Short(title="[[reader-1]]"))
    assert str(raised.value) == "does not fit Short: title: String should have at most 12 characters"
    assert raised.value.carried == {PAGE}


class Bounded(BaseModel):
    text: str = Field(max_length=12)


def test_a_typed_argument_that_no_longer_fits_says_so_with_what_it_carries() -> None:
    kept = _kept(("reader", "the whole page, far too long", frozenset({PAGE})))
    with pytest.raises(KeptOutputProblem) as raised:
        kept.reveal({"entry": Bounded(text="[[reader-1]]")})
    assert str(raised.value) == "does not fit Bounded: text: String should have at most 12 characters"
    assert raised.value.carried == {PAGE}
    fits = kept.reveal({"entry": Bounded(text="short")})
    assert fits == ({"entry": Bounded(text="short")}, frozenset())

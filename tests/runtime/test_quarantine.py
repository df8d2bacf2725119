"""The kept outputs of quarantined workers, as pure functions: a token stands for its output's text
wherever it is written in a call's arguments or an answer, and says what that output carries."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field

from llm_do.runtime.quarantine import KeptNote, Quarantine, reveal_output

PAGE = ("untrusted", "untrusted", "reader", "fetch_page")
MAILBOX = ("private", "private", "other", "read_mail")


def test_a_token_is_said_with_how_to_use_it_and_counts_per_worker() -> None:
    kept = Quarantine()
    assert not kept
    note = kept.keep("reader", "the page", frozenset({PAGE}))
    assert isinstance(note, KeptNote) and note.startswith("[[reader-1]] (the output of 'reader', kept from you")
    assert kept.keep("reader", "again", frozenset()).startswith("[[reader-2]]")
    assert kept.keep("other", {"a": 1}, frozenset({MAILBOX})).startswith("[[other-1]]")
    assert kept


def test_tokens_are_revealed_at_any_depth_and_carry_what_their_outputs_held() -> None:
    kept = Quarantine()
    kept.keep("reader", "the page", frozenset({PAGE}))
    kept.keep("other", {"a": [1, "é"]}, frozenset({MAILBOX}))
    args = {"to": ["x@ours.com", "[[other-1]]"], "text": "see [[reader-1]]!", "n": 3, "nested": ({"t": "[[reader-1]]"},)}
    revealed, carried = kept.reveal(args)
    assert revealed == {"to": ["x@ours.com", '{"a": [1, "é"]}'], "text": "see the page!", "n": 3,
                        "nested": ({"t": "the page"},)}
    assert carried == {PAGE, MAILBOX}
    assert args["text"] == "see [[reader-1]]!"  # the model's arguments are not changed in place


@pytest.mark.parametrize("text", ["[[reader-9]]", "[[nobody-1]]", "[reader-1]", "[[reader-1]", "plain"])
def test_what_no_kept_output_stands_for_is_left_as_written(text: str) -> None:
    kept = Quarantine()
    kept.keep("reader", "the page", frozenset({PAGE}))
    assert kept.reveal({"text": text}) == ({"text": text}, frozenset())


class Answer(BaseModel):
    summary: str
    score: int = Field(ge=0)


def test_a_typed_answer_is_revealed_and_validated_again() -> None:
    kept = Quarantine()
    kept.keep("reader", "the page", frozenset({PAGE}))
    answer, carried = reveal_output(kept, Answer(summary="it says: [[reader-1]]", score=2))
    assert answer == Answer(summary="it says: the page", score=2) and carried == {PAGE}
    same = Answer(summary="nothing kept here", score=1)
    assert reveal_output(kept, same) == (same, frozenset())
    assert reveal_output(kept, "[[reader-1]]") == ("the page", frozenset({PAGE}))

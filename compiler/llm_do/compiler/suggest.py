"""Did-you-mean hints."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(word: str, candidates: Iterable[str], cutoff: float = 0.6) -> str | None:
    matches = difflib.get_close_matches(word, sorted(set(candidates)), n=1, cutoff=cutoff)
    if not matches:
        lowered = {c.lower(): c for c in candidates}
        return lowered.get(word.lower())
    return matches[0]


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    match = closest(word, candidates)
    return f"did you mean '{match}'?" if match else None

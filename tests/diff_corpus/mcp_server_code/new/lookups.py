"""What the dictionary keeps of its look-ups."""

import os

LAST: list[str] = []


def remember(word: str) -> None:
    LAST[:] = [word]
    os.remove(".last-lookup")

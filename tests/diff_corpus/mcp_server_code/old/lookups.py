"""What the dictionary keeps of its look-ups."""

LAST: list[str] = []


def remember(word: str) -> None:
    LAST[:] = [word]

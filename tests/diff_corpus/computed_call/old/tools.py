"""Note tools."""

from __future__ import annotations

from pathlib import Path

NOTES = Path("notes")


def _clean(text: str) -> str:
    return " ".join(text.split())


def save_note(title: str, text: str) -> str:
    """Save a note under a title."""
    return f"{title}: {_clean(text)}"


def count_words(text: str) -> int:
    """Count the words of a text."""
    return len(_clean(text).split())


TOOLS = [save_note, count_words]

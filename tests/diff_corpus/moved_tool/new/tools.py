"""Note tools."""

from __future__ import annotations

from pathlib import Path

from notes_impl import save_note

NOTES = Path("notes")


def _clean(text: str) -> str:
    return " ".join(text.split())


def count_words(text: str) -> int:
    """Count the words of a text."""
    return len(_clean(text).split())


TOOLS = [save_note, count_words]

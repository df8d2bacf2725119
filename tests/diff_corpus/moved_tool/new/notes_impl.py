"""Note tools, kept apart."""

from __future__ import annotations

from pathlib import Path


def save_note(title: str, text: str) -> str:
    """Save a note under a title."""
    Path("notes", f"{title}.md").write_text(" ".join(text.split()))
    return title

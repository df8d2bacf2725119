"""Where notes go."""

from pathlib import Path


def keep(title: str, text: str) -> str:
    Path("notes", f"{title}.md").write_text(text)
    return title

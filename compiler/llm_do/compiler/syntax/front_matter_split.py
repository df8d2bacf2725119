"""Where a .worker file's front matter ends: no pydantic, so a build that reads only this much of
a worker (`build.local_edits`) does not import the front matter's model."""

from __future__ import annotations

import re

from .. import codes

_FENCE = re.compile(r"^---[ \t]*$", re.M)


def split_front_matter(text: str) -> tuple[str, str, int] | codes.Rule:
    """(front matter, body, body's first line), or the rule it breaks (`codes.MISSING_FRONT_MATTER`,
    `codes.UNTERMINATED_FRONT_MATTER`)."""
    if not _FENCE.match(text):
        return codes.MISSING_FRONT_MATTER
    first_end = text.find("\n")
    if first_end < 0:
        return codes.UNTERMINATED_FRONT_MATTER
    closing = _FENCE.search(text, first_end + 1)
    if closing is None:
        return codes.UNTERMINATED_FRONT_MATTER
    front = text[first_end + 1 : closing.start()]
    body_start = closing.end() + 1
    body_line = text.count("\n", 0, closing.start()) + 2
    return front, text[body_start:], body_line

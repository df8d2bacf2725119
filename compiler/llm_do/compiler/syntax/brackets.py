"""Where a bracket closes, in YAML flow or JSON text: for a YAML error (an unclosed `[` is reported
where it opened) and for `llm-do init`, which appends to project.json's `worker_files` in place."""

from __future__ import annotations

_OPENERS_BEFORE_QUOTE = frozenset(" \t\n[{,:")
"""What may come before a quote that starts quoted text (in YAML, `a"b` is plain text)."""


def closing_bracket(text: str, start: int) -> int | None:
    """The offset of the `]` or `}` that closes the `[` or `{` at `start`, or None when it never
    closes. Quoted text is skipped (`'...'` with `''` inside, `"..."` with backslash escapes), and
    so is a YAML comment (`#` after a space, to the end of its line); in JSON neither a `'` nor a
    `#` can stand outside a string, so JSON reads the same."""
    depth, quote, i = 0, "", start
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 1
            elif c == quote:
                if quote == "'" and text[i + 1 : i + 2] == "'":
                    i += 1
                else:
                    quote = ""
        elif c in "'\"" and (i == 0 or text[i - 1] in _OPENERS_BEFORE_QUOTE):
            quote = c
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
            if depth == 0:
                return i
        elif c == "#" and i > 0 and text[i - 1] in " \t\n":
            newline = text.find("\n", i)
            i = len(text) if newline < 0 else newline
            continue
        i += 1
    return None

"""A file read in pages (`read_file(path, offset=..., max_chars=...)`) can split a secret across two
results, neither of which holds it whole, so redacting each result alone lets both halves through.
Before a cassette is redacted, the pages of each file are put back where they were read from: a
secret that stands across pages is redacted in each page's part of it. Where a stretch of pages
stops short of the file's start or end (the model skipped part of the file, or the file changed
between two reads), the end of a secret in its first characters, or the beginning of one in its
last, is redacted (`MIN_EDGE` characters or more: a cut leaves at most two characters of a secret
on the far side of a gap).

A page is a tool call with a `path` argument and an `offset` or `max_chars`, or whose result ends
with the stdlib's truncation note; the note says where the page ends and that the file goes on."""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from .secret_forms import SecretFinder, Span

TRUNCATED = re.compile(r"\n\[truncated: showing characters (\d+)-(\d+) of (\d+); call again with offset=\d+\]\Z")
"""The note `read_file` ends a page with when the file goes on."""
MIN_EDGE = 3


@dataclass
class Page:
    call_id: str
    offset: int
    text: str
    """The page's part of the file (its result without the truncation note)."""
    to_end: bool
    """Whether the page reaches the end of the file."""
    marks: list[Span] = field(default_factory=list)
    """What to redact, in the page's own coordinates."""


@dataclass
class Segment:
    """Pages that join or overlap, agreeing where they overlap: one stretch of the file."""

    start: int
    text: str
    pages: list[Page]

    @property
    def end(self) -> int:
        return self.start + len(self.text)

    def mark(self, start: int, end: int, name: str) -> None:
        """Redact the file's characters `start:end` (in the segment's coordinates) in every page that holds some."""
        for page in self.pages:
            lo, hi = max(start + self.start, page.offset), min(end + self.start, page.offset + len(page.text))
            if lo < hi:
                page.marks.append(Span(lo - page.offset, hi - page.offset, name))


def redact_paged_reads(data: dict[str, Any], finder: SecretFinder) -> None:
    """Redact, in place, the parts of paged reads' results that hold part of a secret (`data`: a
    cassette as JSON, before the rest of its redaction)."""
    results = _tool_returns(data)
    pages: dict[tuple[str, str], list[Page]] = {}
    for call_id, (tool, path, offset) in _page_calls(data).items():
        parts = results.get(call_id)
        content = parts[0].get("content") if parts else None
        if not isinstance(content, str):
            continue
        note = TRUNCATED.search(content)
        if offset is None and note is None:
            continue  # a whole read: redacted as every result is
        text = content[:note.start()] if note else content
        pages.setdefault((tool, path), []).append(Page(call_id, offset or 0, text, note is None))
    for found in pages.values():
        for segment in _segments(found):
            _mark(segment, finder)
    for found in pages.values():
        for page in found:
            if page.marks:
                _rewrite(results[page.call_id], page)


def _page_calls(data: dict[str, Any]) -> dict[str, tuple[str, str, int | None]]:
    """Tool call id -> (tool, path, offset or None) of each call with a `path` argument."""
    out = {}
    for call in data.get("calls") or []:
        for exchange in call.get("requests") or []:
            for part in (exchange.get("response") or {}).get("parts") or []:
                if part.get("part_kind") != "tool-call":
                    continue
                args = part.get("args")
                if isinstance(args, str):
                    try:
                        args = json.loads(args)
                    except ValueError:
                        continue
                if not isinstance(args, dict) or not isinstance(args.get("path"), str):
                    continue
                offset = args.get("offset")
                paged = isinstance(offset, int) or "max_chars" in args
                out[part.get("tool_call_id", "")] = (part.get("tool_name", ""), posixpath.normpath(args["path"]),
                                                     (offset if isinstance(offset, int) else 0) if paged else None)
    return out


def _tool_returns(data: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Tool call id -> every tool-return part with it (a chat's later turns carry earlier ones again)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for call in data.get("calls") or []:
        for exchange in call.get("requests") or []:
            for message in exchange.get("messages") or []:
                for part in message.get("parts") or []:
                    if part.get("part_kind") == "tool-return" and "tool_call_id" in part:
                        out.setdefault(part["tool_call_id"], []).append(part)
    return out


def _segments(pages: list[Page]) -> list[Segment]:
    out: list[Segment] = []
    for page in sorted(pages, key=lambda p: (p.offset, -len(p.text))):
        last = out[-1] if out else None
        if last is not None and page.offset <= last.end:
            overlap = last.text[page.offset - last.start:]
            if page.text.startswith(overlap) or overlap.startswith(page.text):
                last.text += page.text[len(overlap):]
                last.pages.append(page)
                continue
        out.append(Segment(page.offset, page.text, [page]))
    return out


def _mark(segment: Segment, finder: SecretFinder) -> None:
    for span in finder.spans(segment.text):
        segment.mark(span.start, span.end, span.name)
    starts_file = segment.start == 0
    ends_file = any(p.to_end and p.offset + len(p.text) == segment.end for p in segment.pages)
    for forms in finder.forms:
        value, text = forms.value, segment.text
        if not starts_file:  # the end of a value, in the first characters of the stretch
            first = text[:len(value)]
            head = next((k for k in range(len(value) - 1, MIN_EDGE - 1, -1) if value[-k:] in first), 0)
            if head:
                at = first.index(value[-head:])
                segment.mark(at, at + head, forms.name)
        if not ends_file:  # the beginning of a value, in its last characters
            last = text[-len(value):]
            tail = next((k for k in range(len(value) - 1, MIN_EDGE - 1, -1) if value[:k] in last), 0)
            if tail:
                at = len(text) - len(last) + last.rindex(value[:tail])
                segment.mark(at, at + tail, forms.name)


def _rewrite(parts: list[dict[str, Any]], page: Page) -> None:
    from .redaction import replaced

    for part in parts:
        content = part["content"]
        part["content"] = replaced(content[:len(page.text)], page.marks) + content[len(page.text):]

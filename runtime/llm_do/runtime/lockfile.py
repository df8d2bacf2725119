"""Reading a bundle.lock without parsing all of it.

A bundle of thousands of workers is megabytes of JSON, and a run touches a handful of its nodes.
The file form (see `canonical`) puts every top-level key on a line of its own indented by two
spaces and every member of a top-level object at four, and no string holds a raw newline; so a
key's value can be found with a substring search and decoded alone with ``raw_decode``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

_decoder = json.JSONDecoder()


class LockFormatError(ValueError):
    """The text is not in the canonical file form."""


@dataclass
class LockText:
    """The text of a sealed bundle, with lazy access to its sections and their members."""

    text: str
    _cache: dict[tuple[str, ...], Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_bytes(cls, data: bytes) -> LockText:
        try:
            return cls(data.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise LockFormatError(f"it is not UTF-8 ({exc.reason} at byte {exc.start})") from None

    def _decode_at(self, pattern: str, start: int = 0, end: int | None = None) -> tuple[Any, int] | None:
        at = self.text.find(pattern, start, end if end is not None else len(self.text))
        if at < 0:
            return None
        try:
            return _decoder.raw_decode(self.text, at + len(pattern))
        except json.JSONDecodeError as exc:
            raise LockFormatError(f"invalid JSON at line {exc.lineno}: {exc.msg}") from None

    def _section_span(self, key: str) -> tuple[int, int] | None:
        pattern = f"\n  {json.dumps(key, ensure_ascii=False)}: "
        at = self.text.find(pattern)
        if at < 0:
            return None
        start = at + len(pattern)
        if self.text.startswith("{}", start):
            return start, start + 2
        end = self.text.find("\n  }", start)
        if end < 0:
            raise LockFormatError(f"section {key!r} is not closed")
        return start, end + 4

    def has(self, key: str) -> bool:
        return self._section_span(key) is not None

    def get(self, key: str, default: Any = None) -> Any:
        """A top-level value, decoded on first use."""
        cache_key = (key,)
        if cache_key in self._cache:
            return self._cache[cache_key]
        found = self._decode_at(f"\n  {json.dumps(key, ensure_ascii=False)}: ")
        value = default if found is None else found[0]
        self._cache[cache_key] = value
        return value

    def member(self, section: str, key: str) -> Any | None:
        """``doc[section][key]`` without decoding the rest of the section; None when absent."""
        cache_key = (section, key)
        if cache_key in self._cache:
            return self._cache[cache_key]
        span = self._section_span(section)
        value = None
        if span is not None:
            found = self._decode_at(f"\n    {json.dumps(key, ensure_ascii=False)}: ", span[0], span[1])
            value = None if found is None else found[0]
        self._cache[cache_key] = value
        return value

    def member_names(self, section: str) -> list[str]:
        """The keys of a top-level object, read off their lines without decoding the values."""
        span = self._section_span(section)
        if span is None:
            return []
        names: list[str] = []
        prefix = '\n    "'
        at = self.text.find(prefix, span[0], span[1])
        while at >= 0:
            key, end = _decoder.raw_decode(self.text, at + len(prefix) - 1)
            names.append(key)
            at = self.text.find(prefix, end, span[1])
        return names

    def whole(self) -> dict[str, Any]:
        try:
            return json.loads(self.text)
        except json.JSONDecodeError as exc:
            raise LockFormatError(f"invalid JSON at line {exc.lineno}: {exc.msg}") from None

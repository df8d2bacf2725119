"""Reading a bundle.lock: the one check of its bytes (`verify`), and a reader that parses no more
of it than asked (`LockReader`).

`verify` is what every command that reads a lock runs first (`exec` and the other run commands
through `llm_do.runtime.bundle`, `capabilities`, `diff` and `graph`): the digest over the raw
bytes, the canonical form, the format version. A lock that passes was written by `llm-do build`
exactly as it is, so its nodes are read as `model` declares them, without validating them again.
What a run adds (the hashes of the Python sources it may import) is the runtime's own check.


A bundle of thousands of workers is megabytes of JSON, and a run touches a handful of its nodes.
The file form (see `canonical`) puts every top-level key on a line of its own indented by two
spaces and every member of a top-level object at four, and no string holds a raw newline; so a
value can be found with a byte search, cut out at the next line of its own indentation, and
decoded alone. Nothing else of the file is decoded, not even to text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .canonical import DigestProblem, verify_digest
from .errors import REBUILD, BundleRefused, LlmDoError
from .format import BUNDLE_FORMAT
from .regular_files import IrregularFile, read_regular_file


class LockFormatProblem(LlmDoError, ValueError):
    """The bytes are not in the canonical file form."""


def _key(name: str, indent: int) -> bytes:
    return b"\n" + b" " * indent + json.dumps(name, ensure_ascii=False).encode() + b": "


def _escaped(data: bytes, quote: int) -> bool:
    """Whether the quote at `quote` is escaped (an odd run of backslashes before it)."""
    run = 0
    while data[quote - 1 - run] == 0x5C:
        run += 1
    return run % 2 == 1


DIRECT_LOOKUPS = 8
"""Members of a section found by a search of the bytes before its index is read."""

_TOP_END = (b'\n  "', b"\n}")
_MEMBER_END = (b'\n    "', b"\n  }")


class LockReader:
    """Reads a sealed bundle's bytes lazily: a section or one member at a time."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._cache: dict[tuple[str, ...], Any] = {}
        self._members: dict[str, dict[bytes, int]] = {}
        self._lookups: dict[str, int] = {}

    @classmethod
    def from_bytes(cls, data: bytes) -> LockReader:
        return cls(data)

    def _value(self, start: int, ends: tuple[bytes, bytes], limit: int | None = None) -> Any:
        """Decode the value that starts at `start` and runs to the next line of its indentation."""
        stop = limit if limit is not None else len(self.data)
        for end in ends:  # each search stops where the nearest end found so far is
            at = self.data.find(end, start, stop)
            if at >= 0:
                stop = at
        raw = self.data[start:stop].rstrip(b",")
        try:
            return json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise LockFormatProblem(f"a value at byte {start} is not valid JSON ({exc})") from None

    def _section_start(self, section: str) -> int | None:
        pattern = _key(section, 2)
        at = self.data.find(pattern)
        return None if at < 0 else at + len(pattern)

    def _section_span(self, section: str) -> tuple[int, int] | None:
        start = self._section_start(section)
        if start is None:
            return None
        if self.data.startswith(b"{}", start):
            return start, start + 2
        end = self.data.find(b"\n  }", start)
        if end < 0:
            raise LockFormatProblem(f"section {section!r} is not closed")
        return start, end + 4

    def get(self, key: str, default: Any = None) -> Any:
        """A top-level value, decoded on first use."""
        cache_key = (key,)
        if cache_key not in self._cache:
            start = self._section_start(key)
            self._cache[cache_key] = default if start is None else self._value(start, _TOP_END)
        return self._cache[cache_key]

    def member(self, section: str, key: str) -> Any | None:
        """``doc[section][key]`` without decoding the rest of the section; None when absent.

        The first lookup in a section reads where each member's line starts (its key's bytes, not
        decoded); each member is then decoded on first use, so a run that calls three of 3,000
        workers decodes three.
        """
        cache_key = (section, key)
        if cache_key in self._cache:
            return self._cache[cache_key]
        at = self._member_start(section, _key(key, 4))
        value = None if at is None else self._value(at, _MEMBER_END)
        self._cache[cache_key] = value
        return value

    def _member_start(self, section: str, line: bytes) -> int | None:
        """Where the value of the member whose key line is `line` starts. The first few lookups of a
        section search for the line itself (one search of the bytes: a run of one worker reads no
        index of 3,000); after that the section's index is read once and used."""
        looked = self._lookups[section] = self._lookups.get(section, 0) + 1
        if looked <= DIRECT_LOOKUPS and section not in self._members:
            start = self._section_start(section)
            if start is None or self.data.startswith(b"{}", start):
                return None
            # No string holds a newline, so only a member's line matches, of this section if the
            # section's end does not come first (searching for the end is the slow part: every
            # line of the file starts like it; so only the bytes up to the match are searched).
            at = self.data.find(line, start)
            if at < 0 or self.data.find(b"\n  }", start, at) >= 0:
                return None
            return at + len(line)
        return self._member_offsets(section).get(line)

    def _member_offsets(self, section: str) -> dict[bytes, int]:
        """Each member's key line (`\n    "name": `) -> where its value starts."""
        offsets = self._members.get(section)
        if offsets is None:
            offsets = {}
            span = self._section_span(section)
            if span is not None:
                prefix = b'\n    "'
                at = self.data.find(prefix, span[0], span[1])
                while at >= 0:
                    end = self.data.find(b'": ', at + len(prefix), span[1])
                    while end > 0 and _escaped(self.data, end):  # a quote inside the key
                        end = self.data.find(b'": ', end + 1, span[1])
                    if end < 0:
                        break
                    offsets[self.data[at : end + 3]] = end + 3
                    at = self.data.find(prefix, end, span[1])
            self._members[section] = offsets
        return offsets

    def section_bytes(self, section: str) -> bytes:
        """The raw bytes of a top-level object, for a search that need not decode it."""
        span = self._section_span(section)
        return b"" if span is None else self.data[span[0] : span[1]]

    def member_names(self, section: str) -> list[str]:
        """The keys of a top-level object, read off their lines without decoding the values."""
        span = self._section_span(section)
        if span is None:
            return []
        names: list[str] = []
        prefix = b'\n    "'
        at = self.data.find(prefix, span[0], span[1])
        while at >= 0:
            end = self.data.find(b'": ', at + len(prefix), span[1])
            names.append(json.loads(self.data[at + len(prefix) - 1 : end + 1]))
            at = self.data.find(prefix, end, span[1])
        return names


def verify_sealed(data: bytes, path: Path | str) -> LockReader:
    """The reader of a lock whose digest verifies and whose bytes are in the canonical file form
    (as far as the header shows), of any format version: for `diff`, which names both versions."""
    try:
        verify_digest(data)
        reader = LockReader(data)
        reader.get("bundle_format")
    except (DigestProblem, LockFormatProblem) as exc:
        raise BundleRefused(f"{path}: refused: {exc}; {REBUILD}") from None
    return reader


def verify(data: bytes, path: Path | str) -> LockReader:
    """The reader of a lock whose digest verifies, whose bytes are in the canonical file form (as
    far as the header shows) and whose format version this llm-do knows. Raises `BundleRefused`
    with one line naming `path`, saying why and what to do."""
    reader = verify_sealed(data, path)
    fmt = reader.get("bundle_format")
    if fmt != BUNDLE_FORMAT:
        raise BundleRefused(f"{path}: bundle format {fmt!r} is not one this llm-do reads ({BUNDLE_FORMAT}); {REBUILD}")
    return reader


def read(path: Path) -> LockReader:
    """`verify` of the lock at `path`; a lock that cannot be read is refused too."""
    try:
        data = read_regular_file(path)
    except FileNotFoundError:
        raise BundleRefused(f"{path}: no such bundle; {REBUILD} to create it") from None
    except IrregularFile as exc:
        raise BundleRefused(f"{path}: cannot read it: it is {exc}") from None
    except OSError as exc:
        raise BundleRefused(f"{path}: cannot read it ({exc.strerror})") from None
    return verify(data, path)

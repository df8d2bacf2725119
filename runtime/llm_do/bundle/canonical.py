"""Canonical JSON and hashing: the one definition the compiler writes with and the runtime verifies by.

A bundle must build to the same bytes anywhere, so everything that decides those bytes lives here:
key order, indentation, separators, the digest placeholder, and how source files are normalized
before they are hashed. Standard library only: the runtime imports this on its start-up path.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from .errors import LlmDoError

DIGEST_KEY = "digest"
HASH_KEY = "hash"
_BLANK_DIGEST_LINE = b'\n  "digest": ""'
_DIGEST_PREFIX = b'\n  "digest": "'


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tagged(hex_digest: str) -> str:
    """Hashes are written as ``sha256:<hex>`` so the algorithm can change without ambiguity."""
    return f"sha256:{hex_digest}"


def normalize_source(data: bytes) -> bytes:
    """Strip a UTF-8 byte-order mark and turn CRLF and lone CR into LF.

    Sources are hashed and rendered after this, so a checkout with other line endings builds to
    the same bundle and is not reported as stale.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return data


def source_hash(data: bytes) -> str:
    """The hash a bundle records for a source file: of its normalized bytes."""
    return tagged(sha256_hex(normalize_source(data)))


def compact_json(value: object) -> bytes:
    """Sorted keys, no whitespace, UTF-8: the form node hashes are taken over."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def node_hash(node: Mapping[str, object]) -> str:
    """Hash of a node's canonical JSON without its own ``hash`` key."""
    body = {k: v for k, v in node.items() if k != HASH_KEY}
    return tagged(sha256_hex(compact_json(body)))


def document_json(doc: Mapping[str, object], known: Mapping[tuple[int, int], str] | None = None) -> bytes:
    """The file form: sorted keys, two-space indentation, UTF-8, a newline at the end; the same
    text as ``json.dumps(doc, sort_keys=True, indent=2, ensure_ascii=False)``.

    Strings never contain a raw newline in JSON, so every newline in this form is structural; the
    runtime relies on that to find a section without parsing the rest.

    `known`: the text of some containers of `doc`, by their `id()` and indentation level, written
    as given instead of encoded (the compiler's cached node texts; the caller answers for them).
    """
    out: list[str] = []
    _Indented(out, known).encode(doc, 0)
    out.append("\n")
    return "".join(out).encode()


class _Indented:
    """The indented encoder, faster than the standard library's pure-Python one (which ``indent``
    forces). Subtrees shared by many nodes (the default input schema, a toolset's parameters) are
    encoded once per indentation level; only those below the nodes themselves are worth keeping."""

    MEMO_LEVEL = 3

    def __init__(self, out: list[str], known: Mapping[tuple[int, int], str] | None = None) -> None:
        self.out = out
        self.memo: dict[tuple[int, int], str] = dict(known) if known else {}
        self.shallow = bool(known)
        """Whether the memo holds containers above `MEMO_LEVEL` too (given texts)."""
        self.string = json.encoder.encode_basestring

    def encode(self, value: Any, level: int) -> None:
        out = self.out
        if isinstance(value, str):
            out.append(self.string(value))
        elif isinstance(value, dict):
            self._container(value, level, "{", "}", self._dict_items)
        elif isinstance(value, (list, tuple)):
            self._container(value, level, "[", "]", self._list_items)
        elif value is None:
            out.append("null")
        elif value is True:
            out.append("true")
        elif value is False:
            out.append("false")
        else:
            out.append(json.dumps(value))

    def _container(self, value: Any, level: int, open_: str, close: str, items: Any) -> None:
        if not value:
            self.out.append(open_ + close)
            return
        if level < self.MEMO_LEVEL:
            given = self.memo.get((id(value), level)) if self.shallow else None
            if given is not None:
                self.out.append(given)
                return
            self.out.append(open_)
            items(value, level + 1, "\n" + "  " * (level + 1))
            self.out.append("\n" + "  " * level + close)
            return
        key = (id(value), level)
        cached = self.memo.get(key)
        if cached is not None:
            self.out.append(cached)
            return
        start = len(self.out)
        self.out.append(open_)
        items(value, level + 1, "\n" + "  " * (level + 1))
        self.out.append("\n" + "  " * level + close)
        if len(self.out) - start > 16:
            text = "".join(self.out[start:])
            del self.out[start:]
            self.out.append(text)
            self.memo[key] = text

    def _dict_items(self, value: dict[str, Any], level: int, indent: str) -> None:
        first = True
        for k in sorted(value):
            self.out.append((indent if first else "," + indent) + self.string(k) + ": ")
            first = False
            self.encode(value[k], level)

    def _list_items(self, value: list[Any], level: int, indent: str) -> None:
        first = True
        for item in value:
            self.out.append(indent if first else "," + indent)
            first = False
            self.encode(item, level)


def seal(doc: Mapping[str, object], known: Mapping[tuple[int, int], str] | None = None) -> bytes:
    """Serialize ``doc`` with its ``digest``: sha256 of the file form with the digest value blank.
    `known`: as for `document_json`."""
    blank = document_json({**doc, DIGEST_KEY: ""}, known)
    digest = tagged(sha256_hex(blank))
    at = blank.index(_BLANK_DIGEST_LINE) + len(_BLANK_DIGEST_LINE) - 1
    return blank[:at] + digest.encode() + blank[at:]


class DigestProblem(LlmDoError, ValueError):
    """The bytes are not a sealed document: no digest, or one that does not verify."""


def verify_digest(data: bytes) -> str:
    """Check the top-level digest over the raw bytes; return it. Raises `DigestProblem`."""
    start = data.find(_DIGEST_PREFIX)
    if start < 0:
        raise DigestProblem("it has no top-level digest")
    value_start = start + len(_DIGEST_PREFIX)
    value_end = data.find(b'"', value_start)
    if value_end < 0:
        raise DigestProblem("its digest is cut off")
    recorded = data[value_start:value_end].decode("ascii", "replace")
    view = memoryview(data)  # hash around the digest value without copying megabytes
    hasher = hashlib.sha256(view[:value_start])
    hasher.update(view[value_end:])
    actual = tagged(hasher.hexdigest())
    if recorded != actual:
        raise DigestProblem("its digest does not match its contents (edited, truncated or merged by hand)")
    return recorded

"""Emit by splicing: the lock is written with the cached text of every worker and toolset node
whose hash a pack of the last build of the same lock holds, and only the other nodes are encoded.

A node's text in the lock (indented JSON at level 2) depends on its content alone, and its `hash`
is the sha256 of that content, so the text kept under a hash is the text a clean build encodes for
it: the bytes are exactly a clean build's. A span is used only when it reads as that node's text
(a JSON object holding the line `"hash": "<hash>"` at its place); the pack's HMAC answers for the rest.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from llm_do.bundle.canonical import HASH_KEY, seal
from llm_do.bundle.format import BUNDLE_FORMAT

from .packs import SignedPacks, code_material

FORMAT = 1
SECTIONS = ("toolsets", "workers")
"""The bundle's sections of hashed nodes, each node at `NODE_LEVEL`."""
NODE_LEVEL = 2
_OPEN = "\n" + "  " * NODE_LEVEL
_CLOSE = (_OPEN + "}").encode()
_HASH_LINE = _OPEN + "  " + json.dumps(HASH_KEY) + ": "

Spans = dict[str, list[int]]
"""A node's hash -> the start and end of its text in the pack's bytes."""


def emit_spliced(doc: Mapping[str, Any], packs: SignedPacks, root: Path, lock_dir: Path) -> tuple[bytes, int]:
    """The sealed bytes of `doc` (exactly `emit(doc)`'s) and how many nodes were spliced; keeps the
    pack for the next build of the lock in `lock_dir`."""
    material = _material(root, lock_dir)
    kept = packs.read(material)
    known: dict[tuple[int, int], str] = {}
    if kept is not None:
        data, spans = kept
        for section in SECTIONS:
            for node in (doc.get(section) or {}).values():
                text = _node_text(data, spans, node[HASH_KEY])
                if text is not None:
                    known[id(node), NODE_LEVEL] = text
    bundle = seal(doc, known)
    if kept is None or kept[0] != bundle:
        packs.write(material, bundle, node_spans(bundle, doc))
    return bundle, len(known)


def node_spans(data: bytes, doc: Mapping[str, Any]) -> Spans:
    """Where the text of each node of `doc` lies in `data`, its sealed bytes, by the node's hash.
    Every newline of the file form is structural (`canonical.document_json`), so a node at level 2
    starts after its key's line prefix and ends at the first line that is only its closing brace."""
    spans: Spans = {}
    for section in SECTIONS:
        nodes = doc.get(section) or {}
        if not nodes:
            continue
        at = data.index(f'\n  {json.dumps(section)}: {{'.encode())
        for name in sorted(nodes):
            key = f"{_OPEN}{json.encoder.encode_basestring(name)}: ".encode()
            start = data.index(key, at) + len(key)
            at = data.index(_CLOSE, start) + len(_CLOSE)
            spans[nodes[name][HASH_KEY]] = [start, at]
    return spans


def _node_text(data: bytes, spans: Mapping[str, Any], node_hash: str) -> str | None:
    span = spans.get(node_hash)
    if not isinstance(span, list) or len(span) != 2 or not all(isinstance(i, int) for i in span):
        return None
    start, end = span
    if not 0 <= start < end <= len(data):
        return None
    raw = data[start:end]
    if not raw.startswith(b"{") or not raw.endswith(_CLOSE) or f"{_HASH_LINE}{json.dumps(node_hash)}".encode() not in raw:
        return None
    try:
        return raw.decode()
    except UnicodeDecodeError:
        return None


def _material(root: Path, lock_dir: Path) -> dict[str, Any]:
    return {"nodes": FORMAT, "bundle_format": BUNDLE_FORMAT, **code_material(), "root": str(root), "lock_dir": str(lock_dir)}

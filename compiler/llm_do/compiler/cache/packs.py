"""Packs in the user's cache: bytes with an index (a JSON object), by key material, for what an
incremental build keeps of the last build of a project (`splice`, `front_matter_cache`).

A pack is a JSON header line (its key material and the index), a line with the HMAC of the header
and the bytes under the cache folder's key (`user_state.folder_secret`), then the bytes. Nothing
read back runs code. A pack that does not decode, was kept for other key material, or whose HMAC
does not verify reads as absent; writes are atomic (a concurrent build reads the old pack or the
new one), and the folder is pruned, least recently used first, past `MAX_BYTES`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sys
from pathlib import Path
from typing import Any

from llm_do.bundle.version import VERSION
from llm_do.provenance.build_record import code_stamp
from llm_do.provenance.user_cache import cache_folder, keep_within
from llm_do.toolkit.files import atomic_write
from llm_do.toolkit.user_state import folder_secret

FOLDER = "incremental"
MAX_BYTES = 256 * 1024 * 1024
"""About twenty 3,000-worker projects (a 12 MB lock each)."""


def user_packs() -> SignedPacks | None:
    """The user's packs; None when caching is off (`LLM_DO_NO_CACHE`) or there is no cache directory."""
    folder = cache_folder(FOLDER)
    return None if folder is None else SignedPacks(folder)


def code_material() -> dict[str, Any]:
    """What decides how llm-do computes what a pack keeps: its version and code, the interpreter."""
    return {"llm_do": [VERSION, code_stamp()], "python": sys.version}


class SignedPacks:
    """The packs under `folder`, one per key material (any JSON value)."""

    def __init__(self, folder: Path, *, max_bytes: int = MAX_BYTES) -> None:
        self.folder = folder
        self.max_bytes = max_bytes

    def read(self, material: Any) -> tuple[bytes, dict[str, Any]] | None:
        """The bytes and index kept for `material`, or None."""
        path = self.path(material)
        try:
            raw = path.read_bytes()
            secret = folder_secret(self.folder, create=False)
        except OSError:
            return None
        header_end = raw.find(b"\n")
        mac_end = raw.find(b"\n", header_end + 1)
        if header_end < 0 or mac_end < 0:
            return None
        header, data = raw[:header_end], raw[mac_end + 1:]
        mac = raw[header_end + 1:mac_end].decode("ascii", "replace")
        if not hmac.compare_digest(_mac(secret, header, data), mac):
            return None
        try:
            entry = json.loads(header)
        except ValueError:
            return None
        if not isinstance(entry, dict) or entry.get("key") != material or not isinstance(entry.get("index"), dict):
            return None
        try:
            os.utime(path)  # pruning removes the least recently used first
        except OSError:
            pass
        return data, entry["index"]

    def write(self, material: Any, data: bytes, index: dict[str, Any]) -> None:
        """Keep `data` and its `index` for `material`; a cache that cannot be written is no error."""
        path = self.path(material)
        header = json.dumps({"key": material, "index": index}, sort_keys=True, separators=(",", ":")).encode()
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            secret = folder_secret(self.folder, create=True)
            path.parent.mkdir(mode=0o700, exist_ok=True)
            packed = b"%s\n%s\n%s" % (header, _mac(secret, header, data).encode(), data)
            atomic_write(path, packed)
            keep_within(self.folder, self.max_bytes, len(packed), "*/*.pack")
        except OSError:
            return

    def path(self, material: Any) -> Path:
        digest = hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()
        return self.folder / digest[:2] / f"{digest}.pack"


def _mac(secret: bytes, header: bytes, data: bytes) -> str:
    mac = hmac.new(secret, header, "sha256")
    mac.update(b"\n")
    mac.update(data)
    return mac.hexdigest()

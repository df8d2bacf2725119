"""Where the compiler's caches live, whether they are on, and the signed JSON entries they keep.

A cache lives in the user's cache directory, never in the project tree (a pull request can commit
any file). An entry is JSON (nothing read back runs code), written atomically, and carries an HMAC
under a key kept beside the entries, readable by the user alone: an entry that does not decode,
was written for another key, or was forged without the key reads as absent. Standard library only:
`build --check` of a project that did not change reads its answer here without loading the compiler.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from pathlib import Path
from typing import Any

from llm_do.toolkit.files import atomic_write
from llm_do.toolkit.user_state import cache_home, folder_secret, signature

NO_CACHE_VARIABLE = "LLM_DO_NO_CACHE"
PATH_VARIABLES = ("PYTHONPATH", "PYTHONHOME", "PYTHONSAFEPATH", "PYTHONNOUSERSITE", "PYTHONPLATLIBDIR", "PYTHONUSERBASE")
"""The environment variables that shape `sys.path`, so what an import finds."""


def cache_folder(name: str) -> Path | None:
    """The folder of the cache `name`, or None when `LLM_DO_NO_CACHE` is set (to anything but an
    empty string or 0) or there is no cache directory."""
    if os.environ.get(NO_CACHE_VARIABLE, "") not in ("", "0"):
        return None
    home = cache_home()
    return None if home is None else home / name


def path_environment() -> dict[str, str]:
    return {name: os.environ[name] for name in PATH_VARIABLES if name in os.environ}


class SignedEntries:
    """JSON bodies by key material (any JSON value), one file each, under `folder`."""

    def __init__(self, folder: Path, *, max_bytes: int) -> None:
        self.folder = folder
        self.max_bytes = max_bytes

    def read(self, material: Any) -> Any | None:
        """The body kept for `material`, or None (absent, unreadable, not signed with our key, or
        kept for other material)."""
        path = self.path(material)
        try:
            raw = path.read_bytes()
            secret = self._secret(create=False)
        except OSError:
            return None
        try:
            signed = json.loads(raw)
            body, mac = signed["entry"], signed["mac"]
            if not isinstance(body, str) or not isinstance(mac, str) or not hmac.compare_digest(signature(secret, body), mac):
                return None
            entry = json.loads(body)
        except (ValueError, KeyError, TypeError):
            return None
        if not isinstance(entry, dict) or entry.get("key") != material:
            return None
        try:
            os.utime(path)  # pruning removes the least recently used first
        except OSError:
            pass
        return entry.get("body")

    def write(self, material: Any, body: Any) -> None:
        """Keep `body` for `material`; a cache that cannot be written is no error."""
        path = self.path(material)
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)  # the user's own: others read nothing
            secret = self._secret(create=True)
            text = json.dumps({"key": material, "body": body}, sort_keys=True, separators=(",", ":"))
            path.parent.mkdir(mode=0o700, exist_ok=True)
            data = json.dumps({"entry": text, "mac": signature(secret, text)}).encode()
            atomic_write(path, data)
            keep_within(self.folder, self.max_bytes, len(data))
        except OSError:
            return

    def path(self, material: Any) -> Path:
        digest = hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()
        return self.folder / digest[:2] / f"{digest}.json"

    def _secret(self, *, create: bool) -> bytes:
        return folder_secret(self.folder, create=create)


def prune(folder: Path, limit: int, pattern: str = "*/*.json") -> int:
    """Remove the least recently used entries (the files `pattern` matches) until the folder holds
    at most three quarters of `limit`, when it holds more than `limit`; the bytes it then holds."""
    entries = []
    total = 0
    for path in folder.glob(pattern):
        try:
            st = path.stat()
        except OSError:
            continue
        entries.append((st.st_mtime_ns, st.st_size, path))
        total += st.st_size
    if total <= limit:
        return total
    for _, size, path in sorted(entries):
        path.unlink(missing_ok=True)
        total -= size
        if total <= limit * 3 // 4:
            break
    return total


_counted: dict[tuple[Path, str], tuple[int, int]] = {}
"""By folder and pattern: the bytes this process last counted there, and the bytes it wrote since."""


def keep_within(folder: Path, limit: int, written: int, pattern: str = "*/*.json") -> None:
    """After `written` bytes were written into `folder`: `prune` it when it may now hold more than
    `limit`. Counting lists and stats every entry, so a process counts a folder once and then adds
    what it writes, counting again when that passes the limit, or when it wrote an eighth of the
    limit since (what other processes wrote meanwhile then counts too): a build does not slow down
    with the size of the cache, and a folder passes its limit by at most an eighth of it per
    process writing at once."""
    key = (folder, pattern)
    known = _counted.get(key)
    if known is not None:
        counted, since = known[0], known[1] + written
        if counted + since <= limit and since <= limit // 8:
            _counted[key] = (counted, since)
            return
    _counted[key] = (prune(folder, limit, pattern), 0)

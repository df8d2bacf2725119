"""Introspection answers kept between builds, so a build whose Python did not change starts no
child process.

An entry is found by a key of what decides how the child starts (the request with its root left
out, the interpreter, llm-do's version, the environment variables that shape `sys.path`) and is used
only while its checks still hold:
- the hash of every project file the child read (seen by an audit hook: sources, and data that
  module-level code opens), of the Python files the request names and of the modules it loaded;
- the importable names in every project folder the child listed (a new module that an import
  would now find);
- the size and modification time of every module file the child loaded from outside the project
  (a changed or upgraded distribution, or llm-do itself, changes them), and the modification time
  of every folder outside the project on the child's `sys.path` (a package installed or removed).
Environment variables read by module-level code are not tracked.

The cache lives in the user's cache directory, never in the project tree: a pull request can commit
any file. Entries are JSON read into the `Facts` record (nothing read back runs code), written
atomically, and carry an HMAC under a key kept beside them, so an entry that does not decode, whose
key or checks do not match, or that was forged without the key, is ignored and replaced. The
folder is pruned, oldest first, when it grows past `MAX_BYTES`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from llm_do.bundle.version import VERSION
from llm_do.toolkit.files import atomic_write, write_new

from .project_reads import importable_names
from .records import Facts, Request
from .subprocess_runner import MOMENTARY_FAILURES

FORMAT = 1
MAX_BYTES = 64 * 1024 * 1024
VARIANTS = 8
"""Answers kept per key: one per content of the project's Python seen lately."""
NO_CACHE_VARIABLE = "LLM_DO_NO_CACHE"
PATH_VARIABLES = ("PYTHONPATH", "PYTHONHOME", "PYTHONSAFEPATH", "PYTHONNOUSERSITE", "PYTHONPLATLIBDIR", "PYTHONUSERBASE")
ROOT = "<<ROOT>>"
REAL_ROOT = "<<REAL-ROOT>>"


def cache_home() -> Path | None:
    """`$XDG_CACHE_HOME/llm-do`, or the platform's user cache directory; None when the user has no
    home directory to find it in (a container without `HOME`): then nothing is cached."""
    if os.environ.get("XDG_CACHE_HOME"):
        base = Path(os.environ["XDG_CACHE_HOME"])
    elif os.name == "nt" and os.environ.get("LOCALAPPDATA"):
        base = Path(os.environ["LOCALAPPDATA"])
    else:
        try:
            home = Path.home()
        except RuntimeError:
            return None
        base = home / "Library" / "Caches" if sys.platform == "darwin" else home / ".cache"
    return base / "llm-do"


def user_cache() -> IntrospectionCache | None:
    """The user's introspection cache, or None when `LLM_DO_NO_CACHE` is set (to anything but an
    empty string or 0) or there is no cache directory."""
    if os.environ.get(NO_CACHE_VARIABLE, "") not in ("", "0"):
        return None
    home = cache_home()
    return None if home is None else IntrospectionCache(home / "introspection")


class IntrospectionCache:
    """Facts by request, under `folder` (`user_cache()` gives the user's own)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def lookup(self, request: Request, root: Path) -> Facts | None:
        """The cached answer to `request` whose checks all still hold; None when there is none."""
        material = _key_material(request)
        path = self._entry_path(material)
        try:
            raw = path.read_bytes()
            secret = self._secret(create=False)
        except OSError:
            return None
        for variant in _variants(raw, secret, material):
            if not _checks_hold(variant.get("checks"), root):
                continue
            try:
                facts = Facts.model_validate_json(_with_root(variant["facts"], root))
            except (ValidationError, KeyError, TypeError):
                return None
            try:
                os.utime(path)  # pruning removes the least recently used first
            except OSError:
                pass
            return facts
        return None

    def store(self, request: Request, root: Path, facts: Facts) -> None:
        """Keep `facts`, the child's answer to `request`, beside the answers kept for other contents
        of the same files (another branch, another copy); a cache that cannot be written is no error."""
        if facts.failure_code in MOMENTARY_FAILURES or facts.environment is None:
            return
        material = _key_material(request)
        path = self._entry_path(material)
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)  # the user's own: others read nothing
            secret = self._secret(create=True)
            variant = {"checks": _checks(request, root, facts), "facts": _without_root(facts, root)}
            try:
                kept = _variants(path.read_bytes(), secret, material)
            except OSError:
                kept = []
            variants = [variant, *(v for v in kept if v.get("checks") != variant["checks"])][:VARIANTS]
            body = json.dumps({"format": FORMAT, "key": material, "variants": variants}, sort_keys=True,
                              separators=(",", ":"))
            path.parent.mkdir(mode=0o700, exist_ok=True)
            atomic_write(path, json.dumps({"entry": body, "mac": _mac(secret, body)}).encode())
            _prune(self.folder, MAX_BYTES)
        except OSError:
            return

    def _entry_path(self, material: dict[str, Any]) -> Path:
        digest = hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()
        return self.folder / digest[:2] / f"{digest}.json"

    def _secret(self, *, create: bool) -> bytes:
        """The HMAC key: 32 random bytes only this user can read, made once (by whichever build wins)."""
        path = self.folder / "key"
        try:
            secret = path.read_bytes()
        except FileNotFoundError:
            if not create:
                raise
            try:
                write_new(path, secrets.token_bytes(32))
                os.chmod(path, 0o600)
            except FileExistsError:
                pass
            secret = path.read_bytes()
        if len(secret) != 32:
            raise OSError(f"{path} is not a key")
        return secret


def _key_material(request: Request) -> dict[str, Any]:
    asked = json.loads(request.model_dump_json())
    asked.pop("root", None)
    return {
        "format": FORMAT,
        "llm_do": VERSION,
        "python": [sys.executable, sys.version],
        "environment": {name: os.environ[name] for name in PATH_VARIABLES if name in os.environ},
        "request": asked,
    }


def _checks(request: Request, root: Path, facts: Facts) -> dict[str, Any]:
    environment = facts.environment
    assert environment is not None
    read = {*request.python_files, *facts.loaded_files, *environment.project_files}
    project = {rel: _file_hash(root / rel) for rel in sorted(read)}
    listings = {rel: importable_names(root / rel) for rel in environment.project_folders}
    return {"project": project, "listings": listings, "modules": environment.module_files,
            "folders": environment.path_folders}


def _checks_hold(checks: Any, root: Path) -> bool:
    if not isinstance(checks, dict):
        return False
    try:
        for rel, digest in checks["project"].items():
            if _file_hash(root / rel) != digest:
                return False
        for rel, names in checks["listings"].items():
            if importable_names(root / rel) != names:
                return False
        for name, (mtime, size) in checks["modules"].items():
            st = os.stat(name)
            if st.st_mtime_ns != mtime or st.st_size != size:
                return False
        for name, mtime in checks["folders"].items():
            if _mtime(name) != mtime:
                return False
    except (OSError, KeyError, TypeError, ValueError, AttributeError):
        return False
    return True


def _mtime(name: str) -> int | None:
    try:
        return os.stat(name).st_mtime_ns
    except OSError:
        return None


def _file_hash(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def _places(root: Path) -> list[tuple[str, str]]:
    """(placeholder, the root's path as JSON text), the longer first: facts name the root in messages."""
    places = {ROOT: str(root), REAL_ROOT: os.path.realpath(root)}
    return sorted(((k, json.dumps(v)[1:-1]) for k, v in places.items()), key=lambda kv: len(kv[1]), reverse=True)


def _without_root(facts: Facts, root: Path) -> str:
    text = facts.model_dump_json()
    for placeholder, place in _places(root):
        text = text.replace(place, placeholder)
    return text


def _with_root(text: str, root: Path) -> str:
    for placeholder, place in _places(root):
        text = text.replace(placeholder, place)
    return text


def _mac(secret: bytes, body: str) -> str:
    return hmac.new(secret, body.encode(), hashlib.sha256).hexdigest()


def _variants(raw: bytes, secret: bytes, material: dict[str, Any]) -> list[dict[str, Any]]:
    """The entry's answers, newest first, if it decodes, its HMAC is right and it is for `material`."""
    try:
        signed = json.loads(raw)
        body, mac = signed["entry"], signed["mac"]
        if not isinstance(body, str) or not isinstance(mac, str) or not hmac.compare_digest(_mac(secret, body), mac):
            return []
        entry = json.loads(body)
    except (ValueError, KeyError, TypeError):
        return []
    if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("key") != material:
        return []
    variants = entry.get("variants")
    return [v for v in variants if isinstance(v, dict)] if isinstance(variants, list) else []


def _prune(folder: Path, limit: int) -> None:
    """Remove the least recently used entries until the folder holds at most three quarters of `limit`."""
    entries = []
    total = 0
    for path in folder.glob("*/*.json"):
        try:
            st = path.stat()
        except OSError:
            continue
        entries.append((st.st_mtime_ns, st.st_size, path))
        total += st.st_size
    if total <= limit:
        return
    for _, size, path in sorted(entries):
        path.unlink(missing_ok=True)
        total -= size
        if total <= limit * 3 // 4:
            return

"""Introspection answers kept between builds, so a build whose Python did not change starts no
child process.

An entry is found by a key of what decides how the child starts (the request with its root left
out, the interpreter, llm-do's version, the environment variables that shape `sys.path`) and is used
only while its checks still hold (`import_checks`):
- the hash of every project file the child read (seen by an audit hook: sources, and data that
  module-level code opens), of the Python files the request names and of the modules it loaded;
- what an import finds in every project folder the child listed: each name an import could take,
  and whether it is a folder (with which `__init__` file: a package, else a namespace package), a
  regular file, something the import system passes by (a named pipe), or a link and to where. A
  module that is missing, or a folder, a pipe or a dangling link where a module was, is seen there:
  so a failed or optional import (`try: import x`) is answered again once what it looked for appears;
- the size and modification time of every module file the child loaded from outside the project
  (a changed or upgraded distribution, or llm-do itself, changes them), and the modification time
  of every folder outside the project on the child's `sys.path` (a package installed or removed);
- the size and modification time of every file and folder outside the project that the
  project's code opened or listed (a configuration file read at import, created or edited since),
  and a hash of the value of every environment variable it read (of the set of names, when it
  listed them): the project's code, that is a project module running or a function it called,
  not an installed package while it is imported, which a forked child has imported already.
The key leaves the project's place out and the checks are relative to its root, so a copy of a
project at another path takes its answers, and names its own root in them.

An answer in which importing the project's Python raised is not kept: such a failure can stand on
what no check sees (a server that was down, the time), and a project is edited until it imports,
so it costs an import per build only while it is broken.

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
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llm_do.bundle.version import VERSION
from llm_do.provenance.import_checks import checks_hold, file_hash, import_listing, variable_hashes
from llm_do.provenance.user_cache import NO_CACHE_VARIABLE as NO_CACHE_VARIABLE  # where the test support finds it
from llm_do.provenance.user_cache import cache_folder, keep_within, path_environment
from llm_do.toolkit.files import atomic_write
from llm_do.toolkit.user_state import folder_secret, signature

if TYPE_CHECKING:
    from .answers import Facts, Request

FORMAT = 2
MAX_BYTES = 64 * 1024 * 1024
VARIANTS = 8
"""Answers kept per key: one per content of the project's Python seen lately."""
ROOT = "<<ROOT>>"
REAL_ROOT = "<<REAL-ROOT>>"


def user_cache() -> IntrospectionCache | None:
    """The user's introspection cache, or None when `LLM_DO_NO_CACHE` is set (to anything but an
    empty string or 0) or there is no cache directory."""
    folder = cache_folder("introspection")
    return None if folder is None else IntrospectionCache(folder)


class IntrospectionCache:
    """Facts by request, under `folder` (`user_cache()` gives the user's own)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.used_checks: list[dict[str, Any]] = []
        """The checks of every answer this cache gave or kept, so a build record can keep them too."""
        self.untracked = False
        """An answer was used that this cache could not keep: nothing says when it goes stale."""

    def lookup(self, request: Request, root: Path) -> Facts | None:
        """The cached answer to `request` whose checks all still hold; None when there is none."""
        from pydantic import ValidationError  # a project without Python never asks: its build loads no pydantic records

        from .answers import Facts

        material = _key_material(request)
        path = self._entry_path(material)
        try:
            raw = path.read_bytes()
            secret = self._secret(create=False)
        except OSError:
            return None
        for variant in _variants(raw, secret, material):
            if not checks_hold(variant.get("checks"), root):
                continue
            try:
                facts = Facts.model_validate_json(_with_root(variant["facts"], root))
            except (ValidationError, KeyError, TypeError):
                return None
            self.used_checks.append(variant["checks"])
            try:
                os.utime(path)  # pruning removes the least recently used first
            except OSError:
                pass
            return facts
        return None

    def store(self, request: Request, root: Path, facts: Facts) -> None:
        """Keep `facts`, the child's answer to `request`, beside the answers kept for other contents
        of the same files (another branch, another copy); a cache that cannot be written is no error."""
        from .subprocess_runner import MOMENTARY_FAILURES

        if facts.failure_code in MOMENTARY_FAILURES or facts.environment is None or facts.import_failed:
            self.untracked = True
            return
        material = _key_material(request)
        path = self._entry_path(material)
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)  # the user's own: others read nothing
            secret = self._secret(create=True)
            checks = _checks(request, root, facts)
            variant = {"checks": checks, "facts": _without_root(facts, root)}
            try:
                kept = _variants(path.read_bytes(), secret, material)
            except OSError:
                kept = []
            variants = [variant, *(v for v in kept if v.get("checks") != variant["checks"])][:VARIANTS]
            body = json.dumps({"format": FORMAT, "key": material, "variants": variants}, sort_keys=True,
                              separators=(",", ":"))
            path.parent.mkdir(mode=0o700, exist_ok=True)
            data = json.dumps({"entry": body, "mac": signature(secret, body)}).encode()
            atomic_write(path, data)
            self.used_checks.append(checks)
            keep_within(self.folder, MAX_BYTES, len(data))
        except OSError:
            self.untracked = True

    def _entry_path(self, material: dict[str, Any]) -> Path:
        digest = hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()
        return self.folder / digest[:2] / f"{digest}.json"

    def _secret(self, *, create: bool) -> bytes:
        return folder_secret(self.folder, create=create)


def _key_material(request: Request) -> dict[str, Any]:
    asked = json.loads(request.model_dump_json())
    asked.pop("root", None)
    return {
        "format": FORMAT,
        "llm_do": VERSION,
        "python": [sys.executable, sys.version],
        "environment": path_environment(),
        "request": asked,
    }


def _checks(request: Request, root: Path, facts: Facts) -> dict[str, Any]:
    from .fork_client import CHILD_ENVIRONMENT

    environment = facts.environment
    assert environment is not None
    read = {*request.python_files, *facts.loaded_files, *environment.project_files}
    project = {rel: file_hash(root / rel) for rel in sorted(read)}
    listings = {rel: import_listing(root / rel) for rel in environment.project_folders}
    variables = variable_hashes((n for n in environment.variables if n not in CHILD_ENVIRONMENT), os.environ)
    return {"project": project, "listings": listings, "modules": environment.module_files,
            "folders": environment.path_folders, "outside": environment.outside_files, "environment": variables}


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


def _variants(raw: bytes, secret: bytes, material: dict[str, Any]) -> list[dict[str, Any]]:
    """The entry's answers, newest first, if it decodes, its HMAC is right and it is for `material`."""
    try:
        signed = json.loads(raw)
        body, mac = signed["entry"], signed["mac"]
        if not isinstance(body, str) or not isinstance(mac, str) or not hmac.compare_digest(signature(secret, body), mac):
            return []
        entry = json.loads(body)
    except (ValueError, KeyError, TypeError):
        return []
    if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("key") != material:
        return []
    variants = entry.get("variants")
    return [v for v in variants if isinstance(v, dict)] if isinstance(variants, list) else []

"""What a clean build wrote from the inputs it read, so `build --check` and `build` of a project
that did not change compile nothing.

A record is found by the sha256 of the bytes the build wrote, with the places of the project and of
the lock, the interpreter, llm-do's own code and what shapes `sys.path`. It holds what those bytes
depended on: the hash of every file the build read (with its size, times and inode, so a check
reads again only a file whose stamp changed), the listing of the project tree taken before
it started (a file that a pattern or a template search would find now), without llm-do's own
state folders when nothing of the build could have found anything there (`left_out`), the checks of the
introspection answers it used (`import_checks`: the Python and what it imports), and the
diagnostics it reported. A lock is current when a record is found for its bytes and all of that
still holds; a lock whose bytes a person edited (its digest recomputed or not) finds no record, and
the check builds in memory as before. A project with MCP servers, whose tools are listed live, is
never recorded.

Records live in the user's cache (`user_cache`), signed; standard library only, so a check that
finds its answer here (`build --check`, and every run: `lock_sources`) loads nothing of the compiler.
"""

from __future__ import annotations

import functools
import hashlib
import os
import stat
import sys
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

from llm_do.bundle.canonical import sha256_hex, source_hash
from llm_do.bundle.regular_files import read_regular_file
from llm_do.bundle.version import VERSION
from llm_do.toolkit.protected import STATE_FOLDER

from .import_checks import checks_hold
from .tree_listing import Listing, list_tree, without
from .user_cache import SignedEntries, cache_folder, path_environment

FORMAT = 3
FOLDER = "builds"
MAX_BYTES = 64 * 1024 * 1024
MANIFEST_NAME = "project.json"
RACY_NS = 2_000_000_000
"""A file changed this shortly before it was recorded is hashed at every check: a later write in
the same tick of a coarse clock would leave its times as they were."""


def build_records() -> SignedEntries | None:
    """The user's build records; None when caching is off (`LLM_DO_NO_CACHE`) or there is no cache directory."""
    folder = cache_folder(FOLDER)
    return None if folder is None else SignedEntries(folder, max_bytes=MAX_BYTES)


def manifest_root(project: Path) -> Path | None:
    """The root of a project given as its project.json or a directory holding one, as the compiler
    finds it; None for anything else (an implicit project, another manifest beside project.json, a
    wrong path), which the compiler decides. Records are kept by root alone: a project given as
    another manifest is neither recorded (`recorded_manifest`) nor recalled."""
    if project.name == MANIFEST_NAME and project.is_file():
        return project.parent.resolve()
    if project.is_dir() and (project / MANIFEST_NAME).is_file():
        return project.resolve()
    return None


def recorded_manifest(manifest_file: str) -> bool:
    """Whether a compile whose manifest was `manifest_file` (`LoadedProject.manifest_file`) may be
    recorded: only project.json's, the one `manifest_root` recalls records for."""
    return manifest_file == MANIFEST_NAME


def tree_before_build(root: Path, lock: Path | None) -> Listing | None:
    """The listing to record, taken before the build reads anything; the lock (if any) is left out."""
    inside = inside_root(root, lock)
    return list_tree(str(root), leave_out=() if inside is None else (inside,))


def state_folders(root: Path, lock: Path | None) -> list[str]:
    """Where llm-do writes its own state in the project at `root` (relative paths): the root's
    `.llm-do/` (the run database) and the one beside the lock (chat threads), when the lock is in
    a folder below the root. A record leaves one out of its listing (`left_out`) only when the
    compiler finds the build could not have found anything there (`build.state_left_out`): a chat
    turn or a durable run then leaves the record holding."""
    folders = [STATE_FOLDER]
    inside = inside_root(root, lock)
    if inside is not None and "/" in inside:
        folders.append(f"{inside.rsplit('/', 1)[0]}/{STATE_FOLDER}")
    return folders


def inside_root(root: Path, lock: Path | None) -> str | None:
    """The lock's path relative to the root (links of its folder followed); None when there is no
    lock or it is outside the root."""
    try:
        return (lock.parent.resolve() / lock.name).relative_to(root).as_posix() if lock is not None else None
    except ValueError:
        return None


def record(records: SignedEntries, root: Path, lock: Path, bundle: bytes, *, listing: Listing,
           files: dict[str, str], import_checks: list[Any], diagnostics: list[dict[str, Any]], workers: int,
           left_out: Collection[str] = ()) -> None:
    """Keep what the build of `root` that gave `bundle` (for `lock`) depended on."""
    keep_record(records, _material(root, lock, bundle), root, listing=listing, files=files, import_checks=import_checks,
                diagnostics=diagnostics, left_out=left_out, workers=workers)


def keep_record(records: SignedEntries, material: dict[str, Any], root: Path, *, listing: Listing, files: dict[str, str],
                import_checks: list[Any], diagnostics: list[dict[str, Any]], left_out: Collection[str] = (),
                **more: Any) -> None:
    """Keep under `material` what a compile of `root` depended on (a build's, or a lint's:
    `lint_record`). `files`: every file it read, by its source hash; `listing`: the tree taken
    before it; `left_out`: state folders (`state_folders`, each a folder of `listing` or absent
    from it) the compile could not have found anything in, which the record's listing leaves out
    and says so; `more`: what else the record says. Nothing is kept when a file no longer holds
    what the compile read."""
    stamped = _stamped_files(root, files)
    if stamped is None:
        return
    records.write(material, {"tree": without(listing, left_out), "left_out": sorted(left_out), "files": stamped,
                             "import_checks": import_checks, "diagnostics": diagnostics, **more})


def _stamped_files(root: Path, files: dict[str, str]) -> dict[str, list[Any]] | None:
    """Each file by `[its source hash, its stamp]` (`_stamp`); None when one no longer holds what was read."""
    stamped = {}
    now = time.time_ns()
    for rel, digest in files.items():
        try:
            stamped[rel] = [digest, _stamp(os.path.join(root, rel), digest, now)]
        except (OSError, ValueError):  # unreadable, or changed since it was read
            return None
    return stamped


def recall(records: SignedEntries, root: Path, lock: Path) -> dict[str, Any] | None:
    """The record of the lock's bytes (its `diagnostics` and `workers`) when everything it depends
    on still holds, i.e. when a clean build now would write exactly these bytes; else None."""
    found = recorded(records, root, lock)
    if found is None or changed_files(found[1], root, lock) != {}:
        return None
    return found[1]


def recorded(records: SignedEntries, root: Path, lock: Path) -> tuple[bytes, dict[str, Any]] | None:
    """The bytes of `lock` and the record kept for them, whether or not it still holds; None when
    the lock cannot be read or no record was kept for its bytes."""
    try:
        data = read_regular_file(lock)
    except OSError:  # missing, or not a regular file (`IrregularFile`); no limit, so never too large
        return None
    body = read_record(records, root, lock, data)
    return (data, body) if body is not None else None


def read_record(records: SignedEntries, root: Path, lock: Path, bundle: bytes) -> dict[str, Any] | None:
    """The record kept for the lock bytes `bundle` at `lock` (of the project at `root`), whether or
    not it still holds; None when none was kept."""
    body = records.read(_material(root, lock, bundle))
    return body if isinstance(body, dict) else None


def changed_files(body: dict[str, Any], root: Path, lock: Path | None) -> dict[str, bytes] | None:
    """The files of the record `body` that no longer hold what the build read, with their bytes
    now; None when something else it depends on changed (the tree's listing, but for what the
    record left out: `tree_now`; what an import finds, a file that cannot be read), or the record
    does not decode. `lock`: the lock the tree's listing leaves out (None for a lint, which writes none)."""
    files, import_checks = body.get("files"), body.get("import_checks")
    if not isinstance(files, dict) or not isinstance(import_checks, list):
        return None
    tree = tree_now(body.get("left_out"), root, lock)
    if tree is None or body.get("tree") != tree:
        return None
    changed: dict[str, bytes] = {}
    try:
        for rel, (digest, stamp) in files.items():
            path = os.path.join(root, rel)
            if stamp is not None and _stat(os.stat(path)) == stamp:
                continue  # the same file, not written since it was hashed
            data = read_regular_file(path)
            if source_hash(data) != digest:
                changed[rel] = data
    except (OSError, TypeError, ValueError):  # unreadable, or an entry that does not decode
        return None
    return changed if all(checks_hold(checks, root) for checks in import_checks) else None


def tree_now(left_out: Any, root: Path, lock: Path | None) -> Listing | None:
    """The listing of the tree now, leaving out the lock and the state folders `left_out` (a
    record's); None when it cannot be compared with the record's: the tree cannot be listed, or
    `left_out` is not a list of this project's state folders each absent or a folder (not a link:
    a search that would enter a folder a link leads to would not enter it here)."""
    if not isinstance(left_out, list) or not set(left_out) <= set(state_folders(root, lock)):
        return None
    for folder in left_out:
        try:
            if not stat.S_ISDIR(os.lstat(root / folder).st_mode):
                return None
        except FileNotFoundError:
            continue
        except OSError:
            return None
    inside = inside_root(root, lock)
    return list_tree(str(root), leave_out=[*left_out, *([inside] if inside is not None else [])])


def rerecord(records: SignedEntries, root: Path, lock: Path, bundle: bytes, body: dict[str, Any],
             changed: dict[str, str]) -> None:
    """Keep the record `body` of an earlier build for `bundle`, the bytes a build writes now that
    the files `changed` hold other text (their source hashes); the other files keep their stamps."""
    files = dict(body["files"])
    now = time.time_ns()
    for rel, digest in changed.items():
        try:
            files[rel] = [digest, _stamp(os.path.join(root, rel), digest, now)]
        except (OSError, ValueError):
            return
    records.write(_material(root, lock, bundle), {**body, "files": files})


def _stamp(path: str, digest: str, now_ns: int) -> list[int] | None:
    """The file's stamp (`_stat`) when it still holds what the build read (else ValueError), so a
    check need not read it again while the stamp is the same; None when it changed too lately to
    tell a later write by its times (a coarse clock)."""
    before = os.stat(path)
    if source_hash(read_regular_file(path)) != digest:
        raise ValueError(f"{path} changed during the build")
    if max(before.st_mtime_ns, before.st_ctime_ns) >= now_ns - RACY_NS:
        return None
    return _stat(before)


def _stat(st: os.stat_result) -> list[int]:
    """Size, modification and change times, inode: a write changes the change time, which no tool sets back."""
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def _material(root: Path, lock: Path, bundle: bytes) -> dict[str, Any]:
    return {**compiler_material(root), "lock": str(lock.parent.resolve() / lock.name), "bundle": sha256_hex(bundle)}


def compiler_material(root: Path) -> dict[str, Any]:
    """What a compile of the project at `root` depends on besides its files: llm-do's code, the
    interpreter (the file it is, not the name it was started by: `python` and `python3` of one
    environment are one; and its environment, `sys.prefix`) and what shapes `sys.path`."""
    return {
        "format": FORMAT,
        "llm_do": [VERSION, code_stamp()],
        "python": [os.path.realpath(sys.executable), sys.prefix, sys.version, path_stamp()],
        "environment": path_environment(),
        "root": str(root),
    }


@functools.cache
def code_stamp() -> str:
    """The size and modification time of every module of llm-do (its version does not change with
    every edit of a checkout), as one hash; taken once per process, as the code it runs is loaded once."""
    package = sys.modules["llm_do"]  # loaded: this module is part of it (importing it here would make a circle)
    stamp = hashlib.sha256()
    for top in sorted(package.__path__):
        for folder, dirs, names in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(names):
                path = os.path.join(folder, name)
                st = os.stat(path)
                stamp.update(f"{path}:{st.st_mtime_ns}:{st.st_size}\n".encode())
    return stamp.hexdigest()


def path_stamp() -> list[list[Any]]:
    """Each `sys.path` folder with its modification time: a distribution installed, upgraded or
    removed changes its folder (the packages a lock records, pydantic's schemas, PyYAML's parse).
    The first entry (the script's folder, or the current one) is left out, and so is the working
    directory wherever it stands (`""`, or its path, as `python -m` and test runners put it): the
    compiler's own imports do not come from them, and leaving them out lets `llm-do exec`, a script
    and a test runner find the records of `llm-do build`."""
    here = os.getcwd()
    out: list[list[Any]] = []
    for entry in sys.path[1:]:
        if entry in ("", here):
            continue
        try:
            out.append([entry, os.stat(entry).st_mtime_ns])
        except OSError:
            out.append([entry, None])
    return out

"""`llm-do build --check`: is the lock current, without compiling?

Current means: same compiler and bundle format, a digest that verifies, the same file set and
the same source hashes (and the same versions of referenced packages). Only project.json is parsed;
every other source is just hashed, so this stays fast for thousands of workers.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from llm_do.runtime.bundle_format import BUNDLE_FORMAT
from llm_do.runtime.canonical import DigestError, source_hash, verify_digest
from llm_do.runtime.lockfile import LockFormatError, LockReader
from llm_do.runtime.version import VERSION

from .sources import Unreadable, read_regular_file
from .stages.load import LoadedProject, load

LISTED_KINDS = ("manifest", "worker")


@dataclass
class LockStatus:
    lock: Path
    differences: list[str] = field(default_factory=list)

    @property
    def current(self) -> bool:
        return not self.differences


def check_lock(project_path: Path, lock: Path | None = None) -> LockStatus:
    loaded, diagnostics = load(project_path)
    lock = lock or loaded.root / "bundle.lock"
    status = LockStatus(lock)
    try:
        data = read_regular_file(str(lock), limit=None)
    except FileNotFoundError:
        status.differences.append(f"{lock.name} does not exist")
        return status
    except Unreadable as exc:
        status.differences.append(f"{lock.name} is {exc}")
        return status
    try:
        verify_digest(data)
        text = LockReader.from_bytes(data)
        fmt = text.get("bundle_format")
        compiler = text.get("compiler") or {}
        recorded = text.get("sources") or {}
        root = text.get("root")
        packages = text.get("packages") or {}
    except (DigestError, LockFormatError) as exc:
        status.differences.append(f"{lock.name} is not a valid lock: {exc}")
        return status
    if fmt != BUNDLE_FORMAT:
        status.differences.append(f"bundle format {fmt} (this llm-do writes {BUNDLE_FORMAT})")
    if compiler.get("version") != VERSION:
        status.differences.append(f"built by llm-do {compiler.get('version')} (this is {VERSION})")
    expected_root = Path(os.path.relpath(loaded.root, lock.resolve().parent)).as_posix()
    if root != expected_root:
        status.differences.append(f"root is '{root}', the project is at '{expected_root}' from the lock")
    if loaded.manifest is None:
        status.differences.append("project.json has errors (run `llm-do lint`)")
        return status
    status.differences.extend(_file_differences(loaded, recorded))
    if any(d.is_error and d.code != "F001" for d in diagnostics):
        status.differences.append("project.json has errors (run `llm-do lint`)")
    status.differences.extend(_package_differences(packages))
    return status


def _file_differences(loaded: LoadedProject, recorded: dict[str, dict]) -> list[str]:
    out: list[str] = []
    listed_now = set(loaded.worker_files) | set(loaded.python_files)
    if not loaded.implicit:
        listed_now.add(loaded.manifest_file)
    for path in sorted(listed_now - set(recorded)):
        out.append(f"added: {path}")
    for path, entry in sorted(recorded.items()):
        if entry.get("kind") in LISTED_KINDS and path not in listed_now:
            out.append(f"no longer in the project: {path}")
            continue
        try:
            actual = source_hash(read_regular_file(str(loaded.root / path)))
        except OSError:
            out.append(f"deleted: {path}")
            continue
        except Unreadable:
            out.append(f"changed: {path}")
            continue
        if actual != entry.get("sha256"):
            out.append(f"changed: {path}")
    return out


def _package_differences(packages: dict[str, str]) -> list[str]:
    if not packages:
        return []
    from importlib import metadata

    out = []
    for name, version in sorted(packages.items()):
        try:
            now = metadata.version(name)
        except metadata.PackageNotFoundError:
            now = None
        if now != version:
            out.append(f"package {name} is {now or 'not installed'} (built with {version})")
    return out

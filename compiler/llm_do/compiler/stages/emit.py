"""Stage 7, emit: seal the bundle document (canonical JSON + digest) and write it atomically."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from llm_do.bundle.canonical import seal


def emit(doc: dict[str, Any]) -> bytes:
    return seal(doc)


def write_atomic(path: Path, data: bytes) -> None:
    """Write via a temporary file in the same directory and rename: readers see the old file or the
    new one, never a torn one, and a failure leaves the old one in place.

    The temporary file's name carries the writer's process id: a write killed half-way leaves
    it behind, and the next write to the same path removes it once that process is gone."""
    remove_stale_temporaries(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    try:
        os.chmod(tmp, _file_mode(path))
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _file_mode(path: Path) -> int:
    """Keep an existing file's mode; a new one gets the usual 0666 less the umask (mkstemp's is 0600)."""
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def remove_stale_temporaries(path: Path) -> list[str]:
    """Delete the temporary files that killed writes of `path` left (`.NAME.PID.RANDOM.tmp` whose
    process has ended, or `.NAME.RANDOM.tmp` from before the id was in the name); their names."""
    prefix = f".{path.name}."
    removed = []
    try:
        names = os.listdir(path.parent)
    except OSError:
        return removed
    for name in names:
        if not (name.startswith(prefix) and name.endswith(".tmp")):
            continue
        writer = name[len(prefix):-len(".tmp")].split(".")
        if len(writer) == 2 and writer[0].isdigit() and _running(int(writer[0])):
            continue
        try:
            os.unlink(path.parent / name)
            removed.append(name)
        except OSError:
            pass
    return removed


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return False  # this process writes one file at a time: an older one of ours is a leftover
    if os.name == "nt":
        return True  # os.kill would end the process there, not probe it
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True

"""Stage 7, emit: seal the bundle document (canonical JSON + digest) and write it atomically."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from llm_do.runtime.canonical import seal


def emit(doc: dict[str, Any]) -> bytes:
    return seal(doc)


def write_atomic(path: Path, data: bytes) -> None:
    """Write via a temporary file in the same directory and rename: readers see the old file or the
    new one, never a torn one, and a failure leaves the old one in place."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
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

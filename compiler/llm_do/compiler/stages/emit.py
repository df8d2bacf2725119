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

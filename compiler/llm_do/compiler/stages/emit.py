"""Stage 7, emit: seal the bundle document (canonical JSON + digest) and write it atomically."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from llm_do.bundle.canonical import seal
from llm_do.toolkit.files import atomic_write


def emit(doc: Mapping[str, Any]) -> bytes:
    return seal(doc)


def write_atomic(path: Path, data: bytes) -> None:
    """Write a file of the project (the bundle, `init`'s and `migrate`'s files) with the one atomic
    writer (`toolkit.files.atomic_write`), removing the temporaries that killed writes left."""
    atomic_write(path, data, remove_stale=True)

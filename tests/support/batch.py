"""A batch's files: INPUTS.jsonl written, RESULTS.jsonl read (tests/runtime/test_batch*.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def inputs_file(path: Path, lines: list[Any]) -> Path:
    """A batch's INPUTS.jsonl: one JSON value per line."""
    path.write_text("".join(json.dumps(v) + "\n" for v in lines), encoding="utf-8")
    return path


def results_of(path: Path) -> list[dict[str, Any]]:
    """A batch's RESULTS.jsonl without its header line (checked to be there)."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert "llm_do_batch" in lines[0]
    return lines[1:]

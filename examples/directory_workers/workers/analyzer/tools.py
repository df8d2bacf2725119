"""analyzer's own tools: only the worker in this directory can use them."""

from collections import Counter


def count_by_kind(subjects: str) -> dict[str, int]:
    """Count commit subjects by their conventional-commit prefix (`feat`, `fix`, `chore`, ...)."""
    kinds = Counter(line.split(":", 1)[0].strip() for line in subjects.splitlines() if ":" in line)
    return dict(sorted(kinds.items()))


TOOLS = [count_by_kind]

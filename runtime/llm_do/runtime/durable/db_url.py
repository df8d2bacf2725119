"""Where durable runs are recorded: a DB URL with a scheme (`sqlite:///PATH`, `postgresql://...`).

Standard library only: the CLI tells a DB URL from a prompt (`exec --durable PROMPT`) and resolves
the default before anything of DBOS is imported.
"""

from __future__ import annotations

import re
from pathlib import Path

from llm_do.bundle.errors import InputProblem

DEFAULT_DB = "sqlite:///.llm-do/runs.sqlite"
"""Relative to the bundle's directory for `exec --durable`, to the current one for the others."""

SCHEMES = ("sqlite", "postgresql", "postgres")
_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*)://", re.IGNORECASE)


class DbUrlProblem(InputProblem, ValueError):
    """A DB URL llm-do cannot use (usage error: exit 2)."""


def has_scheme(text: str) -> bool:
    """Whether `text` is meant as a DB URL (`sqlite:///...`, `postgresql://...`) rather than a prompt."""
    return _SCHEME.match(text) is not None


def resolve_db_url(given: str | None, base: Path) -> str:
    """The URL to hand DBOS: the default below `base`, a relative SQLite path made absolute against
    `base` (its folder created), anything else as given once its scheme is known."""
    url = given or DEFAULT_DB
    match = _SCHEME.match(url)
    scheme = match.group(1).lower().split("+")[0] if match else ""
    if scheme not in SCHEMES:
        raise DbUrlProblem(f"{url}: not a database URL llm-do can use (give sqlite:///PATH or postgresql://...)")
    if scheme != "sqlite":
        return url
    path_text = url[len("sqlite:///"):] if url.lower().startswith("sqlite:///") else ""
    if not path_text or path_text.startswith(":memory:"):
        raise DbUrlProblem(f"{url}: a durable run needs a file (sqlite:///PATH) that outlives the process")
    path = Path(path_text)
    if not path.is_absolute():
        path = (base / path).resolve()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DbUrlProblem(f"{url}: cannot create {path.parent} ({exc.strerror})") from None
    return f"sqlite:///{path}"

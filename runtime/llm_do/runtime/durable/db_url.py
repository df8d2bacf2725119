"""Where durable runs are recorded: a DB URL with a scheme (`sqlite:///PATH`, `postgresql://...`).

Standard library only: the CLI tells a DB URL from a prompt (`exec --durable PROMPT`) and resolves
the default before anything of DBOS is imported.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from llm_do.bundle.errors import InputProblem

DEFAULT_DB = "sqlite:///.llm-do/runs.sqlite"
"""Below the bundle's directory for `exec --durable` and `batch --durable`; below the project
(`project_dir`) for the commands that read runs."""

SCHEMES = ("sqlite", "postgresql", "postgres")
_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*)://", re.IGNORECASE)
PROJECT_MARKERS = ("project.json", "bundle.lock")


class DbUrlProblem(InputProblem, ValueError):
    """A DB URL llm-do cannot use (usage error: exit 2)."""


def has_scheme(text: str) -> bool:
    """Whether `text` is meant as a DB URL (`sqlite:///...`, `postgresql://...`) rather than a prompt."""
    return _SCHEME.match(text) is not None


def project_dir(start: Path) -> Path:
    """The project `start` is in (the nearest folder up with a project.json or bundle.lock), where
    the default database of its runs is; `start` itself outside any project."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if any((folder / marker).is_file() for marker in PROJECT_MARKERS):
            return folder
    return start


def resolve_db_url(given: str | None, default_base: Path, *, create: bool = False) -> str:
    """The URL to hand DBOS: one URL names one file whichever command reads it. The default is
    below `default_base`; a relative SQLite path given is taken from the current directory, like
    any path argument. With `create` (a run records into it) the folder is made 0700 and a new
    database file 0600: it holds tool arguments and results."""
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
        path = ((Path.cwd() if given else default_base) / path).resolve()
    if create:
        _create_private(path, url)
    return f"sqlite:///{path}"


def _create_private(path: Path, url: str) -> None:
    """A new folder is made 0700 and a new database 0600; in llm-do's own `.llm-do/` folder (made
    0755 by an llm-do of before, or by hand) the folder and the database are narrowed to that too."""
    try:
        ours = path.parent.name == ".llm-do"
        if ours:
            from llm_do.toolkit.files import private_folder

            private_folder(path.parent)
        elif not path.parent.is_dir():
            path.parent.mkdir(mode=0o700, parents=True)
        if not path.exists():
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        elif ours and path.stat().st_mode & 0o077:
            os.chmod(path, 0o600)
    except OSError as exc:
        raise DbUrlProblem(f"{url}: cannot create {path} ({exc.strerror})") from None


def where_runs_are(start: Path) -> str:
    """For a lookup that found no database: where runs are recorded, and default databases in the
    folders below `start` (a durable run from the parent of its project)."""
    found = sorted(p for p in start.glob("*/.llm-do/runs.sqlite") if p.is_file())[:3]
    hint = "; found " + ", ".join(f"--db sqlite:///{p.resolve()}" for p in found) if found else ""
    return ("durable runs are recorded in the database `--durable` names, by default .llm-do/runs.sqlite beside the "
            f"bundle; give --db DB_URL{hint}")

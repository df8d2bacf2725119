"""What no tool a run lends a model may touch, whatever the project's rules say: the files llm-do
trusts, and the state that holds what tools returned.

- **Locks**: the project's `bundle.lock` (and any file of that name below a toolset's directory)
  and the lock the run was loaded from: a model that rewrites one replaces the next run's policy.
  Changed, replaced or removed: refused; read: allowed (a lock is the project's public policy).
- **llm-do's state**: the project's `.llm-do/` (and the one beside the loaded lock, and any
  `.llm-do` folder below a toolset's directory): chat threads and the run database hold every tool
  result. Read, listed, changed or removed: refused.
- **The user's llm-do folders**: the cache (`$XDG_CACHE_HOME/llm-do`) and the configuration
  folder (`$XDG_CONFIG_HOME/llm-do`, whose key signs threads). Read or changed: refused.
- **What `llm-do test` reads**: the case files (`tests/*.yaml`, `tests/*.yml`), `tests/redact.txt`,
  the reports in `tests/evals/`, and the cassettes, scripts, schema and predicate files the cases
  name. Changed, replaced or removed: refused, so a model cannot make the project's tests pass.

A folder that holds any of these cannot be moved or removed either (`REPLACE`): `mv sub x` where
`sub` holds the lock takes the lock along. Paths are compared as written (lexically normalized:
`./bundle.lock`, `a/../bundle.lock`) and as the kernel resolves them (links followed), ignoring
case (`BUNDLE.LOCK` is the lock on a file system that ignores case).

Cheap on a run's path: a run that writes nothing reads no case file, and a write reads the case
files (YAML, their C loader) only when the file it targets is named in one of them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from .user_state import cache_home, config_home

Access = Literal["read", "read_tree", "write", "replace"]
"""`read`: read a file or list a folder; `read_tree`: read a folder and everything below it (`git
diff --no-index`); `write`: create or change the file at the path; `replace`: move, remove or
replace what is at the path (a folder with all it holds)."""
READ: Access = "read"
READ_TREE: Access = "read_tree"
WRITE: Access = "write"
REPLACE: Access = "replace"

STATE_FOLDER = ".llm-do"
LOCK_NAME = "bundle.lock"
CASES_FOLDER = "tests"
CASE_SUFFIXES = (".yaml", ".yml")
_STATE = "llm-do's own state (chat threads and the run database hold what tools returned)"
_FOLDER_KEYS = ("cassette", "script")
"""Case keys naming a file relative to the case file."""
_PROJECT_KEYS = ("schema", "predicate")
"""`expect.output` keys naming `FILE.py:NAME` of the project."""


@dataclass(frozen=True)
class _Place:
    key: str
    """The absolute path, normalized and case-folded."""
    what: str
    folder: bool
    """Everything below it counts too."""
    reads: bool
    """Reading it is refused as well."""


class ProtectedPaths:
    """The protected places of one project (and the lock a run was loaded from); `refusal` says
    whether an access is refused and why, in a line for the model."""

    def __init__(self, project: Path, lock: Path | None = None) -> None:
        self.project = os.path.realpath(project)
        self._places: list[_Place] = []
        self._add(os.path.join(self.project, LOCK_NAME), f"the project's lock ({LOCK_NAME})", folder=False, reads=False)
        self._add(os.path.join(self.project, STATE_FOLDER), f"the project's {STATE_FOLDER} folder, {_STATE}", folder=True,
                  reads=True)
        if lock is not None:
            self._add(os.path.abspath(lock), "the lock this run was loaded from", folder=False, reads=False)
            self._add(os.path.join(os.path.abspath(lock.parent), STATE_FOLDER), f"the {STATE_FOLDER} folder beside the "
                      f"run's lock, {_STATE}", folder=True, reads=True)
        for home, what in ((cache_home(), "llm-do's cache folder"),
                           (config_home(), "llm-do's configuration folder (it holds the key that signs chat threads)")):
            if home is not None:
                self._add(os.path.abspath(home), what, folder=True, reads=True)
        self._tests = _TestFiles(Path(self.project))

    def _add(self, path: str, what: str, *, folder: bool, reads: bool) -> None:
        for form in dict.fromkeys((os.path.normpath(path), os.path.realpath(path))):
            self._places.append(_Place(_key(form), what, folder, reads))

    def refusal(self, root: Path | str, path: Path | str, access: Access, shown: str | None = None) -> str | None:
        """Why `access` to `path` (relative to the toolset's directory `root`, or absolute) is
        refused, or None. `shown`: the path as the model wrote it, for the message."""
        real_root = os.path.realpath(root)
        lexical = os.path.normpath(os.path.join(real_root, path))
        for candidate in dict.fromkeys((lexical, os.path.realpath(lexical))):
            why = self._why(real_root, candidate, access)
            if why is not None:
                name = shown if shown is not None else str(path)
                verb = "read or change" if why[1] else "change, move or remove"
                return f"{name!r} {why[0]}, which no tool may {verb}"
        return None

    def _why(self, root: str, path: str, access: Access) -> tuple[str, bool] | None:
        """(what the path is, whether reading it is refused too) when refused."""
        key = _key(path)
        below = _parts_below(root, path)
        if any(part.casefold() == STATE_FOLDER for part in below):
            where = "is a" if below[-1].casefold() == STATE_FOLDER else "is in a"
            return f"{where} {STATE_FOLDER} folder, {_STATE}", True
        reading = access in (READ, READ_TREE)
        for place in self._places:
            inside = key == place.key or (place.folder and key.startswith(place.key + os.sep))
            if inside and (not reading or place.reads):
                return f"is {'in ' if key != place.key else ''}{place.what}", place.reads
        if reading:
            held = next((p for p in self._places if p.reads and p.key.startswith(key + os.sep)), None)
            return (f"holds {held.what}", True) if access == READ_TREE and held is not None else None
        if below and below[-1].casefold() == LOCK_NAME:
            return f"is a lock ({LOCK_NAME})", False
        what = self._tests.describe(path)
        if what is not None:
            return f"is {what}", False
        if access == REPLACE:
            for place in self._places:
                if place.key.startswith(key + os.sep):
                    return f"holds {place.what}", False
            test_file = self._tests.held_below(path)
            if test_file is not None:
                return f"holds {test_file}", False
        return None

    def folders_below(self, directory: str) -> list[str]:
        """The protected folders whose contents no listing below `directory` (resolved) may show,
        as their real paths (case-folded): what `list_files` and grep's recursion skip."""
        prefix = _key(directory) + os.sep
        return sorted({p.key for p in self._places if p.folder and p.reads and p.key.startswith(prefix)})


def _key(path: str) -> str:
    return os.path.normpath(path).casefold()


def _parts_below(root: str, path: str) -> tuple[str, ...]:
    """The names of `path` below `root` (both absolute); () when it is not below."""
    try:
        rel = os.path.relpath(path, root)
    except ValueError:  # another drive (Windows)
        return ()
    if rel == os.curdir or rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return ()
    return tuple(rel.split(os.sep))


class _TestFiles:
    """The files `llm-do test` reads, found lazily: the fixed ones by name, the ones the cases name
    by reading the case files, and only when a path's name occurs in one of them."""

    def __init__(self, project: Path) -> None:
        self.folder = os.path.join(str(project), CASES_FOLDER)
        self.project = str(project)
        self._stamp: tuple[Any, ...] | None = None
        self._texts: list[str] = []
        self._named: dict[str, str] | None = None

    def describe(self, path: str) -> str | None:
        """What `path` is to `llm-do test`, or None when it reads nothing there."""
        key = _key(path)
        folder = _key(self.folder)
        if os.path.dirname(key) == folder and key.endswith(CASE_SUFFIXES):
            return f"a test case file of the project ({CASES_FOLDER}/*.yaml, read by llm-do test)"
        if key == _key(os.path.join(self.folder, "redact.txt")):
            return "the redaction patterns of the project's cassettes (read by llm-do test and --record)"
        if key == _key(os.path.join(self.folder, "evals")) or key.startswith(_key(os.path.join(self.folder, "evals")) + os.sep):
            return "in the eval reports of the project (written by llm-do test --live)"
        named = self._named_files(os.path.basename(key))
        return named.get(key) if named else None

    def held_below(self, path: str) -> str | None:
        """A file `llm-do test` reads that lies below the folder `path`, described; None."""
        prefix = _key(path) + os.sep
        if (_key(self.folder) + os.sep).startswith(prefix) and (
                self._case_files() or os.path.exists(os.path.join(self.folder, "redact.txt"))
                or os.path.isdir(os.path.join(self.folder, "evals"))):
            return f"the project's test cases ({CASES_FOLDER}/)"
        if not os.path.isdir(path):
            return None
        named = self._named_files(os.path.basename(_key(path))) or {}
        return next((what for key, what in sorted(named.items()) if key.startswith(prefix)), None)

    def _case_files(self) -> list[str]:
        try:
            names = os.listdir(self.folder)
        except OSError:
            return []
        return sorted(os.path.join(self.folder, n) for n in names if n.casefold().endswith(CASE_SUFFIXES))

    def _named_files(self, name: str) -> dict[str, str] | None:
        """The files the cases name (key -> what it is), when `name` may be one of them: its name
        is in a case file's text (or a text has an escape that could spell it); None otherwise."""
        files = self._case_files()
        stamp = tuple(_stat(f) for f in files)
        if stamp != self._stamp:
            self._stamp, self._named = stamp, None
            self._texts = [_read(f).casefold() for f in files]
        if not any(name in text or "\\" in text for text in self._texts):
            return None
        if self._named is None:
            self._named = {}
            for file in files:
                self._named.update(_named_in(file, self.project))
        return self._named


def _stat(path: str) -> tuple[Any, ...]:
    try:
        st = os.stat(path)
    except OSError:
        return (path, None)
    return (path, st.st_mtime_ns, st.st_size, st.st_ino)


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8-sig", errors="replace") as f:
            return f.read(4_000_000)
    except OSError:
        return ""


def _named_in(case_file: str, project: str) -> dict[str, str]:
    """The files one case file names (normalized and resolved, case-folded) -> what each is. A
    file that is no valid YAML names nothing (`llm-do test` refuses it, reading nothing it names)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(_read(case_file), Loader=loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError:
        return {}
    shown = os.path.relpath(case_file, project).replace(os.sep, "/")
    out: dict[str, str] = {}
    for key, value, base in _references(data, os.path.dirname(case_file), project):
        what = f"a {key} file that the test cases of {shown} read"
        path = os.path.join(base, value)
        for form in (os.path.normpath(path), os.path.realpath(path)):
            out[_key(form)] = what
    return out


def _references(data: Any, folder: str, project: str) -> Iterator[tuple[str, str, str]]:
    """(key, file, the folder it is relative to) for every file the cases name."""
    cases = data.get("cases") if isinstance(data, dict) else None
    for case in cases if isinstance(cases, list) else ():
        if not isinstance(case, dict):
            continue
        for key in _FOLDER_KEYS:
            if isinstance(case.get(key), str) and case[key]:
                yield key, case[key], folder
        expect = case.get("expect")
        output = expect.get("output") if isinstance(expect, dict) else None
        for key in _PROJECT_KEYS if isinstance(output, dict) else ():
            ref = output.get(key)  # type: ignore[union-attr]
            if isinstance(ref, str) and ":" in ref:
                yield key, ref.rpartition(":")[0], project


@lru_cache(maxsize=32)
def _cached(project: str, lock: str | None, homes: tuple[str | None, str | None]) -> ProtectedPaths:
    return ProtectedPaths(Path(project), Path(lock) if lock is not None else None)


def protected_paths(project: Path, lock: Path | None = None) -> ProtectedPaths:
    """The protected places of the project at `project` and the run's `lock`, made once per
    process for each (the user's folders as the environment names them now)."""
    cache, config = cache_home(), config_home()
    homes = (str(cache) if cache is not None else None, str(config) if config is not None else None)
    return _cached(str(project), str(lock) if lock is not None else None, homes)

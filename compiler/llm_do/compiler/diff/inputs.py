"""Where `capabilities` and `diff` get a bundle document from: a bundle.lock, a project directory
(compiled in memory; `diff` also compares a bundle.lock in it with that build: `diff.committed_lock`),
or `git:REV[:PATH]`, the project as committed at REV, exported to a temporary directory with `git
archive` (the working tree is never touched), or the lock file PATH (`git:main:bundle.lock`) as
committed at REV.

Every failure is a `BundleInputProblem` with one line saying what and where; a project with errors is
a `ProjectHasErrors` carrying the compile result, so the caller can print its diagnostics.
"""

from __future__ import annotations

import json
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from io import BytesIO
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from llm_do.bundle import reader
from llm_do.bundle.errors import BundleRefused, InputProblem, LlmDoError

if TYPE_CHECKING:
    from ..pipeline import CompileResult
    from ..stages.resolved import ResolvedProject

GIT_PREFIX = "git:"
LOCK_SUFFIX = ".lock"


class BundleInputProblem(InputProblem):
    """An input that names no bundle or project; the message is one line."""


class ProjectHasErrors(LlmDoError):
    """The project compiles with errors, so it has no bundle to read; `result` carries the diagnostics."""

    def __init__(self, label: str, result: CompileResult, files_as: str | None = None) -> None:
        super().__init__(f"{label}: the project has errors, so it cannot be compared; run `llm-do lint` on it")
        self.label = label
        self.result = result
        self.files_as = files_as
        """How to name its files when they are not where a reader can find them (`git:REV:PATH/`)."""


def read_lock(path: Path, *, any_format: bool = False) -> dict[str, Any]:
    """A verified bundle document: digest, canonical form and format version, as `exec` checks
    them (`llm_do.bundle.reader.verify`; not its Python sources: reading what a bundle allows runs
    none of them). `any_format`: a sealed lock of another format too (`diff` names both)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BundleInputProblem(f"{path}: cannot read: {exc.strerror}") from None
    return lock_document(data, path, any_format=any_format)


def lock_document(data: bytes, path: Path, *, any_format: bool = False) -> dict[str, Any]:
    """`read_lock` of bytes read already (`path` names them in messages)."""
    try:
        (reader.verify_sealed if any_format else reader.verify)(data, path)
    except BundleRefused as exc:
        raise BundleInputProblem(str(exc)) from None
    doc: dict[str, Any] = json.loads(data)
    return doc


def compile_document(project: Path, label: str, *, import_python: bool, cache: bool = True,
                     files_as: str | None = None, committed: bool = False) -> dict[str, Any]:
    """The bundle document of the project at `project`; with `files_as`, its files are named that
    way (`git:REV:PATH/`) in messages instead of by a place on disk; with `committed` (`diff`), what
    its `bundle.lock`, if it has one that is not the build of its sources, holds instead
    (`diff.committed_lock`)."""
    from ..pipeline import compile_project
    from ..stages.load import ProjectNotFound

    def named(text: str) -> str:
        return text.replace(f"{project}/", files_as).replace(str(project), files_as.rstrip("/:")) if files_as else text

    try:
        result = compile_project(project, import_python=import_python, cache=cache)
    except ProjectNotFound as exc:
        raise BundleInputProblem(named(f"{label}: {exc}")) from None
    except OSError as exc:
        raise BundleInputProblem(named(f"{label}: {exc.filename or project}: {exc.strerror}")) from None
    if result.bundle is None:
        raise ProjectHasErrors(label, result, files_as)
    doc: dict[str, Any] = json.loads(result.bundle)
    if result.resolved is not None:
        from .positions import POSITIONS_KEY, positions_of

        doc[POSITIONS_KEY] = positions_of(result.resolved)
    if not import_python and result.resolved is not None:
        from .unread_sides import UNREAD_KEY

        doc[UNREAD_KEY] = _not_read(result.resolved)
    if committed:
        from .committed_lock import COMMITTED_LOCK_KEY, committed_lock

        found = committed_lock(result.loaded.root, result.bundle, doc, import_python=import_python)
        if found is not None:
            doc[COMMITTED_LOCK_KEY] = found
    return doc


def _not_read(resolved: ResolvedProject) -> dict[str, Any]:
    """What the front matter and project.json say about what the text did not show (`unread_sides.UNREAD_KEY`)."""
    workers = resolved.workers.items()
    return {
        "workers": {name: sorted(w.unknown_names) for name, w in workers if w.unknown_names},
        "unresolved": {name: w.unresolved for name, w in workers if w.unresolved},
        "rules": {name: [[r.target, " ".join(r.text.split())] for r in w.rules] for name, w in workers if w.rules},
        "allowed_tools": {name: s.allowed_tools for name, s in resolved.manifest.mcp_servers.items()
                          if not s.opaque and (resolved.mcp_servers.get(name) is None or resolved.mcp_servers[name].tools is None)},
        "labels": {name: {"labels": s.labels, "tool_labels": s.tool_labels} for name, s in resolved.manifest.mcp_servers.items()
                   if not s.opaque and (resolved.mcp_servers.get(name) is None or resolved.mcp_servers[name].tools is None)},
        "modules": sorted(m.file for m in resolved.facts.modules.values() if not m.complete),
        "python": {rel: _syntax_hash(f.text) for rel, f in sorted(resolved.loaded.sources.files.items()) if f.kind == "python"},
    }


def _syntax_hash(text: str) -> str | None:
    """A Python file's syntax tree, docstrings included, without positions: equal for two texts
    that differ only in comments and layout, which change nothing its import does. None when it
    does not parse (its text then counts)."""
    import ast

    from ..code.module_code import digest, dump

    try:
        return digest(dump(ast.parse(text)))
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def load_document(spec: str, *, import_python: bool = True, cache: bool = True, any_format: bool = False,
                  committed: bool = False) -> dict[str, Any]:
    """The bundle document SPEC names: `git:REV[:PATH]` (PATH a project, or a `.lock` file as
    committed at REV), a `.lock` file, or a project. A `git:` side never takes introspection from
    the cache. `committed`: see `compile_document`."""
    if spec.startswith(GIT_PREFIX):
        committed_lock = git_file(spec, LOCK_SUFFIX)
        if committed_lock is not None:
            return lock_document(committed_lock, Path(spec), any_format=any_format)
        with git_export(spec) as (project, files_as):
            return compile_document(project, spec, import_python=import_python, cache=False, files_as=files_as,
                                    committed=committed)
    path = Path(spec)
    if path.is_file() and path.suffix == LOCK_SUFFIX:
        return read_lock(path, any_format=any_format)
    if not path.exists():
        raise BundleInputProblem(f"{spec}: no such file or directory")
    return compile_document(path, spec, import_python=import_python, cache=cache, committed=committed)


def _git(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False)
    except OSError as exc:
        raise BundleInputProblem(f"git: cannot run: {exc.strerror}") from None


def _first_line(data: bytes) -> str:
    text = data.decode("utf-8", "replace").strip()
    return text.splitlines()[0] if text else "failed"


def _git_place(spec: str) -> tuple[Path, str, str, str]:
    """`git:REV[:PATH]` resolved: the repository's root, REV, its commit and PATH (relative to the
    root; by default the current directory's place in it)."""
    rev, _, sub = spec[len(GIT_PREFIX):].partition(":")
    if not rev:
        raise BundleInputProblem(f"{spec}: no revision; write git:REV or git:REV:PATH")
    top = _git(["rev-parse", "--show-toplevel"])
    if top.returncode != 0:
        raise BundleInputProblem(f"{spec}: the current directory is not in a git repository")
    root = Path(top.stdout.decode().strip())
    if not sub:
        sub = _git(["rev-parse", "--show-prefix"]).stdout.decode().strip()
    sub = PurePosixPath(sub.strip("/") or ".").as_posix()
    if sub.startswith("../") or sub == ".." or PurePosixPath(sub).is_absolute():
        raise BundleInputProblem(f"{spec}: PATH must lie inside the repository")
    commit = _git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], cwd=root)
    if commit.returncode != 0:
        raise BundleInputProblem(f"{spec}: '{rev}' is not a commit of the repository at {root}")
    return root, rev, commit.stdout.decode().strip(), sub


def git_file(spec: str, suffix: str) -> bytes | None:
    """The bytes of the file `git:REV:PATH` names, when PATH ends with `suffix` (a `.lock`); None
    for any other PATH (a project). A PATH that is no file at REV is an input problem."""
    if not spec[len(GIT_PREFIX):].partition(":")[2].endswith(suffix):
        return None
    root, rev, sha, sub = _git_place(spec)
    if _git(["cat-file", "-t", f"{sha}:{sub}"], cwd=root).stdout.strip() != b"blob":
        raise BundleInputProblem(f"{spec}: '{sub}' is not a file at {rev}")
    return _git(["cat-file", "blob", f"{sha}:{sub}"], cwd=root).stdout


@contextmanager
def git_export(spec: str) -> Iterator[tuple[Path, str]]:
    """`git:REV[:PATH]` exported to a temporary directory, and how to name its files (`git:REV:PATH/`);
    PATH is relative to the repository root and defaults to the current directory's place in it.
    A link in the tree that points out of it (absolute, or climbing out) is refused, as the working
    tree's loader refuses it (F002), rather than followed."""
    root, rev, sha, sub = _git_place(spec)
    args = ["archive", "--format=tar", sha] + ([] if sub == "." else ["--", sub])
    archive = _git(args, cwd=root)
    if archive.returncode != 0:
        raise BundleInputProblem(f"{spec}: '{sub}' does not exist at {rev} ({_first_line(archive.stderr)})")
    with tempfile.TemporaryDirectory(prefix="llm-do-git-") as tmp:
        with tarfile.open(fileobj=BytesIO(archive.stdout)) as tar:
            try:
                tar.extractall(tmp, filter="data")
            except tarfile.FilterError as exc:
                raise BundleInputProblem(f"{spec}: '{exc.tarinfo.name}' at {rev} {_refusal(exc)}") from None
        project = Path(tmp) / sub
        if not project.is_dir():
            raise BundleInputProblem(f"{spec}: '{sub}' is not a directory at {rev}")
        if not (project / "project.json").is_file() and not any(project.glob("*.worker")) \
                and not any(project.glob("*.agent")):
            raise BundleInputProblem(f"{spec}: '{sub}' is not an llm-do project at {rev} (no project.json or .worker files)")
        yield project, f"git:{rev}:" + ("" if sub == "." else f"{sub}/")


def _refusal(exc: tarfile.FilterError) -> str:
    if isinstance(exc, tarfile.AbsoluteLinkError):
        return "is a link to an absolute path; llm-do reads only what lies in the tree"
    if isinstance(exc, tarfile.LinkOutsideDestinationError):
        return "is a link pointing out of the tree; llm-do reads only what lies in the tree"
    return "cannot be extracted safely (special file, or a path outside the tree)"

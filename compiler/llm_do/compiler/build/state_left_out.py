"""Which of llm-do's state folders a build record may leave out of its listing of the tree.

llm-do writes under the project's `.llm-do/` (chat threads, the run database) after every chat
turn and durable run. A record whose listing held that folder would no longer hold after each
turn, and the next load would compile the project again. A state folder (`state_folders`) is
left out only when nothing the build did could have found anything there, so that no file added
there, removed or renamed can change what a build writes or reports:
- no file the build read or looked for (a template searched in three places, an `include ...
  ignore missing`, a `file()`: `SourceMap.looked_for`), and no file or folder the introspection
  child read or listed (its import checks), lies there;
- no string of project.json or of a worker's front matter can name it: a path part that is its name
  (in any case), or a glob part that matches it (only a part that starts with `.` enters a hidden
  folder, `syntax.project_glob`): worker_files, python_files, toolset paths, references;
- no `flows.paths` key is looked up in the folder that holds it without being found there (F010
  suggests a folder of that folder by its name);
- no folder whose links the flow labels follow lies there, and no link of the tree may lead into
  it (its target names it, leaves the root or is absolute);
- it is a folder or absent (not a file, nor a link).
What the project's Python asks of the tree without opening or listing it (`os.path.exists` at
import) no audit hook hears: the introspection cache answers a compile the same whether or not a
state folder changed, so a record that leaves it out says what a compile would.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Iterator
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llm_do.provenance.build_record import state_folders
from llm_do.provenance.tree_listing import Listing, link_targets

from ..analysis.flows.folders import WILDCARDS, FolderResolver
from ..analysis.flows.labels import normalized_folder
from ..syntax.project_glob import has_magic

if TYPE_CHECKING:
    from ..pipeline import CompileResult

_PATH_PARTS = re.compile(r"[/\\]+")
_WORDS = re.compile(r"[/\\\s'\"(),;=<>|:~]+")
"""What separates paths in a string that is not only a path (an approval rule, a reference)."""


def state_left_out(result: CompileResult, listing: Listing, lock: Path | None) -> list[str]:
    """The state folders of the project (`state_folders`) that the compile `result` could not have
    found anything in, by the rules above; `listing`: the tree as it was before the compile."""
    resolved, manifest = result.resolved, result.loaded.manifest
    searched = _searched(result)
    if resolved is None or manifest is None or searched is None:
        return []
    words = {word for text in _strings([manifest.model_dump(), *(w.parsed.data for w in resolved.workers.values())])
             for word in [*_PATH_PARTS.split(text), *_WORDS.split(text)] if word}
    flows = sorted({normalized_folder(key) for key in manifest.flows.paths})
    return [folder for folder in state_folders(result.loaded.root, lock)
            if _kind_allows(listing, folder) and not any(_under(path, folder) for path in searched)
            and not any(_names(word, posixpath.basename(folder)) for word in words)
            and not any(_misses_in(listing, key, posixpath.dirname(folder)) for key in flows)
            and not _linked_into(listing, folder)]


def _searched(result: CompileResult) -> set[str] | None:
    """Every project path the compile read, looked for or resolved the links of; None when the
    import checks do not decode (nothing is left out then)."""
    sources = result.loaded.sources
    out = {*sources.files, *sources.also_read, *sources.looked_for}
    for checks in result.import_checks or ():
        if not isinstance(checks, dict) or not isinstance(checks.get("project"), dict) \
                or not isinstance(checks.get("listings"), dict):
            return None
        out.update(checks["project"], checks["listings"])
    policy = result.resolved.label_policy if result.resolved is not None else None
    if policy is not None:
        if not isinstance(policy.resolve, FolderResolver):
            return None
        out.update(policy.resolve.folders)
    return out


def _strings(values: Iterable[Any]) -> Iterator[str]:
    """Every string in `values` (JSON-like: keys of mappings too)."""
    pending = list(values)
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            yield value
        elif isinstance(value, dict):
            pending.extend(value.keys())
            pending.extend(value.values())
        elif isinstance(value, (list, tuple, set, frozenset)):
            pending.extend(value)


def _names(word: str, name: str) -> bool:
    """Whether a path part `word` (case-folded) may stand for the hidden folder `name`: the name
    itself, or a glob part that starts with `.` and matches it."""
    return word.casefold() == name.casefold() or (word.startswith(".") and has_magic(word) and fnmatchcase(name, word))


def _under(path: str, folder: str) -> bool:
    """Whether the project path `path` is `folder` or below it, case ignored (a file system may ignore it)."""
    path, folder = posixpath.normpath(path).casefold(), folder.casefold()
    return path == folder or path.startswith(folder + "/")


def _kind_allows(listing: Listing, folder: str) -> bool:
    """The folder is one of the listing, or nothing of that name is (a file or a link: kept)."""
    parent, name = posixpath.split(folder)
    return not any(entry == name or entry.startswith(name + "@") for entry in listing.get(parent, []))


def _misses_in(listing: Listing, key: str, parent: str) -> bool:
    """Whether looking up the `flows.paths` key (`analysis.flows.folders.unmatched_folders`)
    reaches `parent` and does not find its next name there: the folders of `parent` are then
    compared with that name."""
    if key == "." or WILDCARDS & set(key):
        return False
    at = ""
    for segment in key.split("/"):
        found = segment in {entry[:-1] for entry in listing.get(at, []) if entry.endswith("/")}
        if not found:
            return at == parent
        at = posixpath.join(at, segment) if at else segment
    return False


def _linked_into(listing: Listing, folder: str) -> bool:
    """Whether a link of the tree may lead into `folder` (a chain of links outside may come back)."""
    return any(_may_enter(at, target, folder) for at, entries in listing.items() for entry in entries
               for target in link_targets(entry))


def _may_enter(at: str, target: str, folder: str) -> bool:
    """Whether resolving `target` from the folder `at` is absolute, leaves the root or passes
    through `folder`: every folder the kernel walks counts, `..` taken in turn (`a/../b` passes
    through `a`, which `normpath` drops)."""
    if target.startswith("/"):
        return True
    parts = [p for p in at.split("/") if p]
    for part in target.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return True  # above the root
            parts.pop()
            continue
        parts.append(part)
        if _under("/".join(parts), folder):
            return True
    return False

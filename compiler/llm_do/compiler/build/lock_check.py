"""`llm-do build --check`: is the lock exactly what `llm-do build` would write now?

The digest is a checksum, not a signature: anyone can edit a lock and recompute it. So the check
builds the bundle in memory and compares bytes; when they differ it compares the two documents
to say what differs (a source, a worker or toolset node and which of its fields, a header field),
so a pull request that edits bundle.lock by hand fails in CI with a message naming the node.

A run asks the same question of the lock it is about to run, where the project is beside it
(`compare_with_build`, when no build record answers: `llm_do.provenance.lock_sources`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from llm_do.bundle.canonical import DIGEST_KEY, HASH_KEY, DigestProblem, node_hash, source_hash, verify_digest
from llm_do.bundle.errors import REBUILD
from llm_do.provenance.build_record import build_records, inside_root, record, tree_before_build
from llm_do.provenance.lock_sources import VERSION_FIELDS, Comparison

from ..cache.packs import user_packs
from ..pipeline import CompileResult, compile_project
from ..stages.load import ProjectNotFound, find_project
from ..syntax.sources import Unreadable, read_regular_file
from .collection_pause import collection_paused

if TYPE_CHECKING:
    from ..facts.answers import McpServerFact

NODE_SECTIONS = {"workers": "worker", "toolsets": "toolset"}
"""Sections whose members are nodes with their own hash, and what one member is called."""
_SHOWN = 60


@dataclass
class LockStatus:
    lock: Path
    result: CompileResult
    """The build of the project now (its diagnostics, and the bytes `build` would write)."""
    differences: list[str] = field(default_factory=list)

    @property
    def current(self) -> bool:
        return not self.differences


def check_lock(project_path: Path, lock: Path | None = None, *, cache: bool = True) -> LockStatus:
    """Build `project_path` in memory and compare with the lock's bytes. Writes nothing.

    Raises `ProjectNotFound` when the path names no project.
    """
    if lock is None:
        lock = find_project(project_path)[0] / "bundle.lock"
    result = compile_recorded(project_path, lock, cache=cache)
    status = LockStatus(lock, result)
    try:
        data = read_regular_file(str(lock), limit=None)
    except FileNotFoundError:
        status.differences.append(f"{lock.name} does not exist")
        return status
    except Unreadable as exc:
        status.differences.append(f"{lock.name} is {exc}")
        return status
    status.differences.extend(_build_differences(result, data, lock.name))
    return status


def compare_with_build(project_path: Path, lock: Path, data: bytes, *, cache: bool = True) -> Comparison:
    """The lock bytes `data` (as a run read them from `lock`) against what a build of the project at
    `project_path` writes now: what a run asks when no build record answers
    (`llm_do.provenance.lock_sources`). A lock that differs only in the llm-do or the
    distributions that built it (`VERSION_FIELDS`) is their build, with a note."""
    try:
        result = compile_recorded(project_path, lock, cache=cache, listed=_servers_as_locked(data))
    except ProjectNotFound as exc:
        return Comparison((f"the project cannot be built: {exc}",))
    except OSError as exc:
        return Comparison((f"the project cannot be read: {exc.filename or project_path}: {exc.strerror}",))
    differences = _build_differences(result, data, lock.name)
    if differences and result.bundle is not None:
        fields = _only_version_fields(data, result.bundle)
        if fields:
            return Comparison(note=f"note: {lock} differs from a build now only in {' and '.join(fields)} (built by "
                                   f"another llm-do or other distributions); {REBUILD} to update it")
    return Comparison(tuple(differences))


def _servers_as_locked(data: bytes) -> dict[str, McpServerFact]:
    """The tools of the lock's MCP servers as it lists them, for a build that starts none: the run
    checks each server's live tools against the lock as it starts it (`llm_do.runtime.toolsets.mcp`),
    and a server not required starts only when used."""
    from ..facts.answers import McpServerFact, McpToolFact

    try:
        toolsets = json.loads(data).get("toolsets") or {}
    except (ValueError, UnicodeDecodeError, AttributeError):
        return {}
    out = {}
    for node in toolsets.values() if isinstance(toolsets, dict) else ():
        if not isinstance(node, dict) or node.get("kind") != "mcp" or node.get("opaque") or not isinstance(node.get("tools"), dict):
            continue
        skip = len(node["prefix"]) + 1 if node.get("prefix") else 0
        out[str(node.get("name"))] = McpServerFact(name=str(node.get("name")), tools=[
            McpToolFact(name=exposed[skip:], description=tool.get("description"), input_schema=tool.get("parameters") or {})
            for exposed, tool in node["tools"].items() if isinstance(tool, dict)])
    return out


def _build_differences(result: CompileResult, data: bytes, name: str) -> list[str]:
    """What differs between the lock bytes `data` and the build `result`, one line each."""
    if result.bundle is None:
        return ["the project has errors, so `llm-do build` would write no lock", *sources_on_disk(result.loaded.root, data)]
    if data == result.bundle:
        return []
    with collection_paused():  # two documents of every node, parsed: nothing to collect
        found = lock_differences(data, result.bundle)
    return found or [f"{name} differs from what `llm-do build` writes"]


def _only_version_fields(old: bytes, new: bytes) -> list[str]:
    """The `VERSION_FIELDS` two sealed locks differ in, when they differ in nothing else; else []."""
    try:
        verify_digest(old)
        before, after = json.loads(old), json.loads(new)
    except (DigestProblem, ValueError, UnicodeDecodeError):
        return []
    if not isinstance(before, dict):
        return []
    rest = {DIGEST_KEY, *VERSION_FIELDS}
    if {k: v for k, v in before.items() if k not in rest} != {k: v for k, v in after.items() if k not in rest}:
        return []
    return [key for key in VERSION_FIELDS if before.get(key) != after.get(key)]


def compile_recorded(project_path: Path, lock: Path, *, cache: bool = True,
                     listed: Mapping[str, McpServerFact] | None = None) -> CompileResult:
    """`compile_project` for the lock at `lock`, with a build record (`build_record`) of what the
    bytes depended on, so the next `build --check` or `build` of the unchanged project compiles
    nothing (`listed`: MCP servers taken as listed, `compile_project`). Raises `ProjectNotFound` when
    the path names no project."""
    records = build_records() if cache else None
    listing = tree_before_build(find_project(project_path)[0], lock) if records is not None else None
    with collection_paused():
        result = compile_project(project_path, lock_dir=lock.parent, cache=cache, listed=listed)
    inputs = result.recorded_inputs()
    if records is None or listing is None or result.bundle is None or inputs is None:
        return result
    files, import_checks = inputs
    if inside_root(result.loaded.root, lock) in files:
        return result  # `build` refuses to write over a source
    from .state_left_out import state_left_out

    record(records, result.loaded.root, lock, result.bundle, listing=listing, files=files,
           import_checks=import_checks, diagnostics=[d.as_json() for d in result.diagnostics],
           left_out=state_left_out(result, listing, lock), workers=len(result.resolved.workers) if result.resolved else 0)
    packs = user_packs()
    manifest, sources = result.loaded.manifest, result.loaded.sources
    if packs is not None and result.resolved is not None and manifest is not None:
        from .local_edits import keep_workers  # only with the user's cache: not for LLM_DO_NO_CACHE

        keep_workers(packs, result.loaded.root, lock, result.bundle, (w.parsed for w in result.resolved.workers.values()),
                    sources.files, manifest.vars)
    return result


def lock_differences(old: bytes, new: bytes) -> list[str]:
    """What differs between the lock `old` and the bundle `new` a build gives now, one line each."""
    out: list[str] = []
    try:
        verify_digest(old)
    except DigestProblem as exc:
        out.append(f"the lock is not sealed by llm-do: {exc}")
    try:
        before = json.loads(old)
    except (ValueError, UnicodeDecodeError) as exc:
        return [*out, f"the lock is not JSON: {exc}"]
    after = json.loads(new)
    if not isinstance(before, dict):
        return [*out, "the lock is not a JSON object"]
    for key in sorted(set(before) | set(after)):
        if key == DIGEST_KEY or before.get(key) == after.get(key):
            continue
        if key == "sources":
            out.extend(_source_differences(_mapping(before.get(key)), after[key]))
        elif key in NODE_SECTIONS:
            out.extend(_node_differences(NODE_SECTIONS[key], _mapping(before.get(key)), after.get(key) or {}))
        elif key == "packages":
            out.extend(_package_differences(_mapping(before.get(key)), after.get(key) or {}))
        else:
            out.append(f"{key}: the lock has {_short(before.get(key))}, a build now gives {_short(after.get(key))}")
    if not out:
        out.append("the lock is not in the canonical form `llm-do build` writes")
    return out


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 3] + "..."


def _source_differences(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    out = []
    for path in sorted(set(before) | set(after)):
        if path not in before:
            out.append(f"added: {path}")
        elif path not in after:
            out.append(f"no longer a source of the project: {path}")
        elif _mapping(before[path]).get("sha256") != after[path].get("sha256"):
            out.append(f"changed: {path}")
        elif before[path] != after[path]:
            out.append(f"source entry of {path} differs")
    return out


def sources_on_disk(root: Path, lock: bytes) -> list[str]:
    """The lock's sources that changed on disk (read without waiting on a pipe): what can still be
    said when the build fails, and what `diff --no-import` says of a committed lock."""
    try:
        recorded = _mapping(json.loads(lock).get("sources"))
    except (ValueError, UnicodeDecodeError, AttributeError):
        return []
    out = []
    for path, entry in sorted(recorded.items()):
        try:
            actual = source_hash(read_regular_file(str(root / path)))
        except OSError:
            out.append(f"deleted: {path}")
            continue
        except Unreadable:
            out.append(f"changed: {path}")
            continue
        if actual != _mapping(entry).get("sha256"):
            out.append(f"changed: {path}")
    return out


def _node_differences(kind: str, before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    out = []
    for name in sorted(set(before) | set(after)):
        if name not in before:
            out.append(f"{kind} '{name}' is missing from the lock")
        elif name not in after:
            out.append(f"{kind} '{name}' is in the lock but not in the project")
        elif before[name] != after[name]:
            old, new = _mapping(before[name]), after[name]
            fields = sorted(k for k in set(old) | set(new) if k != HASH_KEY and old.get(k) != new.get(k))
            line = f"{kind} '{name}' differs" + (f" in {', '.join(fields)}" if fields else "")
            if old.get(HASH_KEY) != node_hash(old):
                line += " (edited by hand: its hash does not match its content)"
            out.append(line)
    return out


def _package_differences(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    out = []
    for name in sorted(set(before) | set(after)):
        if before.get(name) != after.get(name):
            out.append(f"package {name} is {after.get(name) or 'not used'} (the lock has {before.get(name) or 'none'})")
    return out


def main() -> None:
    """`python -m llm_do.compiler.build.lock_check PROJECT LOCK`, the lock's bytes on stdin: the comparison
    (`compare_with_build`) as one JSON line on stdout. How the Python API, which never imports the
    compiler, asks when no build record answers (`llm_do.runtime.built_lock`)."""
    import sys

    root, lock = (Path(arg) for arg in sys.argv[1:3])
    print(json.dumps(compare_with_build(root, lock, sys.stdin.buffer.read()).as_json()))


if __name__ == "__main__":
    main()

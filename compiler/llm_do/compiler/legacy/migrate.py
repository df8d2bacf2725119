"""Rewriting an `.agent`-era project to `.worker` files, as a plan of file writes.

Front matter is edited as text, so comments and layout survive: `input_model_ref` becomes
`schema_in_ref`, `entry: true` moves to project.json, and workers on a call cycle get
`recursive: true` (the old format could not say it). project.json is rewritten as JSON.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from llm_do.bundle.regular_files import IrregularFile, read_regular_file

from ..codes import Rule
from ..syntax.front_matter import split_front_matter
from .upgrade import LEGACY_WORKER_SUFFIX, MANIFEST_REMOVED, already_done

if TYPE_CHECKING:
    from ..stages.resolved import ResolvedProject

_KEY = re.compile(r"^(?P<key>[A-Za-z_][A-Za-z0-9_]*)\s*:(?P<rest>.*)$")

V = TypeVar("V")


@dataclass
class Migration:
    writes: dict[str, str] = field(default_factory=dict)
    deletes: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.writes and not self.deletes


def migrated_name(path: str) -> str:
    return path[: -len(LEGACY_WORKER_SUFFIX)] + ".worker" if path.endswith(LEGACY_WORKER_SUFFIX) else path


def migrate_front_matter(text: str, *, recursive: bool) -> tuple[str, bool]:
    """The worker text with today's keys; and whether it declared `entry: true`."""
    split = split_front_matter(text)
    if isinstance(split, Rule):
        return text, False
    front, body, _ = split
    lines = front.split("\n")
    out: list[str] = []
    entry = False
    has_recursive = False
    for line in lines:
        m = _KEY.match(line)
        key, rest = (m.group("key"), m.group("rest")) if m else (None, "")
        if key == "input_model_ref":
            line = "schema_in_ref:" + _colon_ref(rest)
        elif key == "entry":
            entry = rest.strip().lower() in ("true", "yes")
            continue
        elif key == "recursive":
            has_recursive = True
        out.append(line)
    while out and not out[-1].strip():
        out.pop()
    if recursive and not has_recursive:
        out.append("recursive: true")
    return "---\n" + "\n".join(out) + "\n---\n" + body, entry


def plan_migration(root: Path, manifest_text: str | None, agent_files: list[str], cyclic: set[str],
                   names: dict[str, str]) -> Migration:
    """`names` maps each .agent path to its worker name; `cyclic` holds the names on call cycles."""
    plan = Migration()
    entry_from_file: str | None = None
    for rel in agent_files:
        try:
            text = read_regular_file(root / rel).decode("utf-8-sig")
        except IrregularFile as exc:
            raise IrregularFile(f"{rel} is {exc}") from None
        new_text, is_entry = migrate_front_matter(text, recursive=names.get(rel) in cyclic)
        if is_entry:
            entry_from_file = names.get(rel)
        plan.writes[migrated_name(rel)] = new_text
        plan.deletes.append(rel)
    if manifest_text is not None:
        data = json.loads(manifest_text)
        if "agent_files" in data:
            data = _renamed(data, "agent_files", "worker_files")
            data["worker_files"] = [migrated_name(p) if not p.endswith("*.agent") else p[: -len(".agent")] + ".worker"
                                    for p in data["worker_files"]]
        entry = data.get("entry")
        if isinstance(entry, dict):
            for old in ("agent", "name"):
                if old in entry and "worker" not in entry:
                    entry = data["entry"] = _renamed(entry, old, "worker")
            if "input" in entry and "args" not in entry:
                entry = data["entry"] = _renamed(entry, "input", "args")
        if entry_from_file and not (isinstance(entry, dict) and entry.get("worker")):
            data.setdefault("entry", {})["worker"] = entry_from_file
        for path, hint in MANIFEST_REMOVED.items():
            parent = data
            for part in path[:-1]:
                parent = parent.get(part) if isinstance(parent, dict) else None
            if isinstance(parent, dict) and path[-1] in parent:
                value = parent.pop(path[-1])
                if why := already_done(path, value):
                    hint = f"already what llm-do does: {why}"
                plan.notes.append(f"removed {'.'.join(map(str, path))}: {hint}")
        plan.writes["project.json"] = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    return plan


def _colon_ref(value: str) -> str:
    """The `.agent`-era `module.Class` form as `module:Class` (a `path.py:Class` stays as it is)."""
    text = value.strip().strip("'\"")
    if ":" in text or "." not in text or text.endswith(".py"):
        return value
    module, _, qualname = text.rpartition(".")
    return f" {module}:{qualname}"


def _renamed(mapping: dict[str, V], old: str, new: str) -> dict[str, V]:
    """`mapping` with key `old` renamed to `new` in place of it: the file keeps its order."""
    return {(new if k == old else k): v for k, v in mapping.items()}


def cyclic_workers(project: ResolvedProject | None) -> set[str]:
    """Names of the workers on a call cycle (self-calls included): they need `recursive: true`."""
    if project is None:
        return set()
    from ..analysis.call_graph import call_graph

    return set().union(*call_graph(project).cycles())

"""What a bundle document compiled with `--no-import` could not see, and the changes it therefore
cannot judge (spec/diff.md, "Without import").

Reading Python with `ast` sees literal `TOOLS` lists and each tool's `def`, never a schema class's
fields, a tool list built by code, or an MCP server's tools (servers are not started). Pure: such
documents in, what is unknown out, so `capabilities` shows it as unknown and `diff` reports a
changed source it could not interpret as `changed ... (not evaluated without import)` instead of
"no changes".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from llm_do.bundle.views import used_toolsets

NOT_EVALUATED = "not evaluated without import"
UNREAD_KEY = "not_read"
"""Key of a `--no-import` document (in memory only, never in a lock): `workers`, worker -> the names
in its front matter the text did not show (tools built by code, servers not started); `modules`,
the Python files whose exports are built by code."""
UnreadKind = Literal["mcp", "names", "schema", "code", "module"]


@dataclass(frozen=True)
class Unread:
    """One thing the document does not know."""

    kind: UnreadKind
    """`mcp`: an MCP server's tools (not started); `names`: tools or toolsets a worker lists that
    the text does not show; `schema`: a worker's input or output class; `code`: what a Python file
    builds by code; `module`: what a Python file does when imported (only for a file that differs)."""
    name: str
    """The server, the worker, or the file."""
    file: str
    """The project file it comes from (`project.json` for an MCP server)."""
    workers: tuple[str, ...]
    """The workers that use it directly, by name."""
    names: tuple[str, ...] = ()
    """For `names`: the tool and toolset names."""

    @property
    def subject(self) -> str:
        return {"mcp": f"tools of MCP server {self.name}", "schema": f"schemas of {self.name}",
                "names": f"{', '.join(self.names)} listed by {self.name}", "code": f"tools built by code in {self.name}",
                "module": f"what {self.name} does when imported"}[self.kind]

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "subject": self.subject, "file": self.file, "workers": list(self.workers)}


def unread(doc: dict[str, Any]) -> list[Unread]:
    """What a `--no-import` document leaves unknown, in a stable order."""
    workers: dict[str, Any] = doc.get("workers") or {}
    toolsets: dict[str, Any] = doc.get("toolsets") or {}
    users: dict[str, list[str]] = {}
    for name, node in sorted(workers.items()):
        for use in used_toolsets(node):
            if use.toolset is not None:
                users.setdefault(use.toolset, []).append(name)
    out = [Unread("mcp", name, "project.json", tuple(users.get(name, ())))
           for name, node in sorted(toolsets.items())
           if node.get("kind") == "mcp" and not node.get("opaque") and not node.get("tools")]
    servers = {u.name for u in out}
    not_read = doc.get(UNREAD_KEY) or {}
    for name, names in sorted((not_read.get("workers") or {}).items()):
        if (hidden := sorted(set(names) - servers)) and name in workers:
            out.append(Unread("names", name, workers[name].get("source") or "", (name,), tuple(hidden)))
    for name, node in sorted(workers.items()):
        files = sorted({ref.partition(":")[0] for side in ("input", "output") if (ref := (node.get(side) or {}).get("ref"))})
        out += [Unread("schema", name, file, (name,)) for file in files]
    for file in sorted(not_read.get("modules") or ()):
        module = file.removesuffix(".py").replace("/", ".")
        using = sorted({w for key, node in toolsets.items() if node.get("module") == module for w in users.get(key, ())})
        out.append(Unread("code", file, file, tuple(using)))
    return out


@dataclass(frozen=True)
class UnreadChange:
    """A source that differs where the documents could not interpret it."""

    file: str
    verb: Literal["added", "removed", "changed"]
    affects: tuple[str, ...]
    """What it may change, as subjects (`schemas of writer`, `tools of MCP server srv`)."""
    workers: tuple[str, ...]


def unread_changes(old: dict[str, Any], new: dict[str, Any]) -> list[UnreadChange]:
    """A Python file that differs at all; a worker file or project.json that differs while it
    configures or uses an MCP server that was not started (approvals and `allowed_tools` select
    tools nobody listed)."""
    before_sources, after_sources = old.get("sources") or {}, new.get("sources") or {}
    unknown = list(dict.fromkeys(unread(old) + unread(new)))
    sources = {w: n.get("source") for doc in (old, new) for w, n in (doc.get("workers") or {}).items()}
    out: list[UnreadChange] = []
    for file in sorted(set(before_sources) | set(after_sources)):
        before, after = before_sources.get(file), after_sources.get(file)
        if before is not None and after is not None and before.get("sha256") == after.get("sha256"):
            continue
        verb: Literal["added", "removed", "changed"] = "added" if before is None else "removed" if after is None else "changed"
        if (after or before or {}).get("kind") == "python":
            hits = [u for u in unknown if u.file == file] or [Unread("module", file, file, ())]
        else:
            hits = [u for u in unknown if u.kind in ("mcp", "names")
                    and ((file == "project.json" and u.kind == "mcp") or any(sources.get(w) == file for w in u.workers))]
        if hits:
            workers = tuple(sorted({w for u in hits for w in u.workers}))
            out.append(UnreadChange(file, verb, tuple(dict.fromkeys(u.subject for u in hits)), workers))
    return out

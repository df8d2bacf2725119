"""What a bundle document compiled with `--no-import` could not see, and the changes it therefore
cannot judge (spec/diff.md, "Without import").

Reading Python with `ast` sees literal `TOOLS` lists and each tool's `def`, never a schema class's
fields, a tool list built by code, or an MCP server's tools (servers are not started). Pure: such
a document in, what is unknown out, so `capabilities` shows it as unknown and `diff` says what it
did not compare (`diff.unread` turns the sources that differ into entries).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from llm_do.bundle.views import used_toolsets

NOT_EVALUATED = "not evaluated without import"
UNREAD_KEY = "not_read"
"""Key of a `--no-import` document (in memory only, never in a lock), what the front matter and
project.json say about what the text did not show: `workers`, worker -> the names it lists that
nobody listed (tools built by code, servers not started); `rules`, worker -> its approval rules for
its approval rules as
`[target, text]` (whitespace collapsed), for those on tools one side does not list; `allowed_tools`, server not started -> its `allowed_tools` (null: all); `labels`, server not started
-> its `labels` and `tool_labels` as written (the flow labels of tools nobody listed);
`unresolved`, worker -> the texts of its rules that may match a tool the text does not list (C002);
`modules`, the Python files whose exports are built by code; `python`, each Python source -> the
hash of its syntax tree with docstrings (null: it does not parse), so a file that differs only in
comments and layout is no change."""
UnreadKind = Literal["mcp", "names", "schema", "code", "module", "rules"]


@dataclass(frozen=True)
class Unread:
    """One thing the document does not know."""

    kind: UnreadKind
    """`mcp`: an MCP server's tools (not started); `names`: tools or toolsets a worker lists that
    the text does not show; `schema`: a worker's input or output class; `code`: what a Python file
    builds by code; `module`: what a Python file does when imported (only for a file that differs);
    `rules`: a worker's rules that may match tools the text does not list (C002)."""
    name: str
    """The server, the worker, or the file."""
    file: str
    """The project file it comes from (`project.json` for an MCP server)."""
    workers: tuple[str, ...]
    """The workers that use it directly, by name."""
    names: tuple[str, ...] = ()
    """For `names`: the tool and toolset names; for `rules`, the rules' texts."""

    @property
    def subject(self) -> str:
        return {"mcp": f"tools of MCP server {self.name}", "schema": f"schemas of {self.name}",
                "names": f"{', '.join(self.names)} listed by {self.name}", "code": f"tools built by code in {self.name}",
                "module": f"what {self.name} does when imported",
                "rules": f"{'; '.join(self.names)} of {self.name} (not resolved)"}[self.kind]

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
    for name, rules in sorted((not_read.get("unresolved") or {}).items()):
        if name in workers:
            out.append(Unread("rules", name, workers[name].get("source") or "", (name,), tuple(rules)))
    for name, node in sorted(workers.items()):
        files = sorted({ref.partition(":")[0] for side in ("input", "output") if (ref := (node.get(side) or {}).get("ref"))})
        out += [Unread("schema", name, file, (name,)) for file in files]
    for file in sorted(not_read.get("modules") or ()):
        module = file.removesuffix(".py").replace("/", ".")
        using = sorted({w for key, node in toolsets.items() if node.get("module") == module for w in users.get(key, ())})
        out.append(Unread("code", file, file, tuple(using)))
    return out


def unread_gate(doc: dict[str, Any], worker: str) -> str:
    """The gate a worker most likely applies to the tools the text does not show it (an MCP
    server not started): `allow` when one of its rules for a tool it does not list allows, else
    `ask`, their default (`diff.code` ranks a server's code by who may run it unasked)."""
    listed = set(((doc.get("workers") or {}).get(worker) or {}).get("tools") or {})
    rules = ((doc.get(UNREAD_KEY) or {}).get("rules") or {}).get(worker) or ()
    return "allow" if any(text.startswith("allow ") and target not in listed for target, text in rules) else "ask"

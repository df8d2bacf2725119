"""Where each thing `diff` can report is written, so an entry names the file and line of its cause
(spec/diff.md, "What is a change": `file`, `line`).

A compiled project's document carries them under `POSITIONS_KEY`, in memory only (never in a
lock: a bundle.lock records no positions, and its entries' `line` is null). Keys, each to
`[FILE, LINE]`:

- `worker:W` (its file's first line), `worker:W:KEY` (a front-matter key; `instructions`: the
  body), `tool:W:T` (where W lists or binds T), `rule:W:T` (W's first approval rule for T, else
  `tool:W:T`), `toolset:W:K` (W's `toolsets` entry for the node K), `call:W:C` (W's `calls` entry);
- `project:DOTTED.PATH` (project.json: `entry`, `runtime.approval_mode`, `mcp_servers.S.url`);
- `code:FILE:NAME` (the `def`, `class` or assignment binding NAME at the top of FILE),
  `code:FILE` (its first line).
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..stages.parse import ParsedWorker
    from ..stages.resolved import ResolvedProject

POSITIONS_KEY = "(positions)"
FRONT_KEYS = ("description", "model", "compatible_models", "model_settings", "recursive", "quarantined", "attachments",
              "server_side_tools", "schema_in_ref", "schema_out_ref", "toolsets", "tools", "approvals", "calls")
RUNTIME_KEYS = ("approval_mode", "max_depth", "usage_limits")
SERVER_KEYS = ("command", "args", "env", "url", "headers", "prefix", "required", "opaque", "allowed_tools", "labels", "tool_labels")


def positions_of(resolved: ResolvedProject) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for name, worker in resolved.workers.items():
        out |= _worker_positions(name, worker.parsed)
        for tool in worker.tools.values():
            out[f"tool:{name}:{tool.name}"] = [tool.at.file, tool.at.line]
            rule = next((r for r in worker.rules if r.targets(tool.name, tool.group)), None)
            out[f"rule:{name}:{tool.name}"] = _at(worker.parsed, "approvals", rule.index) if rule else \
                [tool.at.file, tool.at.line]
        for use in worker.toolsets:
            out.setdefault(f"toolset:{name}:{use.name}", [use.at.file, use.at.line])
        for callee, at in worker.calls.items():
            out[f"call:{name}:{callee}"] = [at.file, at.line]
    out |= _project_positions(resolved)
    loaded = resolved.loaded
    servers = [rel for rel, f in loaded.sources.files.items() if f.kind == "python"]  # also an MCP server's
    for rel in dict.fromkeys([*loaded.python_files, *loaded.directory_python, *resolved.facts.loaded_files, *servers]):
        out |= _code_positions(rel, _python_text(resolved, rel))
    return out


def _at(parsed: ParsedWorker, *path: str | int) -> list[Any]:
    at = parsed.at(*path, key=True)
    return [at.file, at.line]


def _worker_positions(name: str, parsed: ParsedWorker) -> dict[str, list[Any]]:
    out = {f"worker:{name}": [parsed.file, 1], f"worker:{name}:instructions": [parsed.file, parsed.body_line]}
    for key in FRONT_KEYS:
        out[f"worker:{name}:{key}"] = _at(parsed, key) if key in parsed.front.model_fields_set else [parsed.file, 1]
    return out


def _project_positions(resolved: ResolvedProject) -> dict[str, list[Any]]:
    loaded = resolved.loaded
    paths: list[tuple[str, ...]] = [("entry",), ("defaults", "model"), ("defaults", "model_settings")]
    paths += [("runtime", key) for key in RUNTIME_KEYS]
    limits = resolved.manifest.runtime.usage_limits if resolved.manifest.runtime else None
    paths += [("runtime", "usage_limits", key) for key in (limits.model_dump(exclude_none=True) if limits else {})]
    for server in resolved.manifest.mcp_servers:
        paths += [("mcp_servers", server), *(("mcp_servers", server, key) for key in SERVER_KEYS)]
    out = {}
    for path in paths:
        at = loaded.at(*path)
        out["project:" + ".".join(path)] = [at.file, at.line]
    return out


def _python_text(resolved: ResolvedProject, rel: str) -> str | None:
    try:
        return resolved.loaded.sources.read(rel, "python").text
    except (OSError, ValueError):
        return None


def _code_positions(rel: str, text: str | None) -> dict[str, list[Any]]:
    """The top-level names of a module, each at the line of its first binding."""
    out: dict[str, list[Any]] = {f"code:{rel}": [rel, 1]}
    try:
        tree = ast.parse(text or "")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return out
    for stmt in tree.body:
        names: list[str] = []
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names = [stmt.name]
        elif isinstance(stmt, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        for name in names:
            out.setdefault(f"code:{rel}:{name}", [rel, stmt.lineno])
    return out


def position(doc: dict[str, Any], key: str | None) -> list[Any] | None:
    """`[FILE, LINE]` of a part key (`code:tools.py:a,b#2` is where `a` is first bound)."""
    if key is None:
        return None
    table = doc.get(POSITIONS_KEY) or {}
    if key.startswith("code:"):  # its file is known without positions
        file, sep, names = key[5:].partition(":")
        name = names.split(",")[0].split("#")[0]
        found = table.get(f"code:{file}:{name}") if sep and name != "<module>" else table.get(f"code:{file}")
        return found or [file, None]
    return table.get(key)

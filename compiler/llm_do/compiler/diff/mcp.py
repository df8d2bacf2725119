"""`diff`'s MCP server changes: servers added or removed, their connection and settings as
written, their locked tools added, removed, described or given another schema (spec/diff.md, area
`mcp`). A local server's code is compared by `diff.code`, as a Python tool's. Pure.
"""

from __future__ import annotations

from typing import Any

from .change import Change, Verb, text_diff, text_of
from .code import parameter_texts_change
from .schemas import field_changes


def mcp_changes(old: dict[str, Any], new: dict[str, Any]) -> list[Change]:
    """MCP servers added or removed, their connection (command, args, env, url, headers as
    written) or the project files they run changed, their locked tools added, removed or given
    another schema."""
    om = {k: n for k, n in old.items() if n.get("kind") == "mcp"}
    nm = {k: n for k, n in new.items() if n.get("kind") == "mcp"}
    out: list[Change] = []
    for name in sorted(set(nm) - set(om)):
        out.append(Change("medium", "added", "mcp", f"MCP server {name}", None, _connection_text(nm[name]),
                          at=f"project:mcp_servers.{name}"))
    for name in sorted(set(om) - set(nm)):
        out.append(Change("low", "removed", "mcp", f"MCP server {name}", _connection_text(om[name]), None,
                          at=f"project:mcp_servers.{name}"))
    for name in sorted(set(om) & set(nm)):
        before, after = om[name], nm[name]
        if before.get("hash") == after.get("hash"):
            continue
        server_at = f"project:mcp_servers.{name}"
        bs, as_ = before.get("server") or {}, after.get("server") or {}
        for key in ("command", "args", "env", "url", "headers"):
            if bs.get(key) != as_.get(key):
                out.append(Change("medium", "changed", "mcp", f"{key} of MCP server {name}", text_of(bs.get(key)), text_of(as_.get(key)),
                                  at=f"{server_at}.{key}"))
        for key in ("prefix", "required", "opaque"):
            if before.get(key) != after.get(key):
                out.append(Change("low", "changed", "mcp", f"{key} of MCP server {name}", text_of(before.get(key)),
                                  text_of(after.get(key)), at=f"{server_at}.{key}"))
        bf, af = before.get("sources") or {}, after.get("sources") or {}
        if before.get("code") and after.get("code"):
            bf = af = {}  # its code is compared as a Python tool's (`diff.code`): a comment changes nothing
        for rel in sorted(set(bf) | set(af)):  # the project files the server runs, from a lock made before `code`
            if bf.get(rel) != af.get(rel):
                verb: Verb = "added" if rel not in bf else "removed" if rel not in af else "changed"
                out.append(Change("medium", verb, "mcp", f"code of MCP server {name}: {rel}",
                                  bf.get(rel), af.get(rel), at=f"code:{rel}"))
        bt, at = before.get("tools") or {}, after.get("tools") or {}
        for tool in sorted(set(at) - set(bt)):
            out.append(Change("medium", "added", "mcp", f"tool {tool} of MCP server {name}", None, at[tool].get("description"),
                              at=server_at))
        for tool in sorted(set(bt) - set(at)):
            out.append(Change("low", "removed", "mcp", f"tool {tool} of MCP server {name}", bt[tool].get("description"), None,
                              at=server_at))
        for tool in sorted(set(bt) & set(at)):
            if bt[tool].get("description") != at[tool].get("description"):
                out.append(Change("medium", "changed", "instructions", f"description of tool {tool} of MCP server {name}",
                                  note="read by the model", detail=text_diff(bt[tool].get("description") or "",
                                                                            at[tool].get("description") or ""),
                                  at=server_at))
            if bt[tool].get("parameters") != at[tool].get("parameters"):
                fields = field_changes(bt[tool].get("parameters") or {}, at[tool].get("parameters") or {})
                breaking = any(f.breaking for f in fields)
                texts = parameter_texts_change(f"tool {tool} of MCP server {name}", bt[tool].get("parameters"),
                                               at[tool].get("parameters"), at=server_at)
                out += [texts] if texts is not None else []
                if fields or texts is None:
                    out.append(Change("medium" if breaking else "low", "changed", "mcp",
                                      f"input schema of tool {tool} of MCP server {name}", note="breaking" if breaking else None,
                                      detail=[f.text() for f in fields] or ["titles"], at=server_at))
    return out


def _connection_text(node: dict[str, Any]) -> str:
    server = node.get("server") or {}
    return server.get("url") or " ".join([server.get("command") or "", *(server.get("args") or ())])

"""Stage 3b, MCP servers: list each server of project.json `mcp_servers` and decide which of its
tools the project exposes (and so locks).

Listing starts the servers, so it happens in the time-limited subprocess
(`facts.mcp_child`), and not at all with --no-import. The checks are pure: listing facts in,
each server's exposed tools and diagnostics out.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from llm_do.bundle.mcp_config import connection, redacted, start_timeout

from .. import codes
from ..diagnostics import Diagnostic, diagnostic
from ..suggest import did_you_mean
from ..syntax.manifest import McpServer
from .load import LoadedProject

if TYPE_CHECKING:
    from ..facts.answers import McpFacts, McpServerFact, McpToolFact

CREDENTIAL_KEY = re.compile(r"key|token|secret|passw|auth|cookie|credential", re.IGNORECASE)
"""Names of `env` and `headers` entries whose values are credentials, to be given as `${VAR}`."""


@dataclass
class McpServerInfo:
    """One server as the later stages see it."""

    name: str
    settings: McpServer
    tools: dict[str, McpToolFact] | None = None
    """Exposed name (with the prefix) -> the tool as listed; None when not known (opaque, not
    listed with --no-import, or listing failed, which is reported)."""
    problems: list[str] = field(default_factory=list)

    @property
    def opaque(self) -> bool:
        return self.settings.opaque

    def server_tool(self, exposed: str) -> str:
        """The server's own name of an exposed tool."""
        prefix = self.settings.prefix
        return exposed[len(prefix) + 1 :] if prefix else exposed


def list_servers(project: LoadedProject, *, import_python: bool,
                 listed: Mapping[str, McpServerFact] | None = None) -> McpFacts | None:
    """Start and list the servers that are to be listed; None when there is nothing to list.
    `listed`: servers already listed, taken as they are instead of started or reached (what `llm-do
    test` replays remote ones from, the listing their cassettes recorded; what a run's check of its
    lock takes from the lock, the run checking them live as it starts each). Given it, no remote
    server (`url`) is reached: one it does not hold is X008."""
    manifest = project.manifest
    if manifest is None or not import_python:
        return None
    remote = {name for name, s in manifest.mcp_servers.items() if s.url and not s.command and not s.opaque}
    known = {name: fact for name, fact in (listed or {}).items()
             if name in manifest.mcp_servers and not manifest.mcp_servers[name].opaque}
    servers = {name: connection(s.model_dump()) for name, s in manifest.mcp_servers.items()
               if not s.opaque and bool(s.command) != bool(s.url) and name not in known
               and (listed is None or name not in remote)}
    unreached = sorted(remote - known.keys()) if listed is not None else []
    if not servers and not known and not unreached:
        return None
    from ..facts.answers import McpFacts, McpRequest, McpServerFact  # a project without servers loads neither
    from ..facts.subprocess_runner import list_mcp_servers

    facts = list_mcp_servers(McpRequest(root=str(project.root), servers=servers, start_timeout=start_timeout()),
                             project.root) if servers else McpFacts()
    facts.servers.update(known)
    facts.servers.update({name: McpServerFact(name=name, unreached=True) for name in unreached})
    return facts


def check_servers(project: LoadedProject, facts: McpFacts | None, *, import_python: bool,
                  reserved: dict[str, str]) -> tuple[dict[str, McpServerInfo], list[Diagnostic]]:
    """Each server with its exposed tools; `reserved` maps toolset names a server may not take to
    what they are (`a stdlib toolset`)."""
    diagnostics: list[Diagnostic] = []
    manifest = project.manifest
    out: dict[str, McpServerInfo] = {}
    if manifest is None or not manifest.mcp_servers:
        return out, diagnostics
    if not import_python and any(not s.opaque for s in manifest.mcp_servers.values()):
        diagnostics.append(diagnostic(codes.MCP_NOT_STARTED, "MCP servers were not started (--no-import): their tools are not checked",
                                      project.at("mcp_servers")))
    configs = {n: connection(s.model_dump()) for n, s in manifest.mcp_servers.items()}
    for name, settings in manifest.mcp_servers.items():
        at = project.at("mcp_servers", name)
        if name in reserved:
            diagnostics.append(diagnostic(codes.MCP_SERVER_NAME, f"MCP server '{name}' has the name of {reserved[name]}", at,
                                          hint="rename the server"))
            continue
        if bool(settings.command) == bool(settings.url):
            which = "both `command` and `url`" if settings.command else "neither `command` nor `url`"
            diagnostics.append(diagnostic(codes.MCP_SERVER_CONFIG, f"MCP server '{name}' has {which}", at,
                                          hint="a stdio server has `command` (and `args`, `env`); an HTTP server has `url`"))
            continue
        misplaced = [k for k in (("args", "env") if settings.url else ("headers",)) if getattr(settings, k)]
        if misplaced:
            diagnostics.append(diagnostic(codes.MCP_SERVER_CONFIG, f"MCP server '{name}' has `{misplaced[0]}`, which only a "
                                                                   f"{'stdio' if settings.url else 'URL'} server takes",
                                          project.at("mcp_servers", name, misplaced[0])))
            continue
        for where in ("env", "headers"):
            for key, value in getattr(settings, where).items():
                if CREDENTIAL_KEY.search(key) and value and "${" not in value:
                    diagnostics.append(diagnostic(
                        codes.MCP_LITERAL_SECRET,
                        f"MCP server '{name}': `{where}.{key}` is written literally, so bundle.lock would hold it",
                        project.at("mcp_servers", name, where, key, key=False),
                        hint="write the secret part as ${VAR} and set VAR in the environment"))
        info = out[name] = McpServerInfo(name, settings)
        if settings.opaque:
            diagnostics.append(diagnostic(codes.OPAQUE_MCP_SERVER,
                                          f"MCP server '{name}' is opaque: its tools are not listed or locked, "
                                          "and each is asked at run time", at))
            continue
        if facts is None:
            continue
        fact = facts.servers.get(name)
        if fact is not None and fact.unreached:
            diagnostics.append(diagnostic(
                codes.MCP_REMOTE_UNRECORDED, f"MCP server '{name}' is remote, and `llm-do test` reaches no server without --live: no "
                                             "cassette of the project's cases recorded its tools", at,
                hint="record a case's cassette from a run that uses it (`--record DIR`), or run `llm-do test --live`"))
            continue
        if fact is None or fact.tools is None:
            why = facts.failure or (fact.error if fact is not None else "it was not listed")
            why = redacted(why or "it was not listed", configs, os.environ)  # no secret from a ${VAR} in any report
            diagnostics.append(diagnostic(codes.MCP_SERVER_UNLISTABLE, f"MCP server '{name}' could not be listed: {why}", at,
                                          hint='fix the server, or mark it "opaque": true'))
            continue
        listed = {t.name: t for t in fact.tools}
        wanted = listed if settings.allowed_tools is None else {}
        for i, tool in enumerate(settings.allowed_tools or ()):
            if tool in listed:
                wanted[tool] = listed[tool]
            else:
                diagnostics.append(diagnostic(codes.MCP_UNKNOWN_TOOL, f"MCP server '{name}' has no tool '{tool}'",
                                              project.at("mcp_servers", name, "allowed_tools", i, key=False),
                                              hint=did_you_mean(tool, listed)))
        prefix = settings.prefix
        info.tools = {(f"{prefix}_{n}" if prefix else n): t for n, t in sorted(wanted.items())}
    return out, diagnostics

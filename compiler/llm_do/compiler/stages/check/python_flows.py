"""R007: an undeclared Python tool whose flow labels count calls into third-party code the effect
scan does not know as possible egress (red team M3): the lint names those calls, so the author can
declare what the tool does (`CAPABILITIES`) instead of leaving the labels to the scan."""

from __future__ import annotations

from ... import codes
from ...analysis.call_graph import CallGraph
from ...analysis.flows.grant_labels import undeclared_tool_code
from ...code.effects import NETWORK, PROCESS
from ...diagnostics import Diagnostic, Location, diagnostic
from ..resolved import ResolvedProject

PYTHON_KINDS = ("python_tool", "python_toolset")
SENDING = (NETWORK, PROCESS)
"""Effects already labelled untrusted and egress: an unknown call then changes no label."""


def check_undeclared_calls(project: ResolvedProject, graph: CallGraph) -> list[Diagnostic]:
    if codes.UNDECLARED_THIRD_PARTY_CALLS.code in {c.upper() for c in project.manifest.suppress}:
        return []
    out: list[Diagnostic] = []
    seen: set[tuple[str | None, str]] = set()
    for name in sorted(project.workers):
        worker = project.workers[name]
        for tool in worker.tools.values():
            if tool.kind not in PYTHON_KINDS:
                continue
            code = undeclared_tool_code(project, worker, tool)
            if code is None or not code.unknown or any(e in SENDING for e in code.effects):
                continue
            key = (code.function or tool.toolset, tool.name)
            if key in seen:
                continue
            seen.add(key)
            first = code.unknown[0]
            calls = ", ".join(c.name for c in code.unknown)
            out.append(diagnostic(
                codes.UNDECLARED_THIRD_PARTY_CALLS,
                f"tool '{tool.name}' has no CAPABILITIES entry and calls third-party code the effect scan does not "
                f"know ({calls}): its information-flow labels count it as possible egress (untrusted, egress)",
                Location(file=first.file, line=first.line, column=first.column),
                hint=f"declare what it does in its module's CAPABILITIES, e.g. \"{tool.name}\": [\"net:HOST\"] "
                     "(or [] when it neither reads nor sends), which replaces the scan"))
    return out

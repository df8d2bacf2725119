"""The `.agent` era of llm-do: its names are aliases of today's; a key set to what llm-do does
anyway is an info note; any other key of that era is an error that says what to write instead.
spec/legacy.md lists the same tables for people."""

from __future__ import annotations

import json
from typing import Any

from .. import codes
from ..diagnostics import Diagnostic, Location, diagnostic
from ..syntax.positions import LazyPositions, Path, Positions, PositionTable

LEGACY_WORKER_SUFFIX = ".agent"

MANIFEST_ALIASES: dict[Path, str] = {
    ("agent_files",): "worker_files",
    ("entry", "agent"): "worker",
    ("entry", "name"): "worker",
    ("entry", "input"): "args",
}
FRONT_MATTER_ALIASES: dict[Path, str] = {
    ("input_model_ref",): "schema_in_ref",
}

_CALL_APPROVAL_HINT = "write `ask NAME` in the approvals of the workers that call NAME"
MANIFEST_REMOVED: dict[Path, str] = {
    ("runtime", "auth_mode"): "remove it: providers read their credentials from their environment variables",
    ("runtime", "return_permission_errors"): "remove it: a denied tool call always returns to the model as a tool result",
    ("runtime", "agent_calls_require_approval"): _CALL_APPROVAL_HINT,
    ("runtime", "worker_calls_require_approval"): _CALL_APPROVAL_HINT,
    ("runtime", "agent_attachments_require_approval"): "set an `attachments` policy in the front matter of the called worker",
    ("runtime", "worker_attachments_require_approval"): "set an `attachments` policy in the front matter of the called worker",
    ("runtime", "agent_approval_overrides"): _CALL_APPROVAL_HINT,
    ("runtime", "worker_approval_overrides"): _CALL_APPROVAL_HINT,
    ("allow_cli_input",): "remove it: a run takes entry.args unless the command line gives an input",
}
_NO_CALL_APPROVAL = "calling another worker needs no approval unless a rule says `ask NAME`"
_NO_ATTACHMENT_APPROVAL = "attachments need no approval; a called worker may set an `attachments` policy"
MANIFEST_ALREADY: dict[Path, tuple[Any, str]] = {
    ("runtime", "auth_mode"): ("oauth_off", "providers read their credentials from their environment variables"),
    ("runtime", "return_permission_errors"): (True, "a denied tool call returns to the model as a tool result"),
    ("runtime", "agent_calls_require_approval"): (False, _NO_CALL_APPROVAL),
    ("runtime", "worker_calls_require_approval"): (False, _NO_CALL_APPROVAL),
    ("runtime", "agent_attachments_require_approval"): (False, _NO_ATTACHMENT_APPROVAL),
    ("runtime", "worker_attachments_require_approval"): (False, _NO_ATTACHMENT_APPROVAL),
    ("runtime", "agent_approval_overrides"): ({}, "no worker has approval overrides"),
    ("runtime", "worker_approval_overrides"): ({}, "no worker has approval overrides"),
    ("allow_cli_input",): (True, "a run takes the command line's input when it gives one, else entry.args"),
}
"""Keys of MANIFEST_REMOVED whose value here is what llm-do does anyway: an info note (L003), not
an error. The key is still dropped, and `llm-do migrate` removes it."""
FRONT_MATTER_REMOVED: dict[Path, str] = {
    ("entry",): 'select the entry in project.json: "entry": {"worker": "NAME"}',
}


def upgrade_manifest(data: Any, file: str, positions: Positions) -> tuple[Any, Positions, list[Diagnostic]]:
    return _upgrade(data, file, positions, MANIFEST_ALIASES, MANIFEST_REMOVED, already=True)


def upgrade_front_matter(
    data: Any, file: str, positions: PositionTable, *, legacy_file: bool
) -> tuple[Any, PositionTable, list[Diagnostic]]:
    """Aliases apply in `.agent` files; in `.worker` files an old name is an error saying the new one."""
    if legacy_file:
        return _upgrade(data, file, positions, FRONT_MATTER_ALIASES, FRONT_MATTER_REMOVED)
    renamed = {p: f"write '{new}' (the .agent-era name '{p[-1]}' is only read in .agent files)" for p, new in FRONT_MATTER_ALIASES.items()}
    return _upgrade(data, file, positions, {}, renamed)


def _upgrade(
    data: Any, file: str, positions: Any, aliases: dict[Path, str], removed: dict[Path, str], already: bool = False
) -> tuple[Any, Any, list[Diagnostic]]:
    if not isinstance(data, dict):
        return data, positions, []
    if not any(_has(data, p) for p in (*removed, *aliases)):
        return data, positions, []  # the common case: nothing of the .agent era
    diagnostics: list[Diagnostic] = []
    data = _copy_dicts(data)
    for path, hint in removed.items():
        if _has(data, path):
            pos = positions.key(path)
            at = Location(file=file, line=pos.line, column=pos.column)
            value = _get(data, path)
            if already and (why := already_done(path, value)):
                diagnostics.append(diagnostic(codes.LEGACY_KEY_DEFAULT,
                                              f"'{path[-1]}: {json.dumps(value)}' is already what llm-do does: {why}",
                                              at, hint="remove it (`llm-do migrate` does)"))
            else:
                diagnostics.append(diagnostic(codes.LEGACY_KEY,
                                              f"'{path[-1]}' is a key of the .agent era with no equivalent here", at, hint=hint))
            del _get(data, path[:-1])[path[-1]]
    for path, new in aliases.items():
        if not _has(data, path):
            continue
        parent = _get(data, path[:-1])
        if new in parent:
            pos = positions.key(path)
            diagnostics.append(
                diagnostic(codes.INVALID_VALUE, f"'{path[-1]}' and '{new}' both given; they are the same setting",
                           Location(file=file, line=pos.line, column=pos.column), hint=f"keep '{new}' only")
            )
            del parent[path[-1]]
            continue
        parent[new] = parent.pop(path[-1])
        positions = _renamed_positions(positions, path, path[:-1] + (new,))
    return data, positions, diagnostics


def already_done(path: Path, value: Any) -> str | None:
    """Why `value` at manifest key `path` is what llm-do does anyway; None when it is not
    (equal and of the same type: `0` is not `false`)."""
    known = MANIFEST_ALREADY.get(path)
    if known is None or type(value) is not type(known[0]) or value != known[0]:
        return None
    return known[1]


def _copy_dicts(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy_dicts(v) for k, v in value.items()}
    return value


def _has(data: Any, path: Path) -> bool:
    parent = _get(data, path[:-1])
    return isinstance(parent, dict) and path[-1] in parent


def _get(data: Any, path: Path) -> Any:
    for part in path:
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    return data


def _renamed_positions(positions: Any, old: Path, new: Path) -> Any:
    def move(d: dict[Path, Any]) -> dict[Path, Any]:
        return {(new + p[len(old):] if p[: len(old)] == old else p): v for p, v in d.items()}

    def moved(table: PositionTable) -> PositionTable:
        return PositionTable(move(table.values), move(table.keys))

    if isinstance(positions, LazyPositions):
        return LazyPositions(lambda: moved(positions.table))
    return moved(positions)

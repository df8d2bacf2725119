"""The cassette: one run's model traffic, written by `--record` and replayed by `llm-do test`.

A cassette is data only (JSON, read with pydantic; never pickle), ordered and free of anything that
varies between identical runs, so re-recording an unchanged run rewrites the same bytes. Each worker
call is keyed by its **call path** (`main/analyzer@2.1`: called by `main`'s 2nd response, its 1st
tool call), so parallel calls match by where they were made, not by the order they ran in.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from llm_do.bundle.errors import Refused

CASSETTE_FORMAT: Literal[1] = 1
NOTICE = ("Recorded by llm-do --record; replayed by `llm-do test`. Re-record rather than edit: "
          "`llm-do test --record` (with --live for a cassette recorded on models).")


class CassetteRefused(Refused):
    """A cassette that cannot be replayed here: unreadable, malformed, of another format or another
    project (`llm-do test` exit 3)."""


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolShown(_Data):
    """One tool as a model request offered it."""

    name: str
    description: str | None = None
    parameters: dict[str, Any] = Field(default_factory=dict)
    kind: Literal["function", "output"] = "function"


class Shown(_Data):
    """What the model was shown for one request: what staleness compares with the project now."""

    model: str | None
    """The model the project gives the worker (None: none; a run may have overridden it)."""
    instructions: str | None = None
    tools: list[ToolShown] = Field(default_factory=list)


class Exchange(_Data):
    """One model request and its response."""

    shown: Shown
    messages: list[dict[str, Any]]
    """The request's messages, pydantic-ai's JSON form: all of them for a call's first request, then
    those after the previous response."""
    response: dict[str, Any]
    """The response, pydantic-ai's JSON form (a streamed one as the parts it ended with)."""
    streamed: bool = False


class ToolCallRecord(_Data):
    """A tool call a response made, with what it returned (read from the next request)."""

    at: str
    """Where: `REQUEST.PART` of its call."""
    tool: str
    args: Any = None
    outcome: str | None = None
    """`success`, `failed`, `denied`, ... as pydantic-ai reports it; None: no result came back."""
    result: Any = None


class ApprovalRecord(_Data):
    """An approval asked during the call, and its answer."""

    at: str | None
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)
    approved: bool
    by: str
    remember: bool = False
    note: str | None = None
    feedback: str | None = None


class CallRecord(_Data):
    path: str
    worker: str
    node: str | None
    """The worker's node hash in the bundle recorded from (None: a worker created during the run)."""
    model: str
    """The label of the model that answered (what `worker_started` names)."""
    code: dict[str, str] = Field(default_factory=dict)
    """Tool name -> code fingerprint, for the Python tools the worker was offered."""
    requests: list[Exchange] = Field(default_factory=list)
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    approvals: list[ApprovalRecord] = Field(default_factory=list)


class ListedTool(_Data):
    """One tool as a remote MCP server listed it."""

    name: str
    description: str | None = None
    parameters: dict[str, Any] = Field(default_factory=dict)
    """Its input schema."""


class RemoteCall(_Data):
    """One call of a remote MCP server's tool, and what it answered."""

    path: str
    """The call path of the worker call that made it."""
    at: str | None
    """`REQUEST.PART` of the tool call in that worker call (None: not made by a model's tool call)."""
    tool: str
    """The tool's name on the server (without the project's prefix)."""
    args: dict[str, Any] = Field(default_factory=dict)
    outcome: Literal["success", "failed", "retry"] = "success"
    """`failed`: the server reported a failure the model reads; `retry`: one it may retry."""
    result: Any = None
    """What the call returned, as pydantic-ai's JSON form of a tool's return (the message of a
    failure)."""


class RemoteServer(_Data):
    """A remote MCP server (`url`): what it listed and answered, which a replay serves instead of it.
    Its address and headers are not recorded."""

    name: str
    tools: list[ListedTool] = Field(default_factory=list)
    calls: list[RemoteCall] = Field(default_factory=list)


class SensitiveRead(_Data):
    """A path the run read whose content is now in the cassette although the project keeps it in."""

    path: str
    """Below the project (`docs/plan.md`), or as the tool was given it when outside."""
    why: Literal["private", "denied"]
    """`private`: labelled private (`flows.paths`, or by default); `denied`: an approval rule of
    the project denies reading it."""
    tool: str
    """The tool that read it, or the worker call it was attached to (`attached`)."""
    worker: str
    attached: bool = False
    """Attached to a worker call (by `worker`, to its call of `tool`): the cassette keeps the file's
    digest, not its bytes, but what the callee's model answered may tell of it. Left out when false."""


class Cassette(_Data):
    """One recorded run (or chat: one entry call per turn)."""

    notice: str = NOTICE
    cassette_format: Literal[1] = CASSETTE_FORMAT
    project: str | None
    """The bundle's `name`: a cassette of another project is refused."""
    bundle_digest: str
    """The digest of the bundle recorded from (informational: staleness compares what changed)."""
    worker: str
    """The worker the run started with."""
    script: str | None = None
    """The script the recorded run played (`--script`), relative to the project: `llm-do test
    --record` records the cassette again by playing it. Left out when the run played none (or one
    outside the project)."""
    inputs: list[Any]
    """The run's input (one per chat turn)."""
    outputs: list[Any] = Field(default_factory=list)
    """The run's output (one per chat turn), as JSON."""
    failure: str | None = None
    """Why the run failed, when it did."""
    alerts: list[SensitiveRead] = Field(default_factory=list)
    """Paths labelled private or denied that the run read, whose content the cassette now holds: named
    first in the file (keys are sorted), so a reviewer sees them before anything else."""
    calls: list[CallRecord] = Field(default_factory=list)
    remote_mcp: list[RemoteServer] = Field(default_factory=list)


OMITTED_WHEN_EMPTY = ("alerts", "remote_mcp", "script")
"""Left out of the file when empty: a run without them records the bytes it did before they existed."""


def cassette_text(cassette: Cassette) -> str:
    """The file form: sorted keys, two-space indentation, a newline at the end."""
    data = cassette.model_dump(mode="json", exclude_defaults=False)
    for key in OMITTED_WHEN_EMPTY:
        if not data[key]:
            del data[key]
    for alert in data.get("alerts", []):
        if not alert["attached"]:
            del alert["attached"]
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_cassette(path: Path, cassette: Cassette) -> None:
    """Written atomically, and readable by its owner only (0600: a cassette holds what tools returned),
    from before it is in place."""
    from llm_do.toolkit.files import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, cassette_text(cassette).encode("utf-8"), mode=0o600)


def read_cassette(path: Path, *, shown_as: str | None = None) -> Cassette:
    """A cassette file, checked; anything else is `CassetteRefused` naming the file (and the line
    of a JSON error). Reading runs no code."""
    name = shown_as or str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CassetteRefused(f"{name}: cannot read the cassette ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise CassetteRefused(f"{name}: not a cassette (not UTF-8 text)") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CassetteRefused(f"{name}:{exc.lineno}: not a cassette: invalid JSON ({exc.msg})") from None
    if not isinstance(data, dict) or "cassette_format" not in data:
        raise CassetteRefused(f"{name}: not a cassette (no cassette_format)")
    if data["cassette_format"] != CASSETTE_FORMAT:
        raise CassetteRefused(f"{name}: cassette format {data['cassette_format']!r} is not one this llm-do reads "
                              f"({CASSETTE_FORMAT}); record it again")
    try:
        return Cassette.model_validate(data)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CassetteRefused(f"{name}: not a valid cassette: {where}: {first['msg']}") from None

"""Read-only views of a bundle's nodes, and what is derived from them once for every reader.

The nodes are `model`'s TypedDicts as `llm-do build` wrote them (a verified lock is not validated
again). The views read them with the defaults `model` states for absent keys, so no reader writes
`node.get("toolsets") or ()` of its own:

- `WorkerSpec` (with `SchemaSpec`, `UsedToolset`, `ToolBinding`): a worker as a run uses it;
- `call_edges`: who may call whom, the one derivation `diff`, `graph`, `capabilities` and durable
  runs share;
- `shortened` / `worker_description`: how much of a worker's text a tool list shows.

Standard library only.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

if TYPE_CHECKING:  # the model is for the type checker: `exec` does not load it
    from .approval import Action, Approval
    from .model import AttachmentPolicyNode, CapabilityGrant, EntryNode, RuleNode, SchemaNode, WorkerNode


TAKEN_IN = ("private", "untrusted")
"""The labels a tool's result brings into a frame (`flow.PRIVATE`, `flow.UNTRUSTED`)."""


class SchemaSpec(NamedTuple):
    ref: str | None
    module: str
    qualname: str
    json_schema: dict[str, Any]

    @classmethod
    def of(cls, node: SchemaNode) -> SchemaSpec:
        return cls(node.get("ref"), node["module"], node["qualname"], node["json_schema"])


class UsedToolset(NamedTuple):
    """One of a worker's `toolsets`: a bundle toolset (`toolset`), or a worker it calls as a tool
    (`worker`). (Not the compiler's `stages.resolve.ToolsetUse`, a reference being resolved.)"""

    toolset: str | None
    worker: str | None
    settings: dict[str, Any]
    opaque_approval: Action | None


class ToolBinding(NamedTuple):
    toolset: str | None
    worker: str | None
    approval: Approval
    rules: list[RuleNode] | None = None
    """The rules that decide each call by its arguments (see `model.WorkerTool`), or None."""
    default: Approval | None = None
    confined_by: tuple[int, ...] = ()
    """The rules (indexes into `rules`) that confine where the tool sends (`model.WorkerTool`)."""


class WorkerSpec(NamedTuple):
    name: str
    source: str
    description: str | None
    model: str | None
    compatible_models: list[str] | None
    model_settings: dict[str, Any] | None
    instructions: str
    input: SchemaSpec
    output: SchemaSpec | None
    toolsets: tuple[UsedToolset, ...]
    tools: dict[str, ToolBinding]
    calls: tuple[str, ...]
    recursive: bool
    attachments: AttachmentPolicyNode | None
    server_side_tools: tuple[dict[str, Any], ...]
    services: dict[str, str]
    """The host services its tools declare they need (`service:NAME` grants): name -> which tool."""
    grants: tuple[CapabilityGrant, ...] = ()
    """Its own capability grants as the bundle holds them, with their information-flow `labels`
    (what the run-time taint guard reads, `llm_do.runtime.taint`)."""
    labelled: bool = False
    """Whether a grant of its own has information-flow labels: only then do its tools' results
    add to a frame's taint (`taken_in`)."""
    egress: bool = False
    """Whether a grant of its own is labelled `egress`: only then does its gate consult the taint
    guard (`llm_do.runtime.taint`), so a run of workers that send nothing out never imports it."""

    declassifies: bool = False
    """Its output can carry no free text (`declassify`): once an output is checked against its
    schema, its caller takes in no untrusted content from the call."""
    quarantined: bool = False
    """A model that calls it reads a token for its output, never the output (`runtime.quarantine`)."""

    def tool_grants(self, tool: str, toolset: str | None) -> list[CapabilityGrant]:
        """The grants of its tool `tool`; a tool of an opaque toolset (listed only at run time, so
        not among its `tools`) has its toolset's grants (`toolset`: the toolset's key)."""
        if tool in self.tools:
            return [g for g in self.grants if g.get("tool") == tool]
        return [g for g in self.grants if toolset is not None and g.get("toolset") == toolset]

    def taken_in(self, tool: str, toolset: str | None) -> frozenset[tuple[str, str, str, str]]:
        """What a result of its tool `tool` adds to a frame's taint: `(label, capability, worker,
        tool)` (`taint.Source`) per `private` or `untrusted` label of the tool's grants."""
        return frozenset((label, g["capability"], self.name, tool) for g in self.tool_grants(tool, toolset)
                         for label in g.get("labels") or () if label in TAKEN_IN)

    @classmethod
    def of(cls, node: WorkerNode) -> WorkerSpec:
        output = node.get("output")
        return cls(
            name=node["name"],
            source=node["source"],
            description=node.get("description"),
            model=node.get("model"),
            compatible_models=node.get("compatible_models"),
            model_settings=node.get("model_settings"),
            instructions=node["instructions"],
            input=SchemaSpec.of(node["input"]),
            output=SchemaSpec.of(output) if output else None,
            toolsets=used_toolsets(node),
            tools=tool_bindings(node),
            calls=tuple(node.get("calls") or ()),
            recursive=node.get("recursive", False),
            attachments=node.get("attachments"),
            server_side_tools=tuple(node.get("server_side_tools") or ()),
            services=service_needs(node.get("capabilities") or ()),
            grants=tuple(node.get("capabilities") or ()),
            labelled=any("labels" in g for g in node.get("capabilities") or ()),
            egress=any("egress" in (g.get("labels") or ()) for g in node.get("capabilities") or ()),
            declassifies=node.get("declassifies", False),
            quarantined=node.get("quarantined", False),
        )


def used_toolsets(node: WorkerNode) -> tuple[UsedToolset, ...]:
    """A worker node's `toolsets`, in order."""
    return tuple(UsedToolset(u.get("toolset"), u.get("worker"), u.get("settings") or {}, u.get("opaque_approval"))
                 for u in node.get("toolsets") or ())


def tool_bindings(node: WorkerNode) -> dict[str, ToolBinding]:
    """A worker node's `tools`: tool name -> where it comes from and its approval."""
    return {name: ToolBinding(t.get("toolset"), t.get("worker"), t["approval"], t.get("rules"), t.get("default"),
                              tuple(t.get("confined_by") or ()))
            for name, t in (node.get("tools") or {}).items()}


def service_needs(capabilities: Iterable[CapabilityGrant]) -> dict[str, str]:
    """Service name -> what needs it (`tool 'lookup'`, `toolset 'tools.KIT'`), from a worker node's
    `service:NAME` capability grants (`names.SERVICE_KIND`)."""
    out: dict[str, str] = {}
    for grant in capabilities:
        kind, _, name = grant["capability"].partition(":")
        if kind == "service" and name not in out:
            out[name] = f"tool '{grant['tool']}'" if grant.get("tool") else f"toolset '{grant.get('toolset')}'"
    return out


# --- call edges ------------------------------------------------------------------------------------

CallKind = Literal["tool", "code", "entry"]


class CallEdge(NamedTuple):
    caller: str
    """A worker's name, or the entry function's label (`entry.py:main`)."""
    callee: str
    kind: CallKind
    """`tool`: the callee is one of the caller's tools (a `worker` item of its `toolsets`); `code`:
    the caller's Python tools call it (front matter `calls:` only); `entry`: the entry function
    calls it."""


def worker_call_edges(name: str, node: WorkerNode) -> Iterator[CallEdge]:
    """A worker's edges, in the order of its `calls`.

    `calls` is every worker it may call: the workers among its `toolsets` (first, in that order:
    the compiler resolves toolsets before front matter `calls:`) and those only its Python tools
    call. So `calls` is the edge set, and the `tool` edges are its `toolsets`' workers, in order.
    The two sets differ exactly by the `code` edges."""
    as_tools = {u["worker"] for u in node.get("toolsets") or () if u.get("worker")}
    for callee in node.get("calls") or ():
        yield CallEdge(name, callee, "tool" if callee in as_tools else "code")


def call_edges(workers: Mapping[str, WorkerNode], entry: EntryNode | None = None) -> list[CallEdge]:
    """Every call edge of a bundle document, from its `workers` and its `entry` (when given): workers
    in the document's order, then the entry function's."""
    edges = [edge for name, node in workers.items() for edge in worker_call_edges(name, node)]
    function = (entry or {}).get("function")
    if function:
        edges += [CallEdge(function["name"], callee, "entry") for callee in function["calls"]]
    return edges


def entry_name(entry: EntryNode) -> str:
    """The entry of a bundle document (its `entry`): its entry worker's name, or its entry
    function's label."""
    function = entry.get("function")
    return function["name"] if function else entry["worker"]  # type: ignore[return-value]


# --- descriptions --------------------------------------------------------------------------------

DESCRIPTION_LIMIT = 300
"""Characters of a worker's text a tool list shows: a worker's instructions are a prompt, not a
description, so only their start."""


def shortened(text: str) -> str:
    """`text`, cut to `DESCRIPTION_LIMIT` characters with an ellipsis when longer."""
    return text if len(text) <= DESCRIPTION_LIMIT else text[: DESCRIPTION_LIMIT - 1] + "…"


def worker_description(spec: WorkerSpec) -> str:
    """A worker as a calling worker's model sees it among its tools: its description, else its
    instructions, shortened."""
    return shortened(spec.description or spec.instructions)

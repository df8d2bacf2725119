"""The bundle's data model: what `llm-do build` writes and `llm-do exec` runs.

spec/bundle.md describes it and spec/schemas/bundle.schema.json is generated from these models.
Every node with a `hash` is hashed over its canonical JSON without that key (see `canonical`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .approval_policy import Action, Approval, ApprovalMode
from .bundle_format import GENERATED_KEY


class Node(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CompilerInfo(Node):
    name: str
    version: str


class SourceEntry(Node):
    sha256: str
    kind: Literal["manifest", "worker", "python", "template", "file"]


class EntryFunctionNode(Node):
    """An entry that is a Python function orchestrating workers (`entry.function`)."""

    hash: str
    name: str
    """As written in project.json (`entry.py:main`): its label in the graph and reports."""
    source: str | None = None
    """The project file that defines it; None for an installed module."""
    module: str
    qualname: str
    calls: list[str]
    """The workers it may call (every worker when `calls_declared` is false); any other is refused."""
    calls_declared: bool
    """Whether project.json listed them in `entry.calls`."""
    input: SchemaNode
    """Its input's WorkerArgs annotation, else PromptInput."""


class EntryNode(Node):
    """Exactly one of `worker` and `function`."""

    worker: str | None = None
    function: EntryFunctionNode | None = None
    args: dict[str, Any] | None = None


class UsageLimitsNode(Node):
    request_limit: int | None = None
    tool_calls_limit: int | None = None
    input_tokens_limit: int | None = None
    output_tokens_limit: int | None = None
    total_tokens_limit: int | None = None
    per_request_input_tokens_limit: int | None = None
    cost_limit: float | None = None
    count_tokens_before_request: bool | None = None


class RuntimeNode(Node):
    max_depth: int
    approval_mode: ApprovalMode
    usage_limits: UsageLimitsNode | None = None


class DefaultsNode(Node):
    model: str | None = None
    model_settings: dict[str, Any] | None = None


class ToolNode(Node):
    hash: str
    name: str
    description: str | None = None
    parameters: dict[str, Any]
    approval: Approval
    """The default approval; a worker's own rules may change it (see `WorkerTool`)."""
    capabilities: list[str] = Field(default_factory=list)


class McpConnection(Node):
    """An MCP server's connection, in the shape of `.mcp.json`: `command`/`args`/`env` (stdio,
    started in the project root) or `url`/`headers` (streamable HTTP; SSE for a path ending `/sse`)."""

    command: str | None = None
    args: list[str] | None = None
    env: dict[str, str] | None = None
    url: str | None = None
    headers: dict[str, str] | None = None


class ToolsetNode(Node):
    hash: str
    name: str
    kind: Literal["stdlib", "python", "mcp"]
    module: str | None = None
    """Python: the module to import (with the project root first on sys.path)."""
    export: str | None = None
    """Python: `TOOLS`, `TOOLSETS` or `__all__`, the module attribute the tools come from."""
    key: str | None = None
    """Python toolsets: the name in TOOLSETS (a dict key, or a toolset id)."""
    opaque: bool = False
    """Its tools could not be listed at build time; they are found when a run starts."""
    server: McpConnection | None = None
    """MCP: how to reach the server, as written in project.json (`${VAR}`s unexpanded)."""
    config_hash: str | None = None
    """MCP: sha256 of `server` in canonical JSON (`mcp_config.config_hash`)."""
    prefix: str | None = None
    """MCP: exposed tool names are `PREFIX_NAME` (the server's name of a tool is the rest)."""
    required: bool | None = None
    """MCP: started and checked when a run starts (`false`: when a worker first lists its tools)."""
    tools: dict[str, ToolNode] = Field(default_factory=dict)
    """MCP: the exposed tools as listed at build, by exposed name; a run refuses a server whose
    live input schema of one differs, or that no longer has one."""
    capabilities: list[str] = Field(default_factory=list)


class SchemaNode(Node):
    ref: str | None = None
    """As written in the worker (`schemas.py:Input`); None for the built-in PromptInput."""
    module: str
    qualname: str
    json_schema: dict[str, Any]


class WorkerToolset(Node):
    toolset: str | None = None
    """Key in the bundle's `toolsets`; None for a worker this one calls."""
    worker: str | None = None
    settings: dict[str, Any] = Field(default_factory=dict)
    opaque_approval: Approval | None = None


class ConditionAll(Node):
    """`and` / `or` of the conditions in `args`."""

    op: Literal["and", "or"]
    args: list[Condition]


class ConditionNot(Node):
    op: Literal["not"]
    arg: Condition


class ConditionTest(Node):
    """One comparison of a call's (normalized) argument at `param` with `value`: `glob` (value a
    glob string), `==`, `!=`, `<`, `<=`, `>`, `>=`, or `in` (value a list)."""

    op: Literal["glob", "==", "!=", "<", "<=", ">", ">=", "in"]
    param: list[str | int]
    """Keys and list indices into the arguments: `["path"]`, `["argv", 0]` for `argv[0]`."""
    value: Any


Condition = Annotated[ConditionAll | ConditionNot | ConditionTest, Field(discriminator="op")]
"""An approval rule's condition, lowered to a tree the runtime evaluates without a parser."""


class RuleNode(Node):
    action: Action
    when: Condition | None
    """The condition on the call's arguments; null for a rule that matches every call."""
    text: str
    """The rule as written in the worker."""


class WorkerTool(Node):
    toolset: str | None = None
    worker: str | None = None
    approval: Approval
    """What a call gets when it matches no conditional rule: the tool's default changed by the
    worker's unconditional rules that target it (a deny wins; else the last allow/ask)."""
    rules: list[RuleNode] | None = None
    """Present only when some rule targeting this tool has a condition: then every rule of the
    worker that targets the tool, in source order, decides each call (`approval_policy.decide`)."""
    default: Approval | None = None
    """With `rules`: the tool's own default, for a call no rule matches."""


class CapabilityGrant(Node):
    """One capability a worker has of its own, and what gives it (see spec/bundle.md)."""

    capability: str
    """`KIND:SCOPE`: `fs.read:project/docs/**`, `fs.write:cwd/**`, `proc.exec:ls,mv`, `custom:NAME`,
    `custom:*` (an opaque toolset), `call:WORKER`, `env:VARIABLE` (the model's credentials)."""
    tool: str | None = None
    """The tool of the worker that has it (its approval is `tools[tool]`)."""
    toolset: str | None = None
    """An opaque toolset that has it (its approval is the toolset's `opaque_approval`)."""
    model: str | None = None
    """For `env:`: the model or `compatible_models` pattern that needs it."""


class AttachmentPolicyNode(Node):
    max_count: int | None = None
    max_total_bytes: int | None = None
    allowed_suffixes: list[str] | None = None


class WorkerNode(Node):
    hash: str
    name: str
    source: str
    description: str | None = None
    model: str | None = None
    compatible_models: list[str] | None = None
    model_settings: dict[str, Any] | None = None
    instructions: str
    input: SchemaNode
    output: SchemaNode | None = None
    toolsets: list[WorkerToolset] = Field(default_factory=list)
    tools: dict[str, WorkerTool] = Field(default_factory=dict)
    calls: list[str] = Field(default_factory=list)
    recursive: bool = False
    attachments: AttachmentPolicyNode | None = None
    server_side_tools: list[dict[str, Any]] = Field(default_factory=list)
    capabilities: list[CapabilityGrant] = Field(default_factory=list)
    """The worker's own capabilities; what it reaches through the workers it calls is computed
    from `calls`, never stored (the bundle stays linear in the number of workers)."""


class Bundle(Node):
    generated: str = Field(alias=GENERATED_KEY)
    bundle_format: int
    compiler: CompilerInfo
    digest: str
    root: str
    """The project root, relative to the directory of the lock file."""
    name: str | None = None
    entry: EntryNode
    runtime: RuntimeNode
    defaults: DefaultsNode
    sources: dict[str, SourceEntry]
    packages: dict[str, str] = Field(default_factory=dict)
    model_factories: dict[str, str] = Field(default_factory=dict)
    """Provider prefix -> the project module whose import registers a model factory for it
    (`llm_do.register_model_factory`); left out when the project registers none."""
    services: dict[str, list[str]] = Field(default_factory=dict)
    """Host service name -> the workers whose tools declare it (`service:NAME` grants, sorted); left
    out when no tool declares one. The runtime checks a run was given them without reading workers."""
    toolsets: dict[str, ToolsetNode]
    workers: dict[str, WorkerNode]

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


ConditionAll.model_rebuild()
ConditionNot.model_rebuild()

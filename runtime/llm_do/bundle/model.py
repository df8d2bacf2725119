"""The bundle's shape: what `llm-do build` writes and `llm-do exec` runs, declared once.

A TypedDict per node. `compiler/stages/lower.py` builds its dicts as these types, the views
(`views`) and the analyses read them, and runtime/llm_do/cli/schemas/bundle.schema.json is generated from them
(`schema`, the one module of the package that imports pydantic). spec/bundle.md describes them.

Keys marked `NotRequired` may be left out, and an absent key reads as its empty value: null for a
key that may be null, false for a flag, none for a list or an object (`views` reads them so; the
JSON Schema's `default`s say the first two, `schema._with_default`). Every node with a `hash` is
hashed over its canonical JSON without that key (see `canonical`). Every node is closed: a key not
declared here is invalid. Standard library only.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

from .actions import Action, Approval, ApprovalMode
from .flow import Label, PathLabel


class CompilerInfo(TypedDict):
    name: str
    version: str


class SourceEntry(TypedDict):
    sha256: str
    kind: Literal["manifest", "worker", "python", "template", "file"]


class SchemaNode(TypedDict):
    ref: NotRequired[str | None]
    """As written in the worker (`schemas.py:Input`); None (or absent) for the built-in PromptInput."""
    module: str
    qualname: str
    json_schema: dict[str, Any]


class EntryFunctionNode(TypedDict):
    """An entry that is a Python function orchestrating workers (`entry.function`)."""

    hash: str
    name: str
    """As written in project.json (`entry.py:main`): its label in the graph and reports."""
    source: NotRequired[str | None]
    """The project file that defines it; None (or absent) for an installed module."""
    module: str
    qualname: str
    calls: list[str]
    """The workers it may call (every worker when `calls_declared` is false); any other is refused."""
    calls_declared: bool
    """Whether project.json listed them in `entry.calls`."""
    input: SchemaNode
    """Its input's WorkerArgs annotation, else PromptInput."""
    code: NotRequired[CodeNode]
    """The code it runs, when it is a project file's function."""


class EntryNode(TypedDict):
    """Exactly one of `worker` and `function`."""

    worker: NotRequired[str | None]
    function: NotRequired[EntryFunctionNode | None]
    args: NotRequired[dict[str, Any] | None]


class UsageLimitsNode(TypedDict):
    request_limit: NotRequired[int | None]
    tool_calls_limit: NotRequired[int | None]
    input_tokens_limit: NotRequired[int | None]
    output_tokens_limit: NotRequired[int | None]
    total_tokens_limit: NotRequired[int | None]
    per_request_input_tokens_limit: NotRequired[int | None]
    cost_limit: NotRequired[float | None]
    count_tokens_before_request: NotRequired[bool | None]


class RuntimeNode(TypedDict):
    max_depth: int
    approval_mode: ApprovalMode
    usage_limits: NotRequired[UsageLimitsNode | None]


class DefaultsNode(TypedDict):
    model: NotRequired[str | None]
    model_settings: NotRequired[dict[str, Any] | None]


class CodePart(TypedDict):
    """One part of the code a function runs: its own body, a definition it reaches in its module,
    the module's import-time statements, or a whole project module it imports."""

    hash: str
    """sha256 of the part's `ast` without positions or docstrings (comments and layout do not count)."""
    effects: NotRequired[list[str]]
    """What its calls can do (`fs.write`, `fs.delete`, `proc.exec`, `net`, `env.read`). Absent: none."""


class CodeNode(TypedDict):
    """The code a Python tool, a `TOOLSETS` toolset, a local MCP server or the entry function runs, read with `ast`."""

    function: str | None
    """`FILE:NAME` of its def; None when the whole module counts (a toolset, a function `ast` cannot find)."""
    signature: str | None
    """sha256 of its parameters and return annotation; None with `function` None."""
    fingerprint: str
    """sha256 over `function`, `signature` and every part's hash: equal means the same code runs."""
    parts: dict[str, CodePart]
    """`FILE:NAME` (the function itself, what it reaches by name), `FILE:<module>` (its module's
    statements that bind nothing), `FILE` (a project module imported, whole) -> the part."""
    effects: list[str]
    """The union of the parts' effects."""


class ToolNode(TypedDict):
    hash: str
    name: str
    description: NotRequired[str | None]
    parameters: dict[str, Any]
    approval: Approval
    """The default approval; a worker's own rules may change it (see `WorkerTool`)."""
    capabilities: NotRequired[list[str]]
    """Absent: none."""
    code: NotRequired[CodeNode]
    """Python tools of a module's `TOOLS` only: the code the tool runs."""


class McpConnection(TypedDict):
    """An MCP server's connection, in the shape of `.mcp.json`: `command`/`args`/`env` (stdio,
    started in the project root) or `url`/`headers` (streamable HTTP; SSE for a path ending `/sse`)."""

    command: NotRequired[str | None]
    args: NotRequired[list[str] | None]
    env: NotRequired[dict[str, str] | None]
    url: NotRequired[str | None]
    headers: NotRequired[dict[str, str] | None]


class ToolsetNode(TypedDict):
    hash: str
    name: str
    kind: Literal["stdlib", "python", "mcp"]
    module: NotRequired[str | None]
    """Python: the module to import (with the project root first on sys.path)."""
    export: NotRequired[str | None]
    """Python: `TOOLS`, `TOOLSETS` or `__all__`, the module attribute the tools come from."""
    key: NotRequired[str | None]
    """Python toolsets: the name in TOOLSETS (a dict key, or a toolset id)."""
    opaque: NotRequired[bool]
    """Its tools could not be listed at build time; they are found when a run starts. Absent: false."""
    server: NotRequired[McpConnection | None]
    """MCP: how to reach the server, as written in project.json (`${VAR}`s unexpanded)."""
    config_hash: NotRequired[str | None]
    """MCP: sha256 of `server` in canonical JSON (`mcp_config.config_hash`)."""
    prefix: NotRequired[str | None]
    """MCP: exposed tool names are `PREFIX_NAME` (the server's name of a tool is the rest)."""
    required: NotRequired[bool | None]
    """MCP: started and checked when a run starts (`false`: when a worker first lists its tools)."""
    sources: NotRequired[dict[str, str]]
    """MCP: the project files the server runs (named by its command line, and the project modules a
    Python server imports), path -> sha256 as in the bundle's `sources`; a run refuses to start the
    server when one changed. Absent: none (a launcher outside the project is not verified)."""
    tools: NotRequired[dict[str, ToolNode]]
    """The tools as listed at build, by exposed name (absent: none). MCP: a run refuses a server
    whose live input schema of one differs, or that no longer has one."""
    capabilities: NotRequired[list[str]]
    """Absent: none."""
    code: NotRequired[CodeNode]
    """Python `TOOLSETS`: the code of its module (its tools are built by it). MCP: the code of the
    project files it runs (`sources`), each file whole (absent: it runs none)."""


class WorkerToolset(TypedDict):
    # One toolset a worker uses: a bundle toolset, or (`worker`) a worker it calls.
    toolset: NotRequired[str | None]
    """Key in the bundle's `toolsets`; None (or absent) for a worker this one calls."""
    worker: NotRequired[str | None]
    settings: NotRequired[dict[str, Any]]
    """Absent: {}."""
    opaque_approval: NotRequired[Action | None]
    """The whole opaque toolset's approval: the worker's rules for it, else `ask` (never `auto`)."""


class ConditionAll(TypedDict):
    """`and` / `or` of the conditions in `args`."""

    op: Literal["and", "or"]
    args: list[Condition]


class ConditionNot(TypedDict):
    op: Literal["not"]
    arg: Condition


class ConditionTest(TypedDict):
    """One comparison of a call's (normalized) argument at `param` with `value`: `glob` (value a
    glob string), `==`, `!=`, `<`, `<=`, `>`, `>=`, or `in` (value a list)."""

    op: Literal["glob", "==", "!=", "<", "<=", ">", ">=", "in"]
    param: list[str | int]
    """Keys and list indices into the arguments: `["path"]`, `["argv", 0]` for `argv[0]`, `"*"`
    for any element of a list (`["argv", "*"]` for `argv[*]`) and `"[all]"` for every element
    (`["recipients", "[all]"]` for `recipients[all]`)."""
    value: Any


Condition = ConditionAll | ConditionNot | ConditionTest
"""An approval rule's condition, lowered to a tree the runtime evaluates without a parser
(`approval.holds`); `op` tells the three apart."""


class RuleNode(TypedDict):
    action: Action
    when: Condition | None
    """The condition on the call's arguments; null for a rule that matches every call."""
    text: str
    """The rule as written in the worker."""


class WorkerTool(TypedDict):
    # A tool a worker may call: which toolset (or worker) provides it, and its approval.
    toolset: NotRequired[str | None]
    worker: NotRequired[str | None]
    approval: Approval
    """What a call gets when it matches no conditional rule: the tool's default changed by the
    worker's unconditional rules that target it (a deny wins; else the last allow/ask)."""
    rules: NotRequired[list[RuleNode] | None]
    """Present only when some rule targeting this tool has a condition: then every rule of the
    worker that targets the tool, in source order, decides each call (`approval.decide`)."""
    default: NotRequired[Approval | None]
    """With `rules`: the tool's own default, for a call no rule matches."""
    confined_by: NotRequired[list[int]]
    """With `rules`, for a tool whose grants say where it sends (`to:PARAM`): the `allow` rules
    (indexes into `rules`) whose conditions hold every such parameter to values they name; a call
    one of them decides is no egress for the flow guard. Absent: none."""


class CapabilityGrant(TypedDict):
    """One capability a worker has of its own, and what gives it (see spec/bundle.md)."""

    capability: str
    """`KIND:SCOPE`: `fs.read:project/docs/**`, `fs.write:cwd/**`, `proc.exec:ls,mv`, `custom:NAME`,
    `custom:*` (an opaque toolset), `call:WORKER`, `env:VARIABLE` (the model's credentials)."""
    tool: NotRequired[str | None]
    """The tool of the worker that has it (its approval is `tools[tool]`)."""
    toolset: NotRequired[str | None]
    """An opaque toolset that has it (its approval is the toolset's `opaque_approval`)."""
    model: NotRequired[str | None]
    """For `env:`: the model or `compatible_models` pattern that needs it."""
    labels: NotRequired[list[Label]]
    """Its information-flow labels, in `flow.LABELS` order; absent: none."""
    conditional_labels: NotRequired[list[Label]]
    """For a tool with conditional rules that confine the calls they allow to folders: the labels
    of those calls (fewer than `labels`); the others come only with calls its `approval` decides."""


class FlowAcceptanceNode(TypedDict):
    """A flow the project accepts (project.json `flows.accept`): each leg lists capabilities
    (`*` any, `input` the run's input for the untrusted leg)."""

    worker: str
    private: list[str]
    untrusted: list[str]
    egress: list[str]
    reason: str
    inert: NotRequired[bool]
    """True when the build found that it accepts nothing (R006): the run does not honour it."""


class FlowsNode(TypedDict):
    """project.json's `flows`: what the run's input is, the labelled folders, the accepted flows."""

    inputs: Literal["untrusted", "trusted", "private"]
    paths: dict[str, PathLabel]
    accept: list[FlowAcceptanceNode]


class DeclaredPriceNode(TypedDict):
    """A price the project declares for a model (USD; `input_mtok`/`output_mtok` per million tokens)."""

    input_mtok: float
    output_mtok: float
    request: NotRequired[float]
    """Per request besides its tokens; absent: 0."""
    context_window: NotRequired[int | None]
    """The most input tokens one request may have; absent: unknown."""


class CostNode(TypedDict):
    """project.json's `cost`, the keys it sets (each absent one at its default)."""

    prices: NotRequired[dict[str, DeclaredPriceNode]]
    """By model name or `fnmatch` pattern; absent: none."""
    rise_factor: NotRequired[float]
    """`diff`: a bound that rises more than this many times is high; absent: 2."""
    unpriced: NotRequired[Literal["stop", "accept"]]
    """A budgeted run's answer to a response it cannot price; absent: `stop`."""


DEFAULT_RISE_FACTOR = 2.0
"""`cost.rise_factor` when project.json sets none (the manifest's default, and what `diff` reads
from a lock that leaves it out)."""
DEFAULT_UNPRICED: Literal["stop", "accept"] = "stop"
"""`cost.unpriced` when project.json sets none."""


class AttachmentPolicyNode(TypedDict):
    max_count: NotRequired[int | None]
    max_total_bytes: NotRequired[int | None]
    allowed_suffixes: NotRequired[list[str] | None]


class WorkerNode(TypedDict):
    hash: str
    name: str
    source: str
    description: NotRequired[str | None]
    model: NotRequired[str | None]
    compatible_models: NotRequired[list[str] | None]
    model_settings: NotRequired[dict[str, Any] | None]
    instructions: str
    input: SchemaNode
    output: NotRequired[SchemaNode | None]
    toolsets: NotRequired[list[WorkerToolset]]
    """Absent: none."""
    tools: NotRequired[dict[str, WorkerTool]]
    """Absent: none."""
    calls: NotRequired[list[str]]
    """The workers it may call (the `worker` toolsets' names). Absent: none."""
    recursive: NotRequired[bool]
    """Absent: false."""
    attachments: NotRequired[AttachmentPolicyNode | None]
    server_side_tools: NotRequired[list[dict[str, Any]]]
    """Absent: none."""
    capabilities: NotRequired[list[CapabilityGrant]]
    """The worker's own capabilities (absent: none); what it reaches through the workers it calls
    is computed from `calls`, never stored (the bundle stays linear in the number of workers)."""
    declassifies: NotRequired[bool]
    """True when its output schema can carry no free text (`llm_do.bundle.declassify`): its callers
    take in no untrusted content from it, once the runtime has checked the output. Absent: false."""
    quarantined: NotRequired[bool]
    """`quarantined` from the front matter: its callers' models get a reference to its output, never its words. Absent: false."""


Bundle = TypedDict("Bundle", {
    "@generated": str,
    "bundle_format": int,
    "compiler": CompilerInfo,
    "digest": str,
    "root": str,
    "name": NotRequired[str | None],
    "entry": EntryNode,
    "runtime": RuntimeNode,
    "defaults": DefaultsNode,
    "sources": dict[str, SourceEntry],
    "packages": NotRequired[dict[str, str]],
    "model_factories": NotRequired[dict[str, str]],
    "services": NotRequired[dict[str, list[str]]],
    "flows": NotRequired[FlowsNode],
    "cost": NotRequired[CostNode],
    "toolsets": dict[str, ToolsetNode],
    "workers": dict[str, WorkerNode],
})
"""The whole bundle (the key `@generated` is `format.GENERATED_KEY`, the one no identifier can spell).

- `root`: the project root, relative to the directory of the lock file.
- `packages`: absent: none.
- `model_factories`: provider prefix -> the project module whose import registers a model factory
  for it (`llm_do.register_model_factory`); left out when the project registers none.
- `flows`: project.json's `flows`, left out when it says nothing (inputs untrusted, no labelled
  folder, no accepted flow).
- `cost`: project.json's `cost`, the keys it sets; left out when it sets none.
- `services`: host service name -> the workers whose tools declare it (`service:NAME` grants,
  sorted); left out when no tool declares one. The runtime checks a run was given them without
  reading workers.
"""

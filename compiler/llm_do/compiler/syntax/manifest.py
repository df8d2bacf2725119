"""project.json, version 1: the pydantic model the manifest is validated against.

Strict everywhere (`extra="forbid"`): a misspelt key is an error with a did-you-mean hint rather
than a setting that silently does nothing. runtime/llm_do/cli/schemas/project.schema.json is generated from it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from llm_do.bundle.approval import ApprovalMode
from llm_do.bundle.flow import Label, PathLabel
from llm_do.bundle.model import DEFAULT_RISE_FACTOR, DEFAULT_UNPRICED
from llm_do.toolkit.model_defaults import empty_dict, empty_list


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Entry(StrictModel):
    """Where a run starts (a worker, or one Python function that orchestrates workers), and its
    default input."""

    worker: str | None = Field(default=None, description="Name of the entry worker (default: `main`).")
    function: str | None = Field(
        default=None, description="`PATH.py:NAME`: a Python function as the entry, instead of a worker."
    )
    calls: list[str] | None = Field(
        default=None, description="With `function`: the workers the function may call (default: every worker)."
    )
    args: dict[str, Any] | None = Field(
        default=None, description="Default input, validated against the entry worker's input schema at build time."
    )


class UsageLimitsSettings(StrictModel):
    """Limits of one run, with pydantic-ai's `UsageLimits` field names."""

    request_limit: int | None = Field(default=None, ge=0, description="Most model requests in a run (pydantic-ai default: 50).")
    tool_calls_limit: int | None = Field(default=None, ge=0)
    input_tokens_limit: int | None = Field(default=None, ge=0)
    output_tokens_limit: int | None = Field(default=None, ge=0)
    total_tokens_limit: int | None = Field(default=None, ge=0)
    per_request_input_tokens_limit: int | None = Field(default=None, ge=0)
    cost_limit: float | None = Field(default=None, ge=0)
    count_tokens_before_request: bool | None = None


class RuntimeSettings(StrictModel):
    max_depth: int = Field(default=5, ge=1, le=1000, description="Deepest call depth; the entry runs at depth 1.")
    approval_mode: ApprovalMode = Field(default="prompt", description="What happens to tool calls that need approval.")
    usage_limits: UsageLimitsSettings | None = None


class Defaults(StrictModel):
    """Model settings for workers that set none."""

    model: str | None = Field(default=None, description="Provider-prefixed model name, e.g. `openai:gpt-4o`.")
    model_settings: dict[str, Any] | None = Field(default=None, description="pydantic-ai ModelSettings.")


class McpServer(StrictModel):
    """One MCP server, in the shape of `.mcp.json` (`command`/`args`/`env` for a stdio server,
    `url`/`headers` for streamable HTTP), plus what llm-do locks and exposes of it. `${VAR}` and
    `${VAR:-default}` in strings are expanded from the environment when the server is started,
    never written into the bundle expanded."""

    command: str | None = Field(default=None, description="Program of a stdio server, started in the project root.")
    args: list[str] = Field(default_factory=empty_list, description="Its arguments.")
    env: dict[str, str] = Field(default_factory=empty_dict, description="Environment variables for it (use `${VAR}` for secrets).")
    url: str | None = Field(default=None, description="URL of a streamable HTTP server (SSE when the path ends in `/sse`).")
    headers: dict[str, str] = Field(default_factory=empty_dict, description="HTTP headers (use `${VAR}` for secrets).")
    allowed_tools: list[str] | None = Field(default=None, description="The only tools exposed (default: all the server lists).")
    prefix: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_-]*$",
                               description="Exposed tool names become `PREFIX_NAME` (default: as the server names them).")
    required: bool = Field(default=True, description="Started and checked when a run starts; `false`: when first used.")
    opaque: bool = Field(default=False, description="Its tools are not listed at build (a warning; `custom:*` capabilities).")
    labels: list[Label] | None = Field(
        default=None, description="The information-flow labels of its tools (default: `untrusted` and `egress`).")
    tool_labels: dict[str, list[Label]] = Field(
        default_factory=empty_dict, description="Labels of single tools, by the server's name of the tool; they replace `labels`.")


class FlowAcceptance(StrictModel):
    """A flow from private data and untrusted content to an egress the project means to have."""

    worker: str = Field(description="The worker (or the entry function's label) the flow is accepted for.")
    private: list[str] = Field(min_length=1, description="Capabilities of the private leg (`*`: any).")
    untrusted: list[str] = Field(min_length=1, description="Capabilities of the untrusted leg, `input` for the run's input (`*`: any).")
    egress: list[str] = Field(min_length=1, description="Capabilities of the egress leg (`*`: any).")
    reason: str = Field(min_length=1, description="Why the flow is safe or wanted; reviewers read it.")


class Flows(StrictModel):
    """Information flow: what the project's paths and inputs are, and the flows it accepts."""

    inputs: Literal["untrusted", "trusted", "private"] = Field(
        default="untrusted", description=(
            "What a run is given from outside (input, attachments): untrusted unless said otherwise; `private`: the "
            "owner's own request, trusted but not to be published, so every frame of a run holds private data."))
    paths: dict[str, PathLabel] = Field(
        default_factory=empty_dict, description="Project folders by label: `private`, `published` (others read it) or `untrusted` (others fill it).")
    accept: list[FlowAcceptance] = Field(default_factory=empty_list, description="Flows the project means to have.")


class DeclaredPrice(StrictModel):
    """The price of a model genai-prices does not know (a local or custom model), or a price the
    project bills at instead of genai-prices' (a negotiated rate)."""

    input_mtok: float = Field(ge=0, description="USD per million input tokens.")
    output_mtok: float = Field(ge=0, description="USD per million output tokens.")
    request: float = Field(default=0, ge=0, description="USD per request, besides its tokens.")
    context_window: int | None = Field(
        default=None, ge=1, description="The most input tokens one request may have (bounds one request's cost).")


class CostSettings(StrictModel):
    """What runs cost: prices the project declares, how far `diff` lets a bound rise, and what a
    budgeted run does with a response it cannot price."""

    prices: dict[str, DeclaredPrice] = Field(
        default_factory=empty_dict,
        description="Prices by model name (`ollama:llama3.2`) or pattern (`ollama:*`); they replace genai-prices' for those models.")
    rise_factor: float = Field(
        default=DEFAULT_RISE_FACTOR, gt=1, description="`diff`: a cost bound that rises by more than this factor is a high-risk change.")
    unpriced: Literal["stop", "accept"] = Field(
        default=DEFAULT_UNPRICED, description="A run with `--max-cost` and a response it cannot price: `stop` before the next "
        "request, or `accept` it at its worst case with a warning.")


class ProjectManifest(StrictModel):
    """project.json: which files make the project, where a run starts, and how it runs."""

    version: Literal[1] = Field(description="Format version of this file.")
    name: str | None = None
    worker_files: list[str] = Field(
        default_factory=empty_list, description="Paths or glob patterns of .worker files (`**` is recursive)."
    )
    python_files: list[str] = Field(default_factory=empty_list, description="Python files with schemas, TOOLS and TOOLSETS.")
    entry: Entry | None = None
    runtime: RuntimeSettings = Field(default_factory=RuntimeSettings)
    defaults: Defaults = Field(default_factory=Defaults)
    vars: dict[str, Any] = Field(default_factory=empty_dict, description="Variables every worker's template sees.")
    suppress: list[str] = Field(default_factory=empty_list, description="Warning codes not to report, e.g. `G003`.")
    generated_agents_dir: str | None = Field(
        default=None, description="The .agent era's folder for created agents: the default `path` of the "
        "worker_create and dynamic_agents toolsets (relative to the project root)."
    )
    mcp_servers: dict[str, McpServer] = Field(
        default_factory=empty_dict, description="MCP servers as toolsets, by the name workers list them under in `toolsets`."
    )
    flows: Flows = Field(default_factory=Flows, description="Information-flow labels of paths and inputs, and accepted flows.")
    cost: CostSettings = Field(default_factory=CostSettings, description="Declared prices, the diff's rise factor, unpriced responses.")

    @property
    def entry_function(self) -> str | None:
        return self.entry.function if self.entry else None

    @property
    def entry_worker(self) -> str:
        return (self.entry.worker if self.entry else None) or "main"

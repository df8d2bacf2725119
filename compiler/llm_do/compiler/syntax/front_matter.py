"""The front matter of a .worker file: where it ends (`split_front_matter`) and the pydantic model
it is validated against.

runtime/llm_do/cli/schemas/worker.schema.json is generated from it, so editors can validate front matter.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema

from llm_do.toolkit.model_defaults import empty_list

from ..codes import Rule
from .front_matter_split import split_front_matter
from .yaml_document import YamlProblem

NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_-]*$"


class ToolsetRef(BaseModel):
    """One `toolsets:` item: a name, with settings when written as a one-key mapping."""

    model_config = ConfigDict(frozen=True)

    name: str
    settings: dict[str, Any] | None = None


def _toolset_ref(value: Any) -> Any:
    if isinstance(value, ToolsetRef):
        return value
    if isinstance(value, str):
        return ToolsetRef(name=value)
    if isinstance(value, dict) and len(value) == 1:
        ((name, settings),) = value.items()
        if isinstance(name, str) and (settings is None or isinstance(settings, dict)):
            return ToolsetRef(name=name, settings=settings or {})
        if isinstance(name, str):
            raise ValueError(f"the settings of '{name}' must be a mapping")
    raise ValueError("a toolsets item is a name, or a mapping of one name to its settings")


ToolsetItem = Annotated[
    ToolsetRef,
    BeforeValidator(_toolset_ref),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string"},
                {"type": "object", "minProperties": 1, "maxProperties": 1, "additionalProperties": {"type": ["object", "null"]}},
            ]
        }
    ),
]


class AttachmentPolicy(BaseModel):
    """What a caller may attach to this worker's prompt."""

    model_config = ConfigDict(extra="forbid")

    max_count: int | None = Field(default=None, ge=0)
    max_total_bytes: int | None = Field(default=None, ge=0)
    allowed_suffixes: list[str] | None = Field(default=None, description="e.g. ['.pdf', '.png']")


class ServerSideTool(BaseModel):
    """A provider-side tool of the `.agent` era, run by the model's provider, not by llm-do."""

    model_config = ConfigDict(extra="allow")

    tool_type: Literal["web_search", "web_fetch", "code_execution", "image_generation"]


class WorkerFrontMatter(BaseModel):
    """What a worker declares between the `---` lines."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, pattern=NAME_PATTERN,
                             description="Defaults to the file stem; a `worker.worker` is named after its directory.")
    description: str | None = Field(default=None, description="Shown to workers that call this one.")
    model: str | None = Field(default=None, description="Provider-prefixed model name, e.g. `anthropic:claude-sonnet-4-5`.")
    compatible_models: list[str] | None = Field(
        default=None, description="Case-sensitive fnmatch patterns of models this worker runs on."
    )
    model_settings: dict[str, Any] | None = None
    schema_in_ref: str | None = Field(default=None, description="`path.py:Class` or `package.module:Class`, a WorkerArgs.")
    schema_out_ref: str | None = Field(default=None, description="A pydantic model the output is validated against.")
    toolsets: list[ToolsetItem] = Field(
        default_factory=empty_list, description="Stdlib toolsets, Python toolsets and workers this worker may call."
    )
    tools: list[str] = Field(default_factory=empty_list, description="Python tools from the TOOLS of python_files.")
    calls: list[str] = Field(
        default_factory=empty_list, description="Workers this worker's Python tools call (`ctx.deps.call_worker`): edges of the call graph."
    )
    approvals: list[str] = Field(default_factory=empty_list, description="Rules `allow TOOL`, `ask TOOL`, `deny TOOL`.")
    recursive: bool = Field(default=False, description="This worker may take part in a call cycle.")
    entry: bool = Field(default=False, description="This worker is the entry of a project without project.json and main.worker.")
    quarantined: bool = Field(default=False, strict=True, description=(
        "Its callers' models get a reference to its output, never its words; a call that uses the reference carries "
        "what it took in."))
    attachments: AttachmentPolicy | None = None
    server_side_tools: list[ServerSideTool] = Field(
        default_factory=empty_list, description="Provider-side tools (e.g. `{tool_type: web_search}`), passed to the runtime."
    )


def has_entry_mark(text: str) -> bool:
    """Whether a worker file's front matter says `entry: true` (False for one that does not parse):
    how a folder without project.json and main.worker is known to be a project."""
    split = split_front_matter(text)
    if isinstance(split, Rule):
        return False
    from .yaml_positions import load_yaml  # PyYAML: only for a folder without project.json

    doc = load_yaml(split[0], line_offset=1)
    return not isinstance(doc, YamlProblem) and isinstance(doc.data, dict) and doc.data.get("entry") is True

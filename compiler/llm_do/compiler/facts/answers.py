"""What introspection learns about the project's Python: the answer of the subprocess (or of the
static reader), as plain data the resolve stage consumes."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class PyError(BaseModel):
    message: str
    file: str | None = None
    """Relative to the project root when the error came from a project file."""
    line: int | None = None
    column: int | None = None


class ToolFact(BaseModel):
    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = None
    line: int | None = None


class ToolsetFact(BaseModel):
    name: str
    tools: list[ToolFact] | None = None
    """None: opaque, its tools cannot be listed at build time."""
    opaque_reason: str | None = None
    line: int | None = None


class ModuleFact(BaseModel):
    file: str
    module: str
    error: PyError | None = None
    tools: list[ToolFact] = Field(default_factory=list)
    toolsets: list[ToolsetFact] = Field(default_factory=list)
    tools_export: str | None = None
    """`TOOLS`, `__all__`, or None when the module exports no tools."""
    export_errors: list[PyError] = Field(default_factory=list)
    complete: bool = True
    """False when the module's exports could not all be read (static reading of a dynamic export)."""
    capabilities: dict[str, list[str]] = Field(default_factory=dict)
    """The module's literal CAPABILITIES: tool or toolset name -> what it can do beyond
    `custom:NAME` (`net:api.example.com`, `fs.write:project/out/**`); read from the text, never run."""


class ClassFact(BaseModel):
    ref: str
    module: str
    qualname: str
    file: str | None = None
    """The project file that defines it, relative to the root; None for an installed module."""
    error: PyError | None = None
    """The module did not import."""
    found: bool = False
    candidates: list[str] = Field(default_factory=list)
    is_model: bool = False
    is_worker_args: bool = False
    abstract: bool = False
    json_schema: dict[str, Any] | None = None
    schema_error: str | None = None
    line: int | None = None
    certain: bool = True
    """False when read statically and a base class lies outside the file: kinds unknown."""


class ArgsCheck(BaseModel):
    ref: str
    errors: list[dict[str, Any]] = Field(default_factory=list)
    """pydantic errors: loc, msg, type."""


class FunctionFact(BaseModel):
    """The entry function (`entry.function`), as the subprocess found it."""

    ref: str
    error: PyError | None = None
    """Its module did not import."""
    found: bool = False
    candidates: list[str] = Field(default_factory=list)
    """The module's public functions, for a did-you-mean."""
    problem: str | None = None
    """Why it cannot be an entry function (not a function, a signature it cannot take)."""
    line: int | None = None
    input: ClassFact | None = None
    """Its input's annotation when that is a WorkerArgs subclass (else it takes PromptInput)."""
    args_errors: list[dict[str, Any]] = Field(default_factory=list)
    """entry.args validated against that input: pydantic errors (loc, msg, type)."""


class ImportEnvironment(BaseModel):
    """What the child's imports read, in the project and outside it: the introspection cache's checks."""

    module_files: dict[str, list[int]] = Field(default_factory=dict)
    """Module file -> [modification time in ns, size]."""
    path_folders: dict[str, int | None] = Field(default_factory=dict)
    """Folder on `sys.path` -> its modification time in ns (None: missing)."""
    project_files: list[str] = Field(default_factory=list)
    """Project files the child opened for reading (bytecode as its source), relative to the root."""
    project_folders: list[str] = Field(default_factory=list)
    """Project folders the child listed, relative to the root."""
    variables: list[str] = Field(default_factory=list)
    """Environment variables the project's code read (`*`: it listed their names)."""
    outside_files: dict[str, list[int] | None] = Field(default_factory=dict)
    """File or folder outside the project that the project's code opened or listed -> [modification
    time in ns, size] (None: missing)."""


class Facts(BaseModel):
    imported: bool
    modules: dict[str, ModuleFact] = Field(default_factory=dict)
    classes: dict[str, ClassFact] = Field(default_factory=dict)
    args_checks: list[ArgsCheck] = Field(default_factory=list)
    loaded_files: list[str] = Field(default_factory=list)
    """Project files the imports loaded (helper modules included): hashed sources of the bundle."""
    packages: dict[str, str] = Field(default_factory=dict)
    """Distribution name -> version, for `package.module` references."""
    model_factories: dict[str, str] = Field(default_factory=dict)
    """Provider prefix -> the project file whose import registered a model factory for it
    (`llm_do.register_model_factory`)."""
    entry_function: FunctionFact | None = None
    failure: PyError | None = None
    """The subprocess itself failed or timed out; `failure_code` says which."""
    failure_code: str | None = None
    environment: ImportEnvironment | None = None
    """Set by the child; the cache keeps an answer only with it."""

    @property
    def import_failed(self) -> bool:
        """Whether importing the project's Python raised (the cache keeps no such answer)."""
        return (any(m.error is not None for m in self.modules.values()) or any(c.error is not None for c in self.classes.values())
                or (self.entry_function is not None and self.entry_function.error is not None))


class ClassRequest(BaseModel):
    ref: str
    module: str
    qualname: str
    file: str | None = None


class FunctionRequest(BaseModel):
    ref: str
    module: str
    qualname: str
    file: str | None = None
    args: dict[str, Any] | None = None
    """entry.args, to validate against the function's input."""


class Request(BaseModel):
    root: str
    python_files: list[str]
    classes: list[ClassRequest]
    validate_args: list[tuple[str, dict[str, Any]]] = Field(default_factory=list)
    entry_function: FunctionRequest | None = None
    agent_era: bool = False
    """The project has `.agent` files: its Python gets pydantic-ai 1.x's `FunctionToolset.tool`
    (see `llm_do.runtime.legacy_tools`)."""


class McpToolFact(BaseModel):
    name: str
    description: str | None = None
    input_schema: dict[str, Any] = Field(default_factory=dict)


class McpServerFact(BaseModel):
    """What listing one MCP server at build found: its tools, or why it could not be listed."""

    name: str
    tools: list[McpToolFact] | None = None
    error: str | None = None
    unreached: bool = False
    """A remote server not reached (`llm-do test` offline) that no cassette recorded: X008."""


class McpRequest(BaseModel):
    root: str
    servers: dict[str, dict[str, Any]]
    """Name -> the connection as written (`llm_do.bundle.mcp_config.CONNECTION_KEYS`), `${VAR}`s unexpanded."""
    start_timeout: float


class McpFacts(BaseModel):
    servers: dict[str, McpServerFact] = Field(default_factory=dict)
    failure: str | None = None
    """The listing subprocess itself failed or timed out."""

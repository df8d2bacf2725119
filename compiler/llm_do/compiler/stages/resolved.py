"""What the resolve stage produces: the project's symbol table (`ResolvedProject`), its workers
with their tools and approvals, and what earlier errors left unknown (`Unknowns`).

The check, lower and analysis stages read these records; `resolve` (stage 4) builds them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..diagnostics import Location
from ..syntax.manifest import ProjectManifest
from ..syntax.schema_refs import SchemaRef
from .load import LoadedProject
from .parse import ParsedWorker

if TYPE_CHECKING:
    from ..analysis.flows.labels import LabelPolicy
    from ..approvals.nodes import ApprovalRule
    from ..code.fingerprint import CodeIndex
    from ..facts.answers import ClassFact, ModuleFact, ToolFact, ToolsetFact
    from ..facts.no_python import ProjectFacts
    from .mcp_servers import McpServerInfo
    from .resolve_entry import ResolvedEntryFunction

ToolsetKind = Literal["stdlib", "python", "worker", "mcp"]


@dataclass(frozen=True)
class Unknowns:
    """What earlier errors left unknown. A reference into it is a follow-on of an error already
    reported, not a problem of its own, so resolve reports nothing for it (the cascade rule)."""

    workers: frozenset[str] = frozenset()
    """Names (file stems) of worker files that failed to load or parse."""
    python: bool = False
    """A python_files entry could not be read, so the project's tools and toolsets are not all known."""
    any_worker: bool = False
    """worker_files lost an entry to an error, so any unknown name may be a worker."""
    entry: bool = False
    """`entry` lost its value to an error, so the entry worker's name is not known."""


@dataclass(frozen=True)
class PythonToolset:
    key: str
    module: ModuleFact
    fact: ToolsetFact


@dataclass(frozen=True)
class PythonTool:
    module: ModuleFact
    fact: ToolFact

    @property
    def toolset_key(self) -> str:
        """Tools of one module's TOOLS form one toolset node in the bundle."""
        return f"{self.module.module}.{self.module.tools_export or 'TOOLS'}"


@dataclass(frozen=True)
class PythonScope:
    """The Python tools and toolsets one directory worker has of its own (its `tools.py`), by name."""

    toolsets: dict[str, PythonToolset] = field(default_factory=dict)
    tools: dict[str, PythonTool] = field(default_factory=dict)


@dataclass
class ResolvedToolsetUse:
    """A `toolsets:` entry of a worker, resolved: what it names and its settings."""

    kind: ToolsetKind
    name: str
    settings: dict[str, Any]
    at: Location
    opaque_approval: str | None = None
    """For an opaque Python toolset: the approval of the tools it turns out to have."""
    listed_as: str = ""
    """The name the worker lists it by, when `name` (the bundle's key) is another: a directory
    worker's own toolset (`helpers`, keyed `workers.formatter.tools.helpers`)."""

    @property
    def group(self) -> str:
        """The name approval rules target it by."""
        return self.listed_as or self.name


@dataclass
class ResolvedTool:
    name: str
    kind: Literal["stdlib", "python_toolset", "python_tool", "worker", "mcp"]
    toolset: str | None
    """Bundle key of the toolset node providing it (None for a worker call)."""
    group: str
    """The name approvals can target it by as a group: its toolset, or the worker."""
    default_approval: str
    at: Location
    approval: str = ""
    worker: str | None = None
    rules: list[ApprovalRule] = field(default_factory=list)
    """When a conditional rule targets it: every rule of the worker that applies to it, in order."""


@dataclass
class ResolvedWorker:
    parsed: ParsedWorker
    toolsets: list[ResolvedToolsetUse] = field(default_factory=list)
    tools: dict[str, ResolvedTool] = field(default_factory=dict)
    calls: dict[str, Location] = field(default_factory=dict)
    """Workers this one may call, with the `toolsets` item that says so."""
    input_ref: SchemaRef | None = None
    output_ref: SchemaRef | None = None
    input_class: ClassFact | None = None
    output_class: ClassFact | None = None
    rules: list[ApprovalRule] = field(default_factory=list)
    unknown_names: set[str] = field(default_factory=set)
    """Names its tools may have that are unknown because of an error already reported: references
    that did not resolve, the tools of a stdlib toolset whose settings are invalid."""
    tools_unknown: bool = False
    """Its tool list may lack tools whose names nobody knows (a `toolsets`/`tools` value dropped
    by an error, or a reference held back because the project's Python is not all known)."""
    calls_unknown: bool = False
    """It may call workers the graph does not show (its `toolsets` value dropped by an error, or
    a call to a worker whose file failed to parse)."""
    maybe_calls: set[str] = field(default_factory=set)
    """Workers an unknown reference probably means (its did-you-mean)."""
    unlisted: list[str] = field(default_factory=list)
    """Toolsets whose tools the text does not show (`--no-import`): a rule may target one of them."""
    unresolved: list[str] = field(default_factory=list)
    """The texts of its rules that match no tool the text shows but may match one of `unlisted` (C002)."""
    grants: list[dict[str, Any]] | None = field(default=None, repr=False, compare=False)
    """Its own capabilities as the bundle records them, once `capability_grants.worker_grants`
    has computed them: the check stage's R rules and lower share one computation."""

    @property
    def name(self) -> str:
        return self.parsed.name


@dataclass
class ResolvedProject:
    loaded: LoadedProject
    manifest: ProjectManifest
    workers: dict[str, ResolvedWorker]
    facts: ProjectFacts
    python_toolsets: dict[str, PythonToolset]
    """Every Python toolset by its key: the project's by name, a directory worker's by module and name."""
    python_tools: dict[str, PythonTool]
    """The project's Python tools (of python_files), by name."""
    entry: str
    """The entry worker's name, or the entry function's label."""
    entry_function: ResolvedEntryFunction | None = None
    mcp_servers: dict[str, McpServerInfo] = field(default_factory=dict)
    own_python: dict[str, PythonScope] = field(default_factory=dict)
    """Directory workers' own Python, by worker name."""
    code_index: CodeIndex | None = field(default=None, repr=False, compare=False)
    """The project's Python as `ast` reads it, made on first use (`project_code_index`)."""
    label_policy: LabelPolicy | None = field(default=None, repr=False, compare=False)
    """What project.json says of paths and MCP servers, made on first use (`flows.grant_labels`)."""
    inert_acceptances: frozenset[int] | None = field(default=None, repr=False, compare=False)
    """The `flows.accept` entries that accept nothing (R006), by index, found on first use
    (`stages.check.flows.inert_acceptances`)."""

    def python_tool(self, worker: str, name: str) -> PythonTool | None:
        """The Python tool `name` as `worker` sees it: its own first, then the project's."""
        own = self.own_python.get(worker)
        return (own.tools.get(name) if own else None) or self.python_tools.get(name)

    def python_toolset(self, worker: str, name: str) -> PythonToolset | None:
        own = self.own_python.get(worker)
        found = own.toolsets.get(name) if own else None
        return found or (self.python_toolsets.get(name) if "." not in name else None)

    def worker_location(self, name: str) -> Location:
        return self.workers[name].parsed.name_location


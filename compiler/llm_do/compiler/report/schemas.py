"""The JSON documents `llm-do diff --format json` and `llm-do capabilities --format json` print,
as pydantic models: runtime/llm_do/cli/schemas/diff.schema.json and capabilities.schema.json are generated from
them (spec/generate.py), and the tests validate real output against them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..diff.bundle import Area, Severity, Verb
from ..diff.unread_sides import UnreadKind


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DiffChange(_Strict):
    severity: Severity
    verb: Verb
    area: Area
    subject: str = Field(description="What changed, e.g. `fs.write:project/** of main`, `call main -> writer`.")
    worker: str | None = Field(description="The worker the change belongs to; null for the project.")
    before: str | None
    after: str | None
    note: str | None = Field(description="`breaking`, `relaxed`, `tightened`, `approval relaxed`, "
                                         "`approval tightened`, or `path A -> B` for a capability.")
    detail: list[str] = Field(description="Extra lines: an instructions diff, the schema fields that changed.")
    kind: str | None = Field(description="A capability change's kind (`fs.write`, `mcp`, `custom`).")
    scope: str | None = Field(description="A capability change's scope (`project/out/**`), as written after the kind.")
    gate: Literal["allow", "conditional", "auto", "ask", "deny"] | None = Field(
        description="Capability: the gate of its path after the change (before, when removed); approval: the new one.")
    file: str | None = Field(description=(
        "The project file its cause is written in (a worker's, `project.json`, a Python module), on the new side "
        "(the old one when removed)."))
    line: int | None = Field(description=(
        "The line of its cause in that file: the front-matter key, approval rule, `tools`/`toolsets`/`calls` entry, "
        "the `def` of a Python tool, the project.json key; null when the side is a bundle.lock (no positions)."))


class DiffEntry(DiffChange):
    """One cause: its leading change's fields, the workers that see it, the changes folded in."""

    workers: list[str] = Field(description=(
        "The workers that see it: those that reach a capability through this one cause (a tool or rule at a "
        "shared leaf), those that run the code or read the description it is about, else its own worker."))
    folded: list[DiffChange] = Field(description=(
        "Changes with the same cause, folded into this entry: what it makes each worker reach."))


class NotCompared(_Strict):
    kind: UnreadKind
    subject: str = Field(description="`tools of MCP server srv`, `schemas of writer`, `tools built by code in tools.py`.")
    file: str = Field(description="The project file it comes from.")
    workers: list[str] = Field(description="The workers that use it directly.")


class DiffSummary(_Strict):
    high: int
    medium: int
    low: int


class DiffCallEdge(_Strict):
    from_: str = Field(alias="from")
    to: str


class DiffCalls(_Strict):
    added: list[DiffCallEdge]
    removed: list[DiffCallEdge]


class DiffDocument(_Strict):
    format: Literal[2]
    old: str
    new: str
    equal: bool = Field(description="True when the two mean the same (no change at all).")
    summary: DiffSummary = Field(description="Entries by severity (an entry's is its most severe change's).")
    changes: list[DiffEntry] = Field(description=(
        "One entry per cause, risky first: by severity, then area, worker and subject."))
    not_compared: list[NotCompared] = Field(description=(
        "With --no-import: what the text could not show, so was not compared (empty otherwise)."))
    calls: DiffCalls


class GatedStep(_Strict):
    worker: str
    tool: str | None = None
    toolset: str | None = None
    model: str | None = None
    approval: Literal["allow", "conditional", "auto", "ask", "deny"]
    by: Literal["default", "rule", "rules"]
    rules: list[str] | None = None
    paths_in: str | None = Field(default=None, description=(
        "With rules: the toolset's root their path conditions are relative to (`docs/`, `the project`)."))


class WorkerCapability(_Strict):
    capability: str
    path: list[str] = Field(description="From the worker itself to the one that has the capability.")
    tool: str | None = None
    toolset: str | None = None
    model: str | None = None
    gate: Literal["allow", "conditional", "auto", "ask"] = Field(description="The strongest approval on the path.")
    gated_steps: list[GatedStep]
    side_effect: bool
    labels: list[Literal["private", "untrusted", "egress"]] = Field(description=(
        "Its information-flow labels (spec/language.md, `flows`)."))
    asked_only_labels: list[Literal["private", "untrusted", "egress"]] = Field(description=(
        "The labels it has only for calls that are asked: conditional rules of the tool at the end of the path "
        "confine the calls they allow to folders without them (spec/language.md, `Labels`)."))


class FlowLeg(_Strict):
    capability: str = Field(description="What gives the leg: a capability, or `input` (the run's input).")
    path: list[str] = Field(description="From the worker itself to the one that has it.")
    tool: str | None = None
    toolset: str | None = None
    model: str | None = None
    input: str | None = Field(default=None, description="`input` when the leg is the run's input.")
    gate: Literal["allow", "conditional", "auto", "ask"] = Field(description="The strongest approval on the least gated path.")
    gated_steps: list[GatedStep]


class FlowLegs(_Strict):
    private: FlowLeg
    untrusted: FlowLeg
    egress: FlowLeg


class FlowSources(_Strict):
    private: list[FlowLeg]
    untrusted: list[FlowLeg]
    egress: list[FlowLeg]


class AcceptedFlow(_Strict):
    worker: str
    private: list[str]
    untrusted: list[str]
    egress: list[str]
    reason: str


class WorkerFlow(_Strict):
    worker: str
    status: Literal["armed", "gated", "accepted"] = Field(description=(
        "`armed`: the egress is reachable with no `ask` on the way; `gated`: every path to it is asked; "
        "`accepted`: armed, and accepted in project.json."))
    legs: FlowLegs = Field(description="Each leg by its least gated path.")
    provider: FlowLeg | None = Field(default=None, description=(
        "An armed egress through a server-side tool, which no approval can gate."))
    accepted: AcceptedFlow | None = None
    sources: FlowSources = Field(description=(
        "Every capability that gives each leg, least gated first: what a `flows.accept` entry must name "
        "(the egress ones reachable with nobody asked)."))


class CostGap(_Strict):
    kind: Literal["unpriced", "unbounded"]
    worker: str
    model: str | None = Field(description="Null: the model the run is given (the worker names none, nor the project).")
    why: str


class CostRequest(_Strict):
    worker: str
    model: str
    request_usd: str = Field(description="What one request of it can cost at most, rounded up to the cent.")
    path: list[str] = Field(description="From the entry to the worker (the entry's bound only; else empty).")


class CostBoundDocument(_Strict):
    status: Literal["bounded", "unbounded", "unpriced"]
    usd: str | None = Field(description="USD a run can cost at most, rounded up to the cent; null when not bounded.")
    requests: int = Field(description="The run's request limit.")
    models: list[str | None] = Field(description="The models its workers may run on (null: the run's choice).")
    dominant: CostRequest | None = Field(default=None, description="The dearest request the run can make.")
    limits: list[str] = Field(default_factory=list, description="The run limits the figure comes from (`request_limit 50`).")
    gaps: list[CostGap] = Field(default_factory=list, description="Why it is not bounded (the first 20).")
    more_gaps: bool = False


class WorkerCapabilities(_Strict):
    name: str
    capabilities: list[WorkerCapability]
    unknown: list[str] = Field(description=(
        "With --no-import: what it or a callee uses that could not be listed (`tools of MCP server srv`)."))
    flow: WorkerFlow | None = Field(description="The lethal trifecta it holds, if it holds one.")
    declassifies: str | None = Field(default=None, description=(
        "Its output schema (as `schema_out_ref` names it) when that can carry no free text: its callers take in no "
        "untrusted content from it (spec/language.md, \"Declassifying callees\"); null otherwise."))
    quarantined: bool = Field(default=False, description=(
        "Its callers' models get a reference to its output, never its words (spec/language.md, \"Quarantined callees\")."))
    cost: CostBoundDocument = Field(description=(
        "What a run can cost at most: from the entry (the entry's), or with this worker as the first one."))


class CapabilitiesDocument(_Strict):
    format: Literal[1]
    entry: str
    workers: list[WorkerCapabilities] = Field(description="The entry first, then by name.")
    cost_prices: str = Field(description="The prices the bounds are computed with: the genai-prices release.")
    cost_model: str | None = Field(description="The `--model` every worker was bounded on; null: their own models.")

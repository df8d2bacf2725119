"""The most a run can cost: from the entry, or from a worker called on its own (spec/cost.md).

A run's requests, all its workers' together, are at most `request_limit` (pydantic-ai's default,
50, when the project sets none; the runtime counts a request when it is sent, so parallel calls
cannot pass it). Each is a request of some worker the run can reach on some model it may run on,
so it costs at most the dearest of their worst requests (`llm_do.pricing.ceiling`). The run's token
limits that are checked before each request (`input_tokens_limit`, `total_tokens_limit`) cap the
tokens of all requests but those under way when the limit is crossed: at most `in_flight` of them,
one per worker call running at that moment. So the bound is the dearest way to spend the tokens
the limits allow, plus every request's fixed charges:

    tokens:  input <= min(N * in, input_tokens_limit + K * in); output <= N * out;
             input + output <= total_tokens_limit + K * (in + out)
    cost  <= max(input * input_rate + output * output_rate) + N * fixed

with N the request limit, K the requests that can be under way at once, and `in`, `out`, the rates
and `fixed` the largest of the reachable workers' worst requests. `output_tokens_limit` is checked
only after a response, and a Python tool can go on after the call that crossed it fails, so the
bound does not count on it; nor on `cost_limit`, which pydantic-ai enforces with the costs it could
price.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property
from typing import Any, Literal

from llm_do.pricing.ceiling import WorstRequest, worst_request
from llm_do.pricing.rates import ZERO
from llm_do.pricing.sheets import price_sheet

from .inputs import CostInputs
from .models import CHOSEN, worker_models

DEFAULT_REQUEST_LIMIT = 50
"""pydantic-ai's `UsageLimits.request_limit` when the project sets none."""
MAX_GAPS = 20
"""Gaps kept per bound (the first, by worker and model): a report names them, it need not list thousands."""


@dataclass(frozen=True)
class Costly:
    """A worker on one model, at its worst request."""

    worker: str
    model: str
    worst: WorstRequest

    @property
    def cost(self) -> Decimal:
        assert self.worst.cost is not None
        return self.worst.cost


@dataclass(frozen=True)
class Gap:
    """Why a bound is missing: a worker on a model with no price (`unpriced`) or whose request has
    no worst case (`unbounded`)."""

    kind: Literal["unpriced", "unbounded"]
    worker: str
    model: str
    why: str


@dataclass
class _Summary:
    """What a set of workers contributes to a bound: the largest of their worst requests' parts."""

    input_tokens: int = 0
    output_tokens: int = 0
    input_rate: Decimal = ZERO
    output_rate: Decimal = ZERO
    fixed: Decimal = ZERO
    dominant: Costly | None = None
    gaps: list[Gap] = field(default_factory=list)
    more_gaps: bool = False
    """There are more than `MAX_GAPS`."""
    parallel: bool = False
    """Some worker's Python may call workers several at a time (or it creates workers)."""
    models: set[str] = field(default_factory=set)

    def add(self, other: _Summary) -> None:
        if other.input_tokens > self.input_tokens:
            self.input_tokens = other.input_tokens
        if other.output_tokens > self.output_tokens:
            self.output_tokens = other.output_tokens
        if other.input_rate > self.input_rate:
            self.input_rate = other.input_rate
        if other.output_rate > self.output_rate:
            self.output_rate = other.output_rate
        if other.fixed > self.fixed:
            self.fixed = other.fixed
        if other.dominant is not None and other.dominant is not self.dominant and (self.dominant is None or _dearer(other.dominant, self.dominant)):
            self.dominant = other.dominant
        if other.gaps:
            every = sorted({*self.gaps, *other.gaps}, key=_gap_key)
            self.gaps, self.more_gaps = every[:MAX_GAPS], self.more_gaps or other.more_gaps or len(every) > MAX_GAPS
        self.parallel = self.parallel or other.parallel
        self.models |= other.models


@dataclass(frozen=True)
class CostBound:
    root: str
    usd: Decimal | None
    """USD at most; None when a gap leaves it unknown."""
    requests: int
    dominant: Costly | None
    """The dearest request the run can make."""
    path: tuple[str, ...] = ()
    """From the root to the dominant request's worker (the entry's bound only)."""
    gaps: tuple[Gap, ...] = ()
    """The first `MAX_GAPS`, by worker and model."""
    more_gaps: bool = False
    shaped_by: tuple[str, ...] = ()
    """The run limits the figure came from (`request_limit 50`, `total_tokens_limit 200000`)."""
    models: tuple[str, ...] = ()
    """The models its workers may run on (`CHOSEN`, the run's choice, shown as such)."""

    @property
    def status(self) -> Literal["bounded", "unbounded", "unpriced"]:
        if self.usd is not None:
            return "bounded"
        return "unbounded" if any(g.kind == "unbounded" for g in self.gaps) else "unpriced"


class CostAnalysis:
    """The bounds of one project (`inputs`): the entry's, and each worker's as a callee."""

    def __init__(self, inputs: CostInputs) -> None:
        self.inputs = inputs
        self._worst: dict[tuple[str, int, int], WorstRequest | None] = {}
        """(model, id of the settings, id of the provider tools) -> the worst request (None: no
        price): workers mostly share their model and settings (the default's), so one per kind.
        By identity: the objects live as long as `inputs`."""

    @cached_property
    def models(self) -> dict[str, frozenset[str]]:
        return worker_models(self.inputs)

    @cached_property
    def own(self) -> dict[str, _Summary]:
        """Each worker alone, on every model it may run on."""
        return {name: self._own(name) for name in self.inputs.workers}

    def _own(self, name: str) -> _Summary:
        inputs = self.inputs
        worker = inputs.workers[name]
        summary = _Summary(parallel=worker.python_calls or worker.creates_workers)
        summary.models = set(self.models[name])
        if worker.creates_workers:
            summary.gaps.append(Gap("unpriced", name, "*", "it creates workers in the run, on whatever model its model names (worker_create)"))
        for model in sorted(self.models[name]):
            if model == CHOSEN:
                summary.gaps.append(Gap("unpriced", name, CHOSEN, "it runs on the model the run is given (--model, LLM_DO_MODEL): "
                                                               "it names none and the project has no default"))
                continue
            worst = self._worst_request(model, inputs.settings(name), worker.server_side_tools)
            if worst is None:
                summary.gaps.append(Gap("unpriced", name, model, f"no price is known for '{model}': declare one in project.json cost.prices"))
                continue
            if worst.cost is None:
                summary.gaps += [Gap("unbounded", name, model, why) for why in worst.missing]
                continue
            summary.add(_of_request(Costly(name, model, worst)))
        if summary.gaps:
            summary.gaps.sort(key=_gap_key)
            summary.gaps, summary.more_gaps = summary.gaps[:MAX_GAPS], len(summary.gaps) > MAX_GAPS
        return summary

    def _worst_request(self, model: str, settings: Any, tools: tuple[Any, ...]) -> WorstRequest | None:
        key = (model, id(settings), id(tools))
        if key not in self._worst:
            sheet = price_sheet(model, self.inputs.prices)
            self._worst[key] = None if sheet is None else worst_request(sheet, settings, self.inputs.limits, tools)
        return self._worst[key]

    def request_bound(self, worker: str) -> tuple[Costly | None, tuple[Gap, ...]]:
        """The worker's own dearest request (on any model it may run on), and its gaps."""
        own = self.own[worker]
        return own.dominant, tuple(own.gaps)

    @cached_property
    def entry_reach(self) -> dict[str, str | None]:
        """The workers a run from the entry reaches, each with the worker that first calls it on a
        shortest path (None: the entry, or called by the entry function): those within `max_depth`
        and within `request_limit` levels (a worker at depth d runs only after d - 1 requests, one
        of each caller above it, called it), and none below the first level when
        `tool_calls_limit` is 0 (pydantic-ai refuses a response's tool calls before running them)."""
        inputs = self.inputs
        function = inputs.function_calls
        starts = [w for w in (function if function is not None else (inputs.entry,)) if w in inputs.workers]
        deepest = min(inputs.max_depth, _request_limit(inputs.limits), 1 if inputs.limits.get("tool_calls_limit") == 0 else inputs.max_depth)
        depth = dict.fromkeys(starts, 1)
        parent: dict[str, str | None] = dict.fromkeys(starts)
        queue = deque(starts)
        while queue:
            caller = queue.popleft()
            if depth[caller] >= deepest:
                continue
            for callee in inputs.workers[caller].calls:
                if callee in inputs.workers and callee not in depth:
                    depth[callee] = depth[caller] + 1
                    parent[callee] = caller
                    queue.append(callee)
        return parent

    def entry_bound(self) -> CostBound:
        """The bound of a run from the entry: the workers it reaches within `max_depth`."""
        inputs = self.inputs
        function = inputs.function_calls is not None
        parent = self.entry_reach
        summary = _Summary(parallel=function)
        for worker in sorted(parent):
            summary.add(self.own[worker])
        path: tuple[str, ...] = ()
        if summary.dominant is not None:
            steps = [summary.dominant.worker]
            while (up := parent.get(steps[-1])) is not None:
                steps.append(up)
            path = ((inputs.entry,) if function else ()) + tuple(reversed(steps))
        return self._bound(inputs.entry, summary, 0 if function else 1, path)

    @cached_property
    def callee_bounds(self) -> dict[str, CostBound]:
        """Each worker's bound as the first worker of a run (`--worker`, or called on its own): the
        workers it can reach, at any depth (a callee's depth depends on who calls it); itself alone
        when `tool_calls_limit` is 0."""
        if self.inputs.limits.get("tool_calls_limit") == 0:
            return {name: self._bound(name, self.own[name], 1) for name in self.inputs.workers}
        reach = _reach_summaries(self.inputs, self.own)
        return {name: self._bound(name, reach[name], 1) for name in self.inputs.workers}

    def _bound(self, root: str, summary: _Summary, depth: int, path: tuple[str, ...] = ()) -> CostBound:
        inputs = self.inputs
        limits = inputs.limits
        requests = _request_limit(limits)
        models = tuple(sorted(summary.models))
        if summary.gaps:
            return CostBound(root, None, requests, summary.dominant, path, tuple(summary.gaps), summary.more_gaps, (), models)
        in_flight = _in_flight(requests, limits.get("tool_calls_limit"), summary.parallel, inputs.max_depth - max(depth, 1) + 1)
        per_in, per_out = summary.input_tokens, summary.output_tokens
        shaped = [f"request_limit {requests}"]
        input_cap = requests * per_in
        if limits.get("input_tokens_limit") is not None and limits["input_tokens_limit"] + in_flight * per_in < input_cap:
            input_cap = limits["input_tokens_limit"] + in_flight * per_in
            shaped.append(f"input_tokens_limit {limits['input_tokens_limit']}")
        output_cap = requests * per_out
        joint_cap: int | None = None
        if limits.get("total_tokens_limit") is not None:
            joint_cap = limits["total_tokens_limit"] + in_flight * (per_in + per_out)
            if joint_cap < input_cap + output_cap:
                shaped.append(f"total_tokens_limit {limits['total_tokens_limit']}")
            else:
                joint_cap = None
        usd = _dearest_spend(summary.input_rate, summary.output_rate, input_cap, output_cap, joint_cap) + requests * summary.fixed
        return CostBound(root, usd, requests, summary.dominant, path, (), False, tuple(shaped), models)


def _request_limit(limits: Mapping[str, Any]) -> int:
    found = limits.get("request_limit")
    return DEFAULT_REQUEST_LIMIT if found is None else found


def _of_request(costly: Costly) -> _Summary:
    worst = costly.worst
    assert worst.input_tokens is not None and worst.output_tokens is not None
    return _Summary(worst.parts * worst.input_tokens, worst.parts * worst.output_tokens, worst.input_rate,
                    worst.output_rate, worst.parts * worst.fixed, costly, models={costly.model})


def _dearer(a: Costly, b: Costly) -> bool:
    """`a` is the dearer request; of two that cost the same, the first by worker and model name
    (so which one dominates does not depend on the order they are met in)."""
    if a.cost != b.cost:
        return a.cost > b.cost
    return (a.worker, a.model) < (b.worker, b.model)


def _gap_key(gap: Gap) -> tuple[str, str, str, str]:
    return gap.worker, gap.model, gap.kind, gap.why


def _in_flight(requests: int, tool_calls_limit: int | None, parallel: bool, levels: int) -> int:
    """How many requests can be under way at once: one per worker call running, and a response
    starts at most `tool_calls_limit` calls at once (pydantic-ai checks a response's calls before it
    runs them), so `levels` levels of calls have at most that to the power `levels - 1` running at
    the bottom. Python that calls workers (or an entry function) can start any number."""
    if parallel or tool_calls_limit is None:
        return requests
    if tool_calls_limit <= 1:
        return min(requests, 1)
    return min(requests, int(tool_calls_limit ** max(levels - 1, 0)))  # a power of a whole number


def _dearest_spend(input_rate: Decimal, output_rate: Decimal, input_cap: int, output_cap: int, joint_cap: int | None) -> Decimal:
    """The most `input * input_rate + output * output_rate` can be with input <= input_cap, output <=
    output_cap and input + output <= joint_cap: the dearer tokens first."""
    if joint_cap is None:
        return input_cap * input_rate + output_cap * output_rate
    if input_rate >= output_rate:
        spent_in = min(input_cap, joint_cap)
        return spent_in * input_rate + min(output_cap, joint_cap - spent_in) * output_rate
    spent_out = min(output_cap, joint_cap)
    return spent_out * output_rate + min(input_cap, joint_cap - spent_out) * input_rate


def _reach_summaries(inputs: CostInputs, own: dict[str, _Summary]) -> dict[str, _Summary]:
    """Each worker's summary over itself and every worker it can reach: over the graph's strongly
    connected components in reverse topological order (networkx only when there is a cycle)."""
    from graphlib import CycleError, TopologicalSorter

    graph = {name: {c for c in w.calls if c in inputs.workers} for name, w in inputs.workers.items()}
    try:
        order = list(TopologicalSorter(graph).static_order())  # callees first
        components = [[name] for name in order]
    except CycleError:
        import networkx as nx

        digraph = nx.DiGraph()
        digraph.add_nodes_from(graph)
        digraph.add_edges_from((u, v) for u, vs in graph.items() for v in vs)
        condensed = nx.condensation(digraph)
        components = [sorted(condensed.nodes[c]["members"]) for c in reversed(list(nx.topological_sort(condensed)))]
    reach: dict[str, _Summary] = {}
    for members in components:
        if len(members) == 1 and not graph[members[0]]:  # a leaf reaches itself alone (summaries are never changed once made)
            reach[members[0]] = own[members[0]]
            continue
        summary = _Summary()
        for member in members:
            summary.add(own[member])
        for callee in _callees(graph, members):
            summary.add(reach[callee])
        for member in members:
            reach[member] = summary
    return reach


def _callees(graph: dict[str, set[str]], members: Iterable[str]) -> set[str]:
    inside = set(members)
    return {c for m in inside for c in graph[m] if c not in inside}

"""Every model request of a run, counted when it is sent, and priced when a budget or a listener
wants its cost.

- **Counted when sent.** pydantic-ai counts a request when its response comes back and checks
  `request_limit` when a step starts, so calls running in parallel (several in one response, or
  an entry function's `gather`) can all pass the check before any of them is counted. The meter
  counts each request as it is sent and refuses the one past the limit, so a run never sends more
  than `request_limit` requests: what the cost bound counts on (spec/cost.md).
- **Priced.** With a budget (`RuntimeConfig.budget`, `--max-cost`) each request holds its worst case
  before it is sent and counts its cost after (`budget`). When someone listens, each priced response
  is a `RequestPriced` event, and with OpenTelemetry on, its cost is on the request's span
  (`llm_do.cost_usd`, `llm_do.worker`). Pricing (`llm_do.pricing`) is loaded only then.

`MeteredModel` wraps a call's model; it finds the call it serves in `METERED_CALL`, which the call
sets around its Agent's run, so one wrapped model can serve the calls of many runs (a durable
batch's Agents are built once, with their models, before DBOS launches).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from pydantic_ai.models.wrapper import WrapperModel

if TYPE_CHECKING:
    from pydantic_ai import RunContext
    from pydantic_ai.messages import ModelMessage, ModelResponse
    from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
    from pydantic_ai.settings import ModelSettings

    from llm_do.bundle.views import WorkerSpec

    from .budget import Hold
    from .call_scope import CallFrame, RunHost

DEFAULT_REQUEST_LIMIT = 50
"""pydantic-ai's `UsageLimits.request_limit` when the run sets none."""


class MeteredCall:
    """The call a request serves: its run's meter, frame, worker and model label."""

    __slots__ = ("meter", "frame", "spec", "label")

    def __init__(self, meter: RunMeter, frame: CallFrame, spec: WorkerSpec, label: str) -> None:
        self.meter = meter
        self.frame = frame
        self.spec = spec
        self.label = label


METERED_CALL: ContextVar[MeteredCall | None] = ContextVar("llm_do_metered_call", default=None)


class MeteredModel(WrapperModel):
    """A model whose requests the run's meter counts (and prices)."""

    metered = True

    async def request(self, messages: list[ModelMessage], model_settings: ModelSettings | None,
                      model_request_parameters: ModelRequestParameters) -> ModelResponse:
        call = METERED_CALL.get()
        if call is None:
            return await self.wrapped.request(messages, model_settings, model_request_parameters)
        hold = await call.meter.begin(call)
        try:
            response = await self.wrapped.request(messages, model_settings, model_request_parameters)
        except BaseException:
            call.meter.failed(call, hold)
            raise
        call.meter.end(call, hold, response)
        return response

    @asynccontextmanager
    async def request_stream(self, messages: list[ModelMessage], model_settings: ModelSettings | None,
                             model_request_parameters: ModelRequestParameters,
                             run_context: RunContext[object] | None = None) -> AsyncIterator[StreamedResponse]:
        call = METERED_CALL.get()
        if call is None:
            async with self.wrapped.request_stream(messages, model_settings, model_request_parameters, run_context) as stream:
                yield stream
            return
        hold = await call.meter.begin(call)
        try:
            async with self.wrapped.request_stream(messages, model_settings, model_request_parameters, run_context) as stream:
                yield stream
        except BaseException:
            call.meter.failed(call, hold)
            raise
        call.meter.end(call, hold, stream.get())


def metered(model: Model) -> Model:
    """`model` wrapped for the meter (once)."""
    return model if getattr(model, "metered", False) else MeteredModel(model)


class RunMeter:
    """One run's requests: how many were sent, what they cost."""

    def __init__(self, runtime: RunHost, request_limit: int | None) -> None:
        self.runtime = runtime
        self.request_limit = request_limit
        self.sent = 0
        self.cost = Decimal(0)
        """What this run's priced responses cost."""
        self.unpriced = 0
        """Responses this run could not price."""
        self._worst: dict[tuple[str, str], Decimal | str | None] = {}
        self._usage: Any = None
        """The usage the counts are of: a chat turn gives the runtime a fresh one (its limits
        count that turn only, `session`), and the counts start again with it."""

    def _count_for_this_run(self) -> None:
        usage = getattr(self.runtime, "usage", None)
        if usage is not self._usage:
            self._usage, self.sent, self.cost, self.unpriced = usage, 0, Decimal(0), 0

    @property
    def _budget(self) -> Any:
        return self.runtime.config.budget

    def _prices(self, label: str) -> bool:
        """Whether to price a request of `label`: for a budget, or for a listener when the model
        has a price (an offline model, or a host's model no price names, tells a listener nothing)."""
        if self._budget is not None:
            return True
        if not self.runtime.listening:
            return False
        from llm_do.pricing.sheets import offline, price_sheet

        return not offline(label) and price_sheet(label, self._declared()) is not None

    async def begin(self, call: MeteredCall) -> Hold | None:
        self._count_for_this_run()
        limit = self.request_limit
        if limit is not None and self.sent >= limit:
            from pydantic_ai.exceptions import UsageLimitExceeded

            raise UsageLimitExceeded(f"The next request would exceed the request_limit of {limit}")
        self.sent += 1
        budget = self._budget
        if budget is None:
            return None
        try:
            worst = self.worst(call)
            hold: Hold = await budget.reserve(worst, call.spec.name, call.label)
            return hold
        except BaseException:
            self.sent -= 1  # never sent
            raise

    def worst(self, call: MeteredCall) -> Decimal | None:
        """The request's worst case (`pricing.ceiling`); None when it has none and the budget
        accepts that; a model with no price is refused unless accepted."""
        key = (call.spec.name, call.label)
        if key not in self._worst:
            self._worst[key] = self._worst_of(call)
        found = self._worst[key]
        if isinstance(found, str):
            from .budget import BudgetSpent

            raise BudgetSpent(found)
        return found

    def _worst_of(self, call: MeteredCall) -> Decimal | str | None:
        from llm_do.pricing.ceiling import worst_request
        from llm_do.pricing.sheets import price_sheet

        from .budget import unpriced_model

        sheet = price_sheet(call.label, self._declared())
        if sheet is None:
            if not self._budget.accept_unpriced:
                return unpriced_model(call.spec.name, call.label)
            if self._budget.on_note is not None:
                self._budget.on_note(f"{unpriced_model(call.spec.name, call.label).split(', so ')[0]}: accepted; its requests run "
                                     "one at a time and count nothing")
            return None
        spec = call.spec
        settings = spec.model_settings or self.runtime.bundle.defaults.get("model_settings")
        return worst_request(sheet, settings, self._limits(), spec.server_side_tools).cost

    def _declared(self) -> dict[str, Any]:
        return (self.runtime.bundle.text.get("cost") or {}).get("prices") or {}

    def _limits(self) -> dict[str, Any]:
        limits = getattr(self.runtime, "usage_limits", None)
        if limits is None:
            return {}
        return {"per_request_input_tokens_limit": limits.per_request_input_tokens_limit,
                "count_tokens_before_request": limits.count_tokens_before_request}

    def failed(self, call: MeteredCall, hold: Hold | None) -> None:
        """A request that got no response (an error, a cancellation): the provider may have billed
        it, so a budget counts its worst case."""
        if hold is not None:
            self._budget.settle(hold, None, failed=True)

    def end(self, call: MeteredCall, hold: Hold | None, response: ModelResponse) -> None:
        if not self._prices(call.label):
            return
        from llm_do.pricing.actual import response_cost

        cost = response_cost(response, call.label, self._declared())
        if cost is None:
            self.unpriced += 1
        else:
            self.cost += cost
        budget = self._budget
        if budget is not None and hold is not None:
            budget.settle(hold, cost)
        self._report(call, cost, budget)

    def _report(self, call: MeteredCall, cost: Decimal | None, budget: Any) -> None:
        from llm_do.pricing.money import usd_json

        left = budget.limit - budget.spent() if budget is not None else None
        if self.runtime.listening:
            from .events import RequestPriced

            self.runtime.emit(RequestPriced(call.spec.name, call.frame.depth, call.label, _text(cost),
                                            _text(self.cost) if not self.unpriced else None,
                                            _text(left) if left is not None else None))
        from opentelemetry import trace

        span = trace.get_current_span()
        if span.is_recording():
            span.set_attribute("llm_do.worker", call.spec.name)
            if cost is not None:
                span.set_attribute("llm_do.cost_usd", float(cost))
            if left is not None:
                span.set_attribute("llm_do.budget_left_usd", float(left))
                span.set_attribute("llm_do.budget_usd", float(usd_json(budget.limit) or 0))


def _text(amount: Decimal | None) -> str | None:
    """Exact, as a JSON string (`0.0042`)."""
    return None if amount is None else format(amount.normalize(), "f")

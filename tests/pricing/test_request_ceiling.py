"""The worst one request can cost (`llm_do.pricing.ceiling`), and what a response did cost
(`llm_do.pricing.actual`)."""

from __future__ import annotations

from decimal import Decimal

from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.usage import RequestUsage

from llm_do.pricing.actual import response_cost
from llm_do.pricing.ceiling import CONTINUATIONS, worst_request
from llm_do.pricing.genai import genai_sheet
from llm_do.pricing.rates import PriceSheet, Rate, declared_sheet

D = Decimal
SHEET = PriceSheet("p:m", "project", Rate(D(2), ((1000, D(4)),)), Rate(D(10)), per_request=D("0.001"),
                   per_use={"web_search": D("0.01")}, context_window=2000)


def test_pydantic_ai_continues_a_paused_response_as_often_as_the_ceiling_says() -> None:
    from pydantic_ai.models._continuation import MAX_GENERATION_CONTINUATIONS

    assert CONTINUATIONS == MAX_GENERATION_CONTINUATIONS


def test_the_context_window_bounds_input_and_output() -> None:
    worst = worst_request(SHEET, None, None)
    assert (worst.input_tokens, worst.output_tokens, worst.parts) == (2000, 2000, 1)
    assert worst.cost == (2000 * D(4) + 2000 * D(10)) / D(1_000_000) + D("0.001")  # the tier above 1000 input tokens


def test_max_tokens_and_counted_input_tighten_it() -> None:
    limits = {"per_request_input_tokens_limit": 500, "count_tokens_before_request": True}
    worst = worst_request(SHEET, {"max_tokens": 100}, limits)
    assert (worst.input_tokens, worst.output_tokens) == (500, 100)
    assert worst.cost == (500 * D(2) + 100 * D(10)) / D(1_000_000) + D("0.001")
    uncounted = worst_request(SHEET, None, {"per_request_input_tokens_limit": 500})  # checked only after the request
    assert uncounted.input_tokens == 2000


def test_settings_sent_unread_leave_only_the_run_s_limits() -> None:
    worst = worst_request(SHEET, {"max_tokens": 100, "extra_headers": {"anthropic-beta": "context-1m"}}, None)
    assert worst.cost is None and len(worst.missing) == 2
    assert "extra_headers" in worst.missing[0] and "input tokens" in worst.missing[0] and "output tokens" in worst.missing[1]


def test_no_window_and_no_limit_is_no_worst_case() -> None:
    sheet = declared_sheet("local:m", {"input_mtok": 1, "output_mtok": 1})
    worst = worst_request(sheet, {"max_tokens": 10}, None)
    assert worst.cost is None and worst.output_tokens == 10 and "no known context window" in worst.missing[0]
    free = declared_sheet("local:free", {"input_mtok": 0, "output_mtok": 0})
    assert worst_request(free, None, None).cost == 0  # free tokens need no bound


def test_provider_tools_continue_and_web_search_needs_max_uses() -> None:
    searching = worst_request(SHEET, {"max_tokens": 100}, None, [{"tool_type": "web_search", "max_uses": 3}])
    assert searching.parts == 1 + CONTINUATIONS
    assert searching.cost == searching.parts * ((2000 * D(4) + 100 * D(10)) / D(1_000_000) + D("0.001") + 3 * D("0.01"))
    unlimited = worst_request(SHEET, {"max_tokens": 100}, None, [{"tool_type": "web_search"}])
    assert unlimited.cost is None and "max_uses" in unlimited.missing[0]
    fetching = worst_request(SHEET, {"max_tokens": 100}, None, [{"tool_type": "web_fetch"}])  # billed by its tokens
    assert fetching.cost is not None


def test_a_response_costs_what_its_usage_says_at_the_declared_price() -> None:
    response = ModelResponse(parts=[TextPart("hi")], usage=RequestUsage(input_tokens=1000, output_tokens=200), model_name="m")
    declared = {"local:*": {"input_mtok": 1, "output_mtok": 5, "request": 0.01}}
    assert response_cost(response, "local:m", declared) == D("0.001") + D("0.001") + D("0.01")
    assert response_cost(response, "test") == 0
    assert response_cost(response, "local:m") is None  # no price known
    unmeasured = ModelResponse(parts=[TextPart("hi")], usage=RequestUsage(unmeasured_requests=1), model_name="m")
    assert response_cost(unmeasured, "local:m", declared) is None  # usage left out: not free


def test_a_response_priced_by_genai_prices_as_pydantic_ai_prices_it() -> None:
    usage = RequestUsage(input_tokens=10_000, output_tokens=1_000)
    response = ModelResponse(parts=[TextPart("hi")], usage=usage, model_name="claude-sonnet-4-5", provider_name="anthropic")
    from genai_prices import calc_price

    expected = calc_price(usage, "claude-sonnet-4-5", provider_id="anthropic").total_price
    assert response_cost(response, "anthropic:claude-sonnet-4-5") == expected
    unnamed = ModelResponse(parts=[TextPart("hi")], usage=usage, model_name="function:x", provider_name="function")
    assert response_cost(unnamed, "anthropic:claude-sonnet-4-5") == expected  # by the worker's model
    sheet = genai_sheet("anthropic:claude-sonnet-4-5")
    assert sheet is not None and expected <= 10_000 * sheet.input.base / D(10**6) + 1_000 * sheet.output.base / D(10**6)

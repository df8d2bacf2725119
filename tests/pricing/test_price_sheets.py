"""Price sheets: what genai-prices' data says a model can be billed at, at its dearest, and the
prices a project declares (`llm_do.pricing`)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest
from genai_prices.types import (
    ConditionalPrice,
    ModelInfo,
    ModelPrice,
    PriceVariant,
    StartDateConstraint,
    Tier,
    TieredPrices,
)

from llm_do.pricing.genai import data_release, genai_sheet, sheet_of
from llm_do.pricing.rates import Rate
from llm_do.pricing.sheets import price_sheet

D = Decimal


def _info(prices, variants=None, window=100_000):
    from genai_prices.types import ClauseEquals

    return ModelInfo(id="m", match=ClauseEquals(equals="m"), prices=prices, price_variants=variants, context_window=window)


def test_the_dearest_input_rate_counts_every_kind_of_input_token() -> None:
    """A token is billed once, at the rate of its kind: a cache write can cost more than a plain
    input token, so the sheet's input rate is the dearest kind's."""
    sheet = sheet_of("p:m", _info(ModelPrice(input_mtok=D(3), cache_read_mtok=D("0.3"), cache_write_1h_mtok=D(6),
                                              input_audio_mtok=D(4), output_mtok=D(15), output_audio_mtok=D(20))))
    assert sheet.input == Rate(D(6)) and sheet.output == Rate(D(20))
    assert sheet.context_window == 100_000 and sheet.source == "genai-prices"


def test_tiers_step_up_with_the_input_tokens_of_the_request() -> None:
    tiered = TieredPrices(base=D(3), tiers=[Tier(start=200_000, price=D(6))])
    sheet = sheet_of("p:m", _info(ModelPrice(input_mtok=tiered, output_mtok=D(15))))
    assert sheet.input.at_most(200_000) == D(3)  # a tier applies above its start
    assert sheet.input.at_most(200_001) == D(6)
    assert sheet.output.at_most(10**6) == D(15)


def test_the_dearest_of_rates_is_dearest_at_every_size() -> None:
    a = Rate(D(1), ((100, D(5)),))
    b = Rate(D(2), ((50, D(3)), (200, D(4))))
    both = Rate.dearest([a, b])
    for n in (1, 50, 51, 100, 101, 200, 201, 10**6):
        assert both.at_most(n) >= max(a.at_most(n), b.at_most(n)), n


def test_a_service_tier_the_provider_may_pick_is_counted_at_its_price() -> None:
    sheet = sheet_of("p:m", _info(ModelPrice(input_mtok=D(1), output_mtok=D(4)),
                                  [PriceVariant(when={"service_tier": "priority"}, prices=ModelPrice(input_mtok=D(2), output_mtok=D(8))),
                                   PriceVariant(when={"processing": "batch"}, prices=ModelPrice(input_mtok=D("0.5")))]))
    assert sheet.input == Rate(D(2)) and sheet.output == Rate(D(8))


def test_old_prices_are_history_and_announced_ones_count() -> None:
    today = date.today()
    past = today.replace(year=today.year - 1)
    future = today.replace(year=today.year + 1)
    dated = [ConditionalPrice(prices=ModelPrice(input_mtok=D(9), output_mtok=D(9))),  # before the change: history
             ConditionalPrice(constraint=StartDateConstraint(start_date=past), prices=ModelPrice(input_mtok=D(1), output_mtok=D(2))),
             ConditionalPrice(constraint=StartDateConstraint(start_date=future), prices=ModelPrice(input_mtok=D(3), output_mtok=D(1)))]
    sheet = sheet_of("p:m", _info(dated))
    assert sheet.input == Rate(D(3)) and sheet.output == Rate(D(2))


def test_uses_of_provider_tools_and_units_no_limit_counts() -> None:
    sheet = sheet_of("p:m", _info(ModelPrice(input_mtok=D(1), output_mtok=D(1), web_searches_kcount=D(10),
                                              requests_kcount=D(5), input_audio_hours=D(1), storage_searches_kcount=D(2))))
    assert sheet.per_use == {"web_search": D("0.01")}
    assert sheet.per_request == D("0.005")
    assert sheet.unmetered == ("input audio seconds",)  # file search (storage) is no tool llm-do gives a worker


def test_models_by_llm_do_s_names() -> None:
    sonnet = genai_sheet("anthropic:claude-sonnet-4-5")
    assert sonnet is not None and sonnet.context_window and sonnet.output.base > 0
    chat, responses = genai_sheet("openai-chat:gpt-4o"), genai_sheet("openai:gpt-4o")  # one provider, two APIs
    assert chat is not None and responses is not None and (chat.input, chat.output) == (responses.input, responses.output)
    assert genai_sheet("ollama:llama3.2") is None and genai_sheet("nonsense") is None
    assert price_sheet("test").input == Rate(D(0)) and price_sheet("script:main").source == "offline"


def test_a_declared_price_comes_first_and_patterns_count_at_their_dearest() -> None:
    declared = {"openai:gpt-4o": {"input_mtok": 1, "output_mtok": 2},
                "ollama:*": {"input_mtok": 0, "output_mtok": 0, "context_window": 8000},
                "ollama:big*": {"input_mtok": 0.5, "output_mtok": 0, "context_window": 32000}}
    own = price_sheet("openai:gpt-4o", declared)
    assert own is not None and own.source == "project" and own.input == Rate(D(1))
    assert own.context_window == genai_sheet("openai:gpt-4o").context_window  # the window genai-prices knows
    big = price_sheet("ollama:big-model", declared)
    assert big is not None and big.input == Rate(D("0.5")) and big.context_window == 32000
    small = price_sheet("ollama:small", declared)
    assert small is not None and small.input == Rate(D(0)) and small.context_window == 8000


def test_the_data_release_names_a_version_and_a_date() -> None:
    version, newest = data_release()
    import genai_prices

    assert version == genai_prices.__version__
    assert date.fromisoformat(newest)


@pytest.mark.parametrize("model", ["anthropic:claude-sonnet-4-5", "openai:gpt-4o-mini", "google:gemini-2.5-flash"])
def test_a_sheet_never_prices_a_request_below_genai_prices(model: str) -> None:
    """For any mix of token kinds a request of the model can report, genai-prices' price (in any
    variant) is at most what the sheet's rates say."""
    import itertools

    from genai_prices import Usage, calc_price

    sheet = genai_sheet(model)
    assert sheet is not None
    provider, _, name = model.partition(":")
    for tokens, variant in itertools.product([1_000, 150_000, 250_000], [None, {"service_tier": "priority"}, {"processing": "batch"}]):
        for kinds in ({"input_tokens": tokens}, {"input_tokens": tokens, "cache_write_tokens": tokens, "cache_write_1h_tokens": tokens},
                      {"input_tokens": tokens, "cache_read_tokens": tokens // 2}, {"input_tokens": tokens, "input_audio_tokens": tokens}):
            usage = Usage(**kinds, output_tokens=tokens)
            price = calc_price(usage, name, provider_id=provider, price_context=variant).total_price
            bound = tokens * (sheet.input.at_most(tokens) + sheet.output.at_most(tokens)) / D(1_000_000)
            assert price <= bound, (kinds, variant, price, bound)

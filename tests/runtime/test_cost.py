from __future__ import annotations

import pytest

from ctxrelay.pricing import DEFAULT_PRICES, Prices
from ctxrelay.runtime.cost import TablePricer, default_pricer, prices_from_json, prices_to_json
from ctxrelay.runtime.model import Usage


def test_real_models_are_priced_from_the_project_table() -> None:
    prices = DEFAULT_PRICES.lookup("claude-sonnet-4-5")
    assert prices is not None
    # Below Sonnet 4.x's 200k long-prompt bound, so the standard rates apply.
    usage = Usage(input_tokens=100_000, output_tokens=0, cache_read_input_tokens=100_000)
    got = default_pricer().cost_usd("anthropic:claude-sonnet-4-5", usage)
    assert got == pytest.approx((prices.input + prices.cache_read) / 10)


def test_scripted_and_unknown_models_cost_nothing() -> None:
    usage = Usage(input_tokens=10_000, output_tokens=10_000)
    assert default_pricer().cost_usd("scripted:claude-sonnet-4-5.json", usage) == 0.0
    assert default_pricer().cost_usd("openai:no-such-model-xyz", usage) == 0.0


def test_session_prices_apply_to_any_model_and_round_trip() -> None:
    own = Prices(input=1.0, output=2.0, cache_write_5m=1.25, cache_write_1h=2.0, cache_read=0.1)
    usage = Usage(input_tokens=1_000_000, output_tokens=500_000)
    assert default_pricer(own).cost_usd("scripted:x.json", usage) == pytest.approx(2.0)
    assert prices_from_json(prices_to_json(own)) == own
    assert TablePricer(default=own).cost_usd("scripted:x", usage) == pytest.approx(2.0)


def test_prices_with_long_prompt_rates_survive_the_session_json() -> None:
    haiku = DEFAULT_PRICES["claude-haiku-5-5"]
    assert haiku.long_prompt is not None
    assert prices_from_json(prices_to_json(haiku)) == haiku


def test_which_models_have_prices() -> None:
    from ctxrelay.runtime.cost import Pricer, ZeroPricer, prices_model

    pricer = default_pricer()
    assert prices_model(pricer, "anthropic:claude-sonnet-4-5")
    assert not prices_model(pricer, "openai:qwen2.5-coder:7b")  # a local server's model
    assert not prices_model(pricer, "scripted:claude-sonnet-4-5.json")
    own = default_pricer(prices_from_json(prices_to_json(DEFAULT_PRICES["claude-sonnet-4-5"])))
    assert prices_model(own, "openai:qwen2.5-coder:7b")
    assert not prices_model(ZeroPricer(), "anthropic:claude-sonnet-4-5")

    class Flat:
        def cost_usd(self, model: str, usage: Usage) -> float:
            return 1.0

    flat: Pricer = Flat()
    assert prices_model(flat, "anything")  # a pricer that cannot tell counts as priced

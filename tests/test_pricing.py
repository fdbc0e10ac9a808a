"""The one pricing table: lookups by model id, cost arithmetic, override files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrelay.errors import ConfigError
from ctxrelay.pricing import DEFAULT_PRICES, Prices, cost, load_prices, openai_usage
from ctxrelay.runtime.model import Usage as RuntimeUsage
from ctxrelay.transcripts import Usage
from tests import _claude_catalog as catalog


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("claude-opus-4-6", "Claude Opus 4.6"),
        ("claude-opus-4-6[1m]", "Claude Opus 4.6"),
        ("claude-opus-4-5-20251101", "Claude Opus 4.5"),
        ("claude-opus-4-1-20250805", "Claude Opus 4.1"),
        ("claude-opus-4-20250514", "Claude Opus 4"),
        ("claude-opus-4-8", "Claude Opus 4.8"),
        ("claude-opus-6", "Claude Opus 5.5+"),  # newer than the table: latest Opus
        ("claude-3-opus-20240229", "Claude Opus 3"),
        ("claude-sonnet-4-5-20250929", "Claude Sonnet 4.5"),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "Claude Sonnet 4.5"),
        ("claude-sonnet-4-20250514", "Claude Sonnet 4"),
        ("claude-3-7-sonnet-latest", "Claude Sonnet 3.7"),
        ("claude-haiku-4-5-20251001", "Claude Haiku 4.5"),
        ("claude-3-5-haiku-20241022", "Claude Haiku 3.5"),
        ("claude-3-haiku-20240307", "Claude Haiku 3"),
        ("claude-4-haiku-future", "Claude Haiku 5.5+"),
        ("claude-fable-6", "Claude Fable 5.2+"),
        ("claude-mythos-5-2-20260601", "Claude Mythos 5.2"),
        ("gpt-4o-mini-2024-07-18", "GPT-4o mini"),
        ("gpt-4o", "GPT-4o"),
        ("openai/gpt-4.1-nano", "GPT-4.1 nano"),
        ("gpt-5-mini", "GPT-5 mini"),
        ("gpt-5.1-codex", "GPT-5"),
        ("gpt-5.5", "GPT-5.5"),
        ("gpt-5.4-2026-03-05", "GPT-5.4"),
        ("gpt-5.3-codex", "GPT-5.3 Codex"),
        ("o3-mini", "o3-mini"),
        ("o3-2025-04-16", "o3"),
        ("O4-MINI", "o4-mini"),
    ],
)
def test_lookup_by_prefix_and_family(model: str, family: str) -> None:
    prices = DEFAULT_PRICES.lookup(model)
    assert prices is not None
    assert prices.family == family


def test_unknown_models_have_no_price() -> None:
    for model in ("llama-3.1-70b", "", None, "<synthetic>", "mistral-large"):
        assert DEFAULT_PRICES.lookup(model) is None


def test_anthropic_multipliers() -> None:
    opus = DEFAULT_PRICES["claude-opus-4-6"]
    assert (opus.input, opus.cache_write_5m, opus.cache_write_1h, opus.cache_read) == (
        5.0,
        6.25,
        10.0,
        0.5,
    )
    assert opus.output == 25.0


def test_claude_prices_agree_with_the_bundled_claude_code_cli() -> None:
    # Every model of the catalog inside the Claude Code CLI that claude-agent-sdk bundles,
    # at the rates of its pricing tier there.
    tiers = catalog.tiers()
    fields = ("input", "output", "cache_write_5m", "cache_write_1h", "cache_read")
    for model, entry in catalog.models().items():
        prices = DEFAULT_PRICES.lookup(model)
        assert prices is not None, model
        got = tuple(getattr(prices, f) for f in fields)
        assert got == pytest.approx(tuple(tiers[entry.tier][f] for f in fields)), model


def test_haiku_5_5_prices_a_long_prompt_at_its_long_prompt_rates() -> None:
    # The CLI's haiku_55 tier: above 100,000 prompt tokens (input + cache reads + cache
    # writes) every category, output included, costs the long-prompt rate.
    haiku = DEFAULT_PRICES["claude-haiku-5-5"]
    short = {"input_tokens": 50_000, "cache_read_input_tokens": 50_000, "output_tokens": 1_000}
    assert cost(short, haiku) == pytest.approx((50_000 * 0.1 + 50_000 * 0.01 + 1_000 * 0.5) / 1e6)
    long = {**short, "cache_creation_input_tokens": 1}
    expected = (50_000 * 0.5 + 50_000 * 0.05 + 1 * 0.625 + 1_000 * 2.5) / 1e6
    assert cost(long, haiku) == pytest.approx(expected)
    assert cost(Usage(50_000, 1, 50_000, 1_000), haiku) == pytest.approx(expected)


def test_sonnet_4_prices_a_prompt_above_200k_at_its_long_prompt_rates() -> None:
    # Anthropic's list: Sonnet 4.x requests above 200,000 prompt tokens (only possible in
    # the 1M window) cost $6 / $22.50, the cache at the usual multipliers of that input.
    for model in ("claude-sonnet-4-20250514", "claude-sonnet-4-5-20250929", "claude-sonnet-4-6"):
        sonnet = DEFAULT_PRICES.lookup(model)
        assert sonnet is not None
        at = {"input_tokens": 1_000, "cache_read_input_tokens": 199_000, "output_tokens": 100}
        assert cost(at, sonnet) == pytest.approx((1_000 * 3 + 199_000 * 0.3 + 100 * 15) / 1e6)
        above = {**at, "cache_creation_input_tokens": 1}
        expected = (1_000 * 6 + 199_000 * 0.6 + 1 * 7.5 + 100 * 22.5) / 1e6
        assert cost(above, sonnet) == pytest.approx(expected), model


def test_cost_of_each_category() -> None:
    prices = Prices(1.0, 10.0, 2.0, 3.0, 0.5)
    one_million = 1_000_000
    assert cost(Usage(input_tokens=one_million), prices) == pytest.approx(1.0)
    assert cost(Usage(output_tokens=one_million), prices) == pytest.approx(10.0)
    assert cost(Usage(cache_creation_input_tokens=one_million), prices) == pytest.approx(2.0)
    assert cost(
        Usage(cache_creation_input_tokens=one_million, cache_creation_1h_tokens=one_million),
        prices,
    ) == pytest.approx(3.0)
    assert cost(Usage(cache_read_input_tokens=one_million), prices) == pytest.approx(0.5)


def test_cost_takes_wire_mappings_and_runtime_usage() -> None:
    prices = DEFAULT_PRICES["claude-opus-4-6"]
    wire = {
        "input_tokens": 3,
        "cache_creation_input_tokens": 8037,
        "cache_read_input_tokens": 17842,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 8037},
        "output_tokens": 441,
    }
    expected = (3 * 5 + 8037 * 10 + 17842 * 0.5 + 441 * 25) / 1e6
    assert cost(wire, prices) == pytest.approx(expected)
    assert cost(Usage(3, 8037, 17842, 441, 8037), prices) == pytest.approx(expected)
    runtime = RuntimeUsage(
        input_tokens=3, output_tokens=441, cache_creation_input_tokens=8037,
        cache_read_input_tokens=17842,
    )  # fmt: skip
    # No TTL split in the runtime's usage: the writes are priced as 5-minute writes.
    assert cost(runtime, prices) == pytest.approx((15 + 8037 * 6.25 + 8921 + 441 * 25) / 1e6)
    assert cost({"input_tokens": "x", "output_tokens": -4}, prices) == 0.0


def test_openai_usage_conversion() -> None:
    chat = {
        "prompt_tokens": 1000,
        "completion_tokens": 50,
        "prompt_tokens_details": {"cached_tokens": 800},
    }
    assert openai_usage(chat) == {
        "input_tokens": 200,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 800,
        "output_tokens": 50,
    }
    responses = {"input_tokens": 10, "output_tokens": 2, "input_tokens_details": {}}
    assert openai_usage(responses)["input_tokens"] == 10
    gpt = DEFAULT_PRICES["gpt-4o"]
    assert cost(openai_usage(chat), gpt) == pytest.approx((200 * 2.5 + 800 * 1.25 + 500) / 1e6)


def test_override_file_json_and_toml(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"models": {"claude-opus-4-6": {"input": 1, "output": 2}}}))
    table = load_prices(path)
    opus = table.lookup("claude-opus-4-6-whatever")
    assert opus is not None
    assert (opus.input, opus.output, opus.cache_read, opus.cache_write_1h) == (1, 2, 1, 1)
    assert table.lookup("claude-opus-4-5") == DEFAULT_PRICES.lookup("claude-opus-4-5")
    toml = tmp_path / "prices.toml"
    toml.write_text(
        '[models."my-local-model"]\ninput = 0.0\noutput = 0.0\n'
        '[models."gpt-4o"]\ninput = 2.0\noutput = 8.0\ncache_read = 1.0\n'
    )
    table = load_prices(toml)
    local = table.lookup("my-local-model-q4")
    assert local is not None
    assert local.output == 0.0
    gpt = table.lookup("gpt-4o")
    assert gpt is not None
    assert (gpt.input, gpt.cache_read) == (2.0, 1.0)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "does not parse"),
        ("[]", "no table"),
        ('{"m": 3}', "must be a table"),
        ('{"m": {"input": 1}}', "need 'output'"),
        ('{"m": {"input": -1, "output": 1}}', "zero or more"),
        ('{"m": {"input": "1", "output": 1}}', "must be a number"),
        ('{"m": {"input": 1, "output": 1, "cached": 1}}', "unknown price field"),
    ],
)
def test_bad_price_files(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "p.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_prices(path)


def test_missing_price_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_prices(tmp_path / "nope.toml")


def test_a_file_entry_wins_over_a_longer_builtin_prefix(tmp_path: Path) -> None:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"claude-opus": {"input": 0, "output": 0}}))
    table = load_prices(path)
    opus = table.lookup("claude-opus-4-6")
    assert opus is not None
    assert opus.output == 0
    sonnet = table.lookup("claude-sonnet-4-5")
    assert sonnet is not None
    assert sonnet.output == 15.0
    assert "claude-opus" in table
    assert len(table) == len(DEFAULT_PRICES)


def test_long_prompt_rates_need_their_threshold() -> None:
    with pytest.raises(ConfigError, match="long-prompt"):
        Prices(1.0, 2.0, 1.0, 1.0, 0.1, long_prompt=Prices(2.0, 4.0, 2.0, 2.0, 0.2))


def test_the_codex_price_table_of_the_facts_page_is_the_table() -> None:
    # docs/codex-facts.md lists what ccusage charges Codex's models; the table is the same.
    doc = (Path(__file__).parents[1] / "docs" / "codex-facts.md").read_text(encoding="utf-8")
    rows = [
        line.split("|")[1:5]
        for line in doc.splitlines()
        if line.startswith("| `gpt-") and line.count("$") == 3
    ]
    assert len(rows) == 3
    for model, fresh, cached, output in rows:
        prices = DEFAULT_PRICES.lookup(model.strip().strip("`"))
        assert prices is not None, model
        got = (prices.input, prices.cache_read, prices.output, prices.cache_write_5m)
        want = tuple(float(v.strip().lstrip("$")) for v in (fresh, cached, output, fresh))
        assert got == pytest.approx(want), model

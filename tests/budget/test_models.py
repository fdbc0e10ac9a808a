"""The model table: one owner of each model's window, reserve, price key and family,
read alike by the runtime, the Claude Code plugin and the analyzer, and checked against
the model catalog of the Claude Code CLI that claude-agent-sdk bundles."""

from __future__ import annotations

import pytest

from ctxrelay.analyze._replay import measure_assumptions
from ctxrelay.budget.bounds import (
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_RESERVE_CAP,
    HAIKU_CONTEXT_MAX,
    LONG_CONTEXT_WINDOW,
    MAIN_OUTPUT_RESERVE,
    RESERVE_WINDOW_DIVISOR,
    SUBAGENT_CONTEXT_MAX,
)
from ctxrelay.budget.models import (
    MODELS,
    canonical_model,
    context_window,
    family_of,
    fit_reserve,
    is_haiku,
    model_facts,
)
from ctxrelay.budget.triggers import context_bound_for, context_window_for
from ctxrelay.claude._limit import usable_limit
from ctxrelay.pricing import DEFAULT_PRICES
from ctxrelay.runtime.registry import resolve_model
from tests import _claude_catalog as catalog


@pytest.mark.parametrize("model", sorted(MODELS))
def test_runtime_plugin_and_analyzer_agree_on_the_window(model: str) -> None:
    provider, window, _, _ = MODELS[model]
    runtime = resolve_model(provider, model).context_window
    plugin = context_window_for(model)
    analyzer = measure_assumptions([], [], model=model).limit
    assert runtime == plugin == analyzer == window, model


@pytest.mark.parametrize("model", sorted(MODELS))
def test_every_price_key_prices_its_model(model: str) -> None:
    facts = model_facts(model)
    assert facts is not None
    found = DEFAULT_PRICES.match(model)
    assert found is not None, f"{model}: no price"
    # The table's key is the one the price table's own prefix rule picks for the id.
    assert found[0] == facts.price_key, model
    assert resolve_model(facts.provider, model).prices is DEFAULT_PRICES[facts.price_key]


def test_a_1m_id_opts_into_the_long_window_and_an_unknown_one_gets_the_default() -> None:
    assert context_window_for("claude-opus-4-6") == 200_000
    assert context_window_for("claude-opus-4-6[1m]") == LONG_CONTEXT_WINDOW
    assert context_window_for("claude-opus-4-7") == LONG_CONTEXT_WINDOW  # native 1M
    assert context_window_for("claude-sonnet-4-5-20250929") == 200_000
    assert context_window_for("claude-opus-9-9") == DEFAULT_CONTEXT_WINDOW
    assert context_window_for(None) == DEFAULT_CONTEXT_WINDOW
    assert context_window_for("claude-opus-4-7", configured=300_000) == 300_000
    assert context_window("my-local-model") is None


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
        ("claude-opus-4-20250514", "claude-opus-4-0"),
        ("claude-opus-4-6@20260101", "claude-opus-4-6"),
        ("claude-3-5-haiku-latest", "claude-3-5-haiku"),
        ("Claude-Haiku-4-5", "claude-haiku-4-5"),
        ("openai/gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-5-mini-2025-08-07", "gpt-5-mini"),
        ("gpt-4.1", "gpt-4.1"),
        ("qwen2.5-coder:7b", "qwen2.5-coder:7b"),
    ],
)
def test_canonical_ids(raw: str, key: str) -> None:
    assert canonical_model(raw) == key


def test_the_provider_must_match() -> None:
    assert model_facts("claude-opus-4-6", "openai") is None
    facts = model_facts("gpt-4o", "openai")
    assert facts is not None
    assert (facts.context_window, facts.output_reserve) == (128_000, 16_384)


def test_haiku_is_one_rule_for_known_and_newer_ids() -> None:
    haiku = [m for m in MODELS if is_haiku(m)]
    assert haiku == ["claude-haiku-5-5", "claude-haiku-4-5", "claude-3-5-haiku"]
    assert is_haiku("claude-haiku-6-20270101")  # newer than the table: its name says so
    assert is_haiku("haiku")  # Claude Code's alias
    assert not is_haiku("gpt-4o-mini")
    assert family_of("claude-3-7-sonnet") == "sonnet"
    assert context_bound_for("claude-haiku-4-5") == HAIKU_CONTEXT_MAX
    assert context_bound_for("claude-opus-4-8") == SUBAGENT_CONTEXT_MAX


def test_one_small_window_reserve_rule_for_both_hosts() -> None:
    # Large windows: each host's own reserve.
    assert usable_limit(200_000) == 200_000 - MAIN_OUTPUT_RESERVE
    assert resolve_model("anthropic", "claude-opus-4-6").output_reserve == DEFAULT_RESERVE_CAP
    # Small windows: the same quarter for the plugin and the runtime.
    for window in (8_192, 50_000, 100_000):
        quarter = window // RESERVE_WINDOW_DIVISOR
        assert fit_reserve(MAIN_OUTPUT_RESERVE, window) == min(MAIN_OUTPUT_RESERVE, quarter)
        assert usable_limit(window) == window - min(MAIN_OUTPUT_RESERVE, quarter)
        info = resolve_model("anthropic", "claude-opus-4-6", limit=window)
        assert info.output_reserve == min(DEFAULT_RESERVE_CAP, quarter)
    assert fit_reserve(MAIN_OUTPUT_RESERVE, 3) == 0  # nothing to keep: no crash


# -- the bundled Claude Code CLI's model catalog ------------------------------------------


def test_the_table_matches_the_bundled_cli_catalog() -> None:
    found = catalog.models()
    assert len(found) >= 20, "the catalog's layout changed: update tests/_claude_catalog.py"
    ours = {m: (w, out) for m, (p, w, out, _) in MODELS.items() if p == "anthropic"}
    assert ours == {m: (c.window, c.max_output_tokens) for m, c in found.items()}


def test_the_codex_models_have_the_raw_windows_codex_reports_95_percent_of() -> None:
    # docs/codex-facts.md: with no model_context_window set, Codex 0.171.0 reported
    # 258,400 (95% of 272,000) for these models; the table holds the raw window.
    import re
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "codex-facts.md").read_text(encoding="utf-8")
    found = re.search(
        r"no setting gave ([\d,]+) \(95% of ([\d,]+)\)\s+for ((?:`[^`]+`,?\s*)+)", doc
    )
    assert found is not None
    effective, raw = (int(found.group(k).replace(",", "")) for k in (1, 2))
    models = re.findall(r"`([^`]+)`", found.group(3))
    assert models == ["gpt-5.5", "gpt-5.4", "gpt-5.3-codex"]
    for model in models:
        assert context_window(model) == raw, model
        assert int(raw * 0.95) == effective

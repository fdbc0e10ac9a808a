"""The model registry: windows, reserves, flag overrides, unknown models, prices."""

from __future__ import annotations

import pytest

from ctxrelay.budget import BudgetValueError
from ctxrelay.budget.bounds import RESERVE_WINDOW_DIVISOR
from ctxrelay.budget.models import MODELS
from ctxrelay.errors import UnknownModelError
from ctxrelay.runtime.providers import model_defaults
from ctxrelay.runtime.registry import (
    DEFAULT_RESERVE_CAP,
    lookup_model,
    resolve_model,
)


def test_every_entry_resolves_with_a_reserve_that_leaves_room() -> None:
    for model, (provider, window, max_output, _) in MODELS.items():
        info = resolve_model(provider, model)
        assert info.context_window == window
        assert 0 < info.output_reserve <= min(max_output, DEFAULT_RESERVE_CAP)
        assert info.output_reserve <= window // RESERVE_WINDOW_DIVISOR
        assert info.known


def test_known_windows() -> None:
    assert resolve_model("anthropic", "claude-sonnet-4-5").context_window == 200_000
    assert resolve_model("anthropic", "claude-opus-5-5").context_window == 1_000_000
    assert resolve_model("openai", "gpt-4o").output_reserve == 16_384
    assert resolve_model("openai", "gpt-5").output_reserve == DEFAULT_RESERVE_CAP


def test_flags_override() -> None:
    info = resolve_model("anthropic", "claude-haiku-4-5", limit=50_000, reserve=2_000)
    assert (info.context_window, info.output_reserve) == (50_000, 2_000)
    # A smaller --limit alone shrinks the default reserve with it.
    assert resolve_model("openai", "gpt-4.1", limit=8_000).output_reserve == 2_000


def test_unknown_model_asks_for_limit_in_one_sentence() -> None:
    with pytest.raises(UnknownModelError) as info:
        resolve_model("openai", "qwen2.5-coder:7b")
    message = str(info.value)
    assert "--limit" in message
    assert "\n" not in message
    assert message.count(". ") == 0
    assert lookup_model("openai", "qwen2.5-coder:7b") is None
    # The provider prefix matters: a Claude id is not an OpenAI model.
    assert lookup_model("openai", "claude-opus-4-6") is None


def test_unknown_model_with_limit() -> None:
    info = resolve_model("openai", "llama3.1:8b", limit=8_192)
    assert info.context_window == 8_192
    assert info.output_reserve == 2_048
    assert not info.known


@pytest.mark.parametrize("reserve", [0, 8_192, 9_000])
def test_reserve_must_leave_room(reserve: int) -> None:
    with pytest.raises(BudgetValueError, match="output_reserve"):
        resolve_model("openai", "llama3.1:8b", limit=8_192, reserve=reserve)


def test_prices_come_from_the_project_table() -> None:
    from ctxrelay.pricing import DEFAULT_PRICES

    info = resolve_model("anthropic", "claude-opus-4-6")
    assert info.prices is DEFAULT_PRICES.lookup("claude-opus-4-6")
    assert info.prices is not None
    assert resolve_model("openai", "gpt-4o-mini").prices == DEFAULT_PRICES.lookup("gpt-4o-mini")


def test_the_runtime_seam_reaches_the_registry() -> None:
    pytest.importorskip("anthropic")
    pytest.importorskip("openai")
    found = model_defaults("anthropic:claude-sonnet-4-5-20250929")
    assert found is not None
    assert (found.context_window, found.output_reserve) == (200_000, DEFAULT_RESERVE_CAP)
    assert model_defaults("openai:my-local-model") is None

"""``claude._limit`` copies the names of the config's environment overrides instead of
importing ``claude.config`` (its fast path runs on every tool call). These tests keep the
copy equal to the owner, ``ctxrelay.claude.config.ENV_*``."""

from __future__ import annotations

from typing import Any

import pytest

from ctxrelay.claude import _limit, config


def _config_env_names() -> set[str]:
    return {
        value
        for name, value in vars(config).items()
        if name.startswith("ENV_") and isinstance(value, str)
    }


def test_the_copied_names_are_exactly_the_configs() -> None:
    names = _config_env_names()
    assert names >= {config.ENV_MAIN_HANDOVER, config.ENV_CONTEXT_WINDOW}
    assert set(_limit._ENV_KEYS) == names
    assert len(_limit._ENV_KEYS) == len(names)


@pytest.mark.parametrize("name", sorted(_config_env_names()))
def test_each_override_invalidates_the_cached_limit(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for other in _config_env_names():
        monkeypatch.delenv(other, raising=False)
    before: dict[str, Any] = {}
    _limit.refresh(before, 200_000, "manual")
    monkeypatch.setenv(name, "1000000")
    after: dict[str, Any] = {}
    _limit.refresh(after, 200_000, "manual")
    # A cache made under other overrides is keyed differently, so it is not reused.
    assert before["limit_env"] != after["limit_env"]

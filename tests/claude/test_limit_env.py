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
    # and Claude Code's own switch of the long window, which changes the window too
    assert set(_limit._ENV_KEYS) == names | {_limit.LONG_CONTEXT_OFF}
    assert len(_limit._ENV_KEYS) == len(names) + 1


@pytest.mark.parametrize("name", sorted(_config_env_names() | {_limit.LONG_CONTEXT_OFF}))
def test_each_override_invalidates_the_cached_limit(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for other in _config_env_names() | {_limit.LONG_CONTEXT_OFF}:
        monkeypatch.delenv(other, raising=False)
    before: dict[str, Any] = {}
    _limit.refresh(before, 200_000, "manual")
    monkeypatch.setenv(name, "1000000")
    after: dict[str, Any] = {}
    _limit.refresh(after, 200_000, "manual")
    # A cache made under other overrides is keyed differently, so it is not reused.
    assert before["limit_env"] != after["limit_env"]

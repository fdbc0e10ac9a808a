"""Policy and sweep spellings of the CLI."""

from __future__ import annotations

import pytest

from ctxrelay.analyze import Policy, Sweep, parse_policies, parse_policy, parse_sweep
from ctxrelay.budget.bounds import CONTEXT_PERCENT
from ctxrelay.errors import ConfigError


def test_policies() -> None:
    assert parse_policy("none") == Policy("none")
    assert parse_policy(" Compact ") == Policy("compact")
    assert parse_policy("handoff") == Policy("handoff", CONTEXT_PERCENT)
    assert parse_policy("handoff:45.5") == Policy("handoff", 45.5)
    assert str(Policy("handoff", 45.0)) == "handoff:45"
    assert str(Policy("handoff", 45.5)) == "handoff:45.5"
    assert parse_policies(["none,handoff:50", "handoff:50.0", "compact"]) == (
        Policy("none"),
        Policy("handoff", 50),
        Policy("compact"),
    )


@pytest.mark.parametrize(
    "text", ["", "off", "handoff:", "handoff:0", "handoff:100", "none:3", "handoff:x"]
)
def test_bad_policies(text: str) -> None:
    if text == "handoff:":
        assert parse_policy(text) == Policy("handoff", CONTEXT_PERCENT)
        return
    with pytest.raises(ConfigError):
        parse_policy(text)


def test_sweeps() -> None:
    assert parse_sweep("30..90").thresholds() == [
        30,
        35,
        40,
        45,
        50,
        55,
        60,
        65,
        70,
        75,
        80,
        85,
        90,
    ]
    assert parse_sweep("30..31:0.5").thresholds() == [30, 30.5, 31]
    assert parse_sweep("40..40").thresholds() == [40]
    assert Sweep(30, 33, 2).thresholds() == [30, 32]


@pytest.mark.parametrize(
    "text", ["30-90", "90..30", "0..50", "30..100", "30..90:0", "30..90:x", "a..b"]
)
def test_bad_sweeps(text: str) -> None:
    with pytest.raises(ConfigError):
        parse_sweep(text)

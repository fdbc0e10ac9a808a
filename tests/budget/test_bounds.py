"""Invariants of the Claude Code bounds.

(The copies of these values in agent files, the settings snippet, the docs' bounds table
and the code are pinned to this module by ``test_bounds_pins.py``.)"""

from __future__ import annotations

from pathlib import Path
from typing import get_args

from ctxrelay.budget import MIN_EFFECTIVE_THRESHOLD, OFF_THRESHOLD, bounds
from ctxrelay.budget.bounds import (
    AGENT_MAX_TURNS,
    CONTEXT_PERCENT,
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_MAIN_HANDOVER,
    HAIKU_CONTEXT_MAX,
    HANDOFF_RETRY_MAX,
    HANDOFF_WAIT_TURNS,
    LONG_CONTEXT_WINDOW,
    MAIN_HANDOVERS,
    MAIN_OUTPUT_RESERVE,
    SUBAGENT_CONTEXT_MAX,
    TURNS_LEFT_AT,
    MainHandover,
)
from ctxrelay.budget.triggers import report_now


def test_smallest_max_turns_stays_above_turns_left() -> None:
    # Otherwise the report-now note would fire on an agent's first turn.
    assert min(AGENT_MAX_TURNS.values()) > TURNS_LEFT_AT
    for agent, max_turns in AGENT_MAX_TURNS.items():
        first_turn = report_now(0, model=None, turns_used=1, max_turns=max_turns)
        assert first_turn is None, agent


def test_context_bounds_are_ordered_and_reachable() -> None:
    assert 0 < HAIKU_CONTEXT_MAX < SUBAGENT_CONTEXT_MAX < DEFAULT_CONTEXT_WINDOW
    assert DEFAULT_CONTEXT_WINDOW < LONG_CONTEXT_WINDOW


def test_context_percent_is_a_valid_active_threshold() -> None:
    assert MIN_EFFECTIVE_THRESHOLD <= CONTEXT_PERCENT < OFF_THRESHOLD


def test_main_handover_modes() -> None:
    assert get_args(MainHandover) == MAIN_HANDOVERS
    assert DEFAULT_MAIN_HANDOVER in MAIN_HANDOVERS


def test_the_handoff_point_comes_before_the_usable_limit() -> None:
    # The context-percent handoff hint comes before the usable limit denies tool calls.
    for window in (DEFAULT_CONTEXT_WINDOW, LONG_CONTEXT_WINDOW):
        assert window * CONTEXT_PERCENT // 100 < window - MAIN_OUTPUT_RESERVE


def test_handoff_wait_and_retry() -> None:
    assert HANDOFF_WAIT_TURNS >= 1
    assert HANDOFF_RETRY_MAX >= 0


def test_every_bound_is_exported() -> None:
    public = {n for n in vars(bounds) if n.isupper() and not n.startswith("_")}
    assert public <= set(bounds.__all__)
    assert all(hasattr(bounds, n) for n in bounds.__all__)


def test_bounds_are_plain_values() -> None:
    # The one place each value lives imports nothing of ctxrelay (everything else imports it).
    source = Path(bounds.__file__).read_text(encoding="utf-8").splitlines()
    imports = [line for line in source if line.startswith(("import ", "from "))]
    assert imports == ["from __future__ import annotations", "from typing import Final, Literal"]

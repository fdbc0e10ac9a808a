"""Invariants of the Claude Code bounds, and the bounds against the design brief.

(The copies of these values in agent files and the settings snippet are pinned to this
module by the plugin's own tests.)"""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest

from ctxrelay.budget import MIN_EFFECTIVE_THRESHOLD, OFF_THRESHOLD, bounds
from ctxrelay.budget.bounds import (
    AGENT_MAX_TURNS,
    BASH_MAX_OUTPUT_LENGTH,
    CONTEXT_PERCENT,
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_MAIN_HANDOVER,
    DISABLE_COMPACT,
    HAIKU_CONTEXT_MAX,
    HANDOFF_RETRY_MAX,
    HANDOFF_WAIT_TURNS,
    LONG_CONTEXT_WINDOW,
    MAIN_HANDOVERS,
    MAIN_OUTPUT_RESERVE,
    READ_MAX_BYTES,
    REPORT_MAX_WORDS,
    SUBAGENT_CONTEXT_MAX,
    TURNS_LEFT_AT,
    MainHandover,
)
from ctxrelay.budget.triggers import report_now
from tests.conftest import corpus_path


def test_smallest_max_turns_stays_above_turns_left() -> None:
    # Otherwise the report-now note would fire on an agent's first turn.
    assert min(AGENT_MAX_TURNS.values()) > TURNS_LEFT_AT
    for agent, max_turns in AGENT_MAX_TURNS.items():
        first_turn = report_now(0, model=None, turns_used=1, max_turns=max_turns)
        assert first_turn is None, agent


def test_turns_left_leaves_room_to_commit_and_report() -> None:
    # Two turns to commit the work, one to write the report, one spare.
    assert TURNS_LEFT_AT >= 4


def test_context_bounds_are_ordered_and_reachable() -> None:
    assert 0 < HAIKU_CONTEXT_MAX < SUBAGENT_CONTEXT_MAX < DEFAULT_CONTEXT_WINDOW
    assert DEFAULT_CONTEXT_WINDOW < LONG_CONTEXT_WINDOW


def test_context_percent_is_a_valid_active_threshold() -> None:
    assert MIN_EFFECTIVE_THRESHOLD <= CONTEXT_PERCENT < OFF_THRESHOLD


def test_main_handover_modes() -> None:
    assert get_args(MainHandover) == MAIN_HANDOVERS
    assert DEFAULT_MAIN_HANDOVER in MAIN_HANDOVERS
    assert DEFAULT_MAIN_HANDOVER == "manual"


def test_main_output_reserve_is_claude_codes_own_and_leaves_the_handoff_room() -> None:
    # Claude Code keeps 20,000 tokens for a response or summary and 13,000 of buffer.
    assert MAIN_OUTPUT_RESERVE == 20_000 + 13_000
    # The context-percent handoff hint comes before the usable limit denies tool calls.
    for window in (DEFAULT_CONTEXT_WINDOW, LONG_CONTEXT_WINDOW):
        assert window * CONTEXT_PERCENT // 100 < window - MAIN_OUTPUT_RESERVE


def test_handoff_wait_and_retry() -> None:
    assert HANDOFF_WAIT_TURNS >= 1
    assert HANDOFF_RETRY_MAX >= 0


def test_sizes() -> None:
    assert READ_MAX_BYTES == 4 * 1024 * 1024
    assert BASH_MAX_OUTPUT_LENGTH > 0
    assert DISABLE_COMPACT == 1
    assert REPORT_MAX_WORDS > 0


def test_every_bound_is_exported() -> None:
    public = {
        n
        for n in vars(bounds)
        if n.isupper() and not n.startswith("_") and n != "TYPE_CHECKING"  # mypy's guard
    }
    assert public <= set(bounds.__all__)
    assert all(hasattr(bounds, n) for n in bounds.__all__)


def test_bounds_take_no_runtime_dependencies() -> None:
    # The hook imports this module at every tool call: nothing at import time (``typing``
    # only for mypy, and for the ``MainHandover`` alias when it is asked for).
    source = Path(bounds.__file__).read_text(encoding="utf-8").splitlines()
    imports = [line for line in source if line.startswith(("import ", "from "))]
    assert imports == ["from __future__ import annotations"]


# -- the brief's §6 bound list, parsed, equals the module --------------------------------


def _design_bounds() -> str:
    text = corpus_path("DESIGN.md").read_text(encoding="utf-8")
    line = next((ln for ln in text.splitlines() if ln.startswith("Bounds (one module")), None)
    if line is None:
        pytest.fail("DESIGN.md has no 'Bounds (one module' line in §6")
    return line


def _number(text: str) -> int:
    return int(text.replace(",", ""))


def test_bounds_match_the_design_brief() -> None:
    line = _design_bounds()
    numbers = {
        name: _number(value) * (1024 * 1024 if unit == "MiB" else 1)
        for name, value, unit in re.findall(r"`([A-Z_]+)` ([0-9][0-9,]*)(?: (MiB))?", line)
    }
    assert numbers == {
        "SUBAGENT_CONTEXT_MAX": SUBAGENT_CONTEXT_MAX,
        "HAIKU_CONTEXT_MAX": HAIKU_CONTEXT_MAX,
        "TURNS_LEFT_AT": TURNS_LEFT_AT,
        "REPORT_MAX_WORDS": REPORT_MAX_WORDS,
        "CONTEXT_PERCENT": CONTEXT_PERCENT,
        "HANDOFF_WAIT_TURNS": HANDOFF_WAIT_TURNS,
        "HANDOFF_RETRY_MAX": HANDOFF_RETRY_MAX,
        "READ_MAX_BYTES": READ_MAX_BYTES,
    }
    handover = re.search(r"`DEFAULT_MAIN_HANDOVER` (\w+)", line)
    assert handover is not None
    assert handover.group(1) == DEFAULT_MAIN_HANDOVER
    bash = re.search(r"([0-9,]+) characters \(`BASH_MAX_OUTPUT_LENGTH`\)", line)
    assert bash is not None
    assert _number(bash.group(1)) == BASH_MAX_OUTPUT_LENGTH
    compact = re.search(r"`DISABLE_COMPACT=(\d+)`", line)
    assert compact is not None
    assert int(compact.group(1)) == DISABLE_COMPACT


def test_agent_max_turns_match_the_design_brief() -> None:
    found = re.search(r"`AGENT_MAX_TURNS` (.*?) \(", _design_bounds())
    assert found is not None
    turns: dict[str, int] = {}
    for part in found.group(1).split(", "):
        names, value = part.rsplit(" ", 1)
        for name in names.split("/"):
            turns[name] = int(value)
    assert turns == AGENT_MAX_TURNS

"""The pure rules of the Claude Code plugin (``docs/policy.md``): the subagent report-now note and
the main-session handoff triggers. Numbers come from ``bounds``; the literal values are
pinned to their copies in ``test_bounds_pins.py``."""

from __future__ import annotations

import pytest

from ctxrelay.budget.bounds import (
    AGENT_MAX_TURNS,
    CONTEXT_PERCENT,
    DEFAULT_CONTEXT_WINDOW,
    HAIKU_CONTEXT_MAX,
    LONG_CONTEXT_WINDOW,
    MAIN_OUTPUT_RESERVE,
    REPORT_MAX_WORDS,
    SUBAGENT_CONTEXT_MAX,
    TURNS_LEFT_AT,
)
from ctxrelay.budget.triggers import (
    MainTrigger,
    ReportNow,
    completed_task_in,
    context_bound_for,
    context_window_for,
    main_budget,
    main_triggers,
    report_now,
)

# -- the subagent's context bound by model -----------------------------------------------


@pytest.mark.parametrize(
    "model",
    ["claude-haiku-4-5-20251001", "claude-3-5-haiku-latest", "claude-haiku-4-5", "HAIKU"],
)
def test_haiku_models_get_the_lower_bound(model: str) -> None:
    assert context_bound_for(model) == HAIKU_CONTEXT_MAX == 85_000


@pytest.mark.parametrize(
    "model",
    ["claude-sonnet-4-5", "claude-opus-4-1-20250805", "claude-sonnet-4-5[1m]", "", None],
)
def test_other_models_get_the_subagent_bound(model: str | None) -> None:
    assert context_bound_for(model) == SUBAGENT_CONTEXT_MAX == 100_000


# -- report now ---------------------------------------------------------------------------


def test_below_both_bounds_adds_nothing() -> None:
    model = "claude-sonnet-4-5"
    assert report_now(SUBAGENT_CONTEXT_MAX, model=model, turns_used=0, max_turns=31) is None
    assert report_now(SUBAGENT_CONTEXT_MAX, model=model, turns_used=0, max_turns=None) is None
    assert report_now(0, model=model, turns_used=0, max_turns=None) is None


@pytest.mark.parametrize(
    ("model", "bound"),
    [("claude-sonnet-4-5", SUBAGENT_CONTEXT_MAX), ("claude-haiku-4-5", HAIKU_CONTEXT_MAX)],
)
def test_context_over_the_bound_of_the_model(model: str, bound: int) -> None:
    assert report_now(bound, model=model, turns_used=1, max_turns=31) is None  # at: not over
    fired = report_now(bound + 1, model=model, turns_used=1, max_turns=31)
    assert fired is not None
    assert fired.over_context
    assert not fired.few_turns
    assert fired.context_bound == bound


def test_haiku_fires_where_sonnet_does_not() -> None:
    tokens = HAIKU_CONTEXT_MAX + 1
    assert report_now(tokens, model="claude-haiku-4-5", turns_used=1, max_turns=None)
    assert report_now(tokens, model="claude-sonnet-4-5", turns_used=1, max_turns=None) is None


@pytest.mark.parametrize("max_turns", sorted(set(AGENT_MAX_TURNS.values())))
def test_turns_left_at_or_below_the_threshold(max_turns: int) -> None:
    used_ok = max_turns - TURNS_LEFT_AT - 1  # TURNS_LEFT_AT + 1 left
    assert report_now(0, model=None, turns_used=used_ok, max_turns=max_turns) is None
    fired = report_now(0, model=None, turns_used=used_ok + 1, max_turns=max_turns)
    assert fired is not None
    assert fired.turns_left == TURNS_LEFT_AT == 4
    assert fired.few_turns
    assert not fired.over_context
    assert report_now(0, model=None, turns_used=max_turns, max_turns=max_turns) is not None


def test_without_max_turns_only_the_context_counts() -> None:
    assert report_now(10, model=None, turns_used=10_000, max_turns=None) is None
    fired = report_now(SUBAGENT_CONTEXT_MAX + 1, model=None, turns_used=3, max_turns=None)
    assert fired is not None
    assert fired.turns_left is None
    assert not fired.few_turns


def test_note_states_the_limit_the_numbers_and_the_word_cap() -> None:
    fired = report_now(101_234, model="claude-opus-4-1", turns_used=5, max_turns=41)
    assert fired is not None
    note = fired.note()
    assert note.startswith("[ctxrelay] Report now:")
    assert "your context is 101,234 tokens, over the 100,000-token bound" in note
    assert "turns" not in note.split("Commit")[0]  # turns were fine: not mentioned
    assert f"within {REPORT_MAX_WORDS} words" in note
    assert "400 words" in note
    assert "Do not start new work" in note


def test_note_for_few_turns() -> None:
    fired = report_now(2_000, model=None, turns_used=28, max_turns=31)
    assert fired is not None
    note = fired.note()
    assert "you have used 28 of your 31 turns (3 left; the limit is 4 or fewer)" in note
    assert "bound" not in note  # the context was fine


def test_note_for_both_reasons() -> None:
    fired = report_now(90_000, model="claude-haiku-4-5", turns_used=57, max_turns=61)
    assert fired is not None
    assert fired == ReportNow(90_000, 85_000, 57, 61, over_context=True, few_turns=True)
    assert "over the 85,000-token bound for subagents and you have used 57 of your 61" in (
        fired.note()
    )


def test_report_now_is_an_immutable_value() -> None:
    fired = report_now(200_000, model=None, turns_used=0, max_turns=None)
    assert fired is not None
    with pytest.raises(AttributeError):
        fired.context_tokens = 1  # type: ignore[misc]


# -- main-session triggers ------------------------------------------------------------------


def _target(window: int, threshold: float = CONTEXT_PERCENT) -> int | None:
    return main_budget(window, threshold).handoff_target


def test_context_share_of_the_default_window() -> None:
    window = context_window_for("claude-sonnet-4-5")
    assert window == DEFAULT_CONTEXT_WINDOW == 200_000
    assert CONTEXT_PERCENT == 60
    assert _target(window) == 120_000
    assert main_triggers(119_999, _target(window), task_completed=False) == frozenset()
    assert main_triggers(120_000, _target(window), task_completed=False) == {MainTrigger.CONTEXT}


@pytest.mark.parametrize(
    "model", ["claude-sonnet-4-5[1m]", "claude-opus-4-6[1M]", "claude-sonnet-4-5-1m"]
)
def test_one_million_context_models(model: str) -> None:
    window = context_window_for(model)
    assert window == LONG_CONTEXT_WINDOW == 1_000_000
    # 120000 is 60% of a 200k window but only 12% of this one.
    target = _target(window)
    assert main_triggers(120_000, target, task_completed=False) == frozenset()
    assert main_triggers(599_999, target, task_completed=False) == frozenset()
    assert main_triggers(600_000, target, task_completed=False) == {MainTrigger.CONTEXT}


def test_configured_window_wins() -> None:
    assert context_window_for("claude-sonnet-4-5[1m]", 400_000) == 400_000
    assert context_window_for(None, 128_000) == 128_000
    assert context_window_for(None) == DEFAULT_CONTEXT_WINDOW
    assert context_window_for("claude-sonnet-4-5", 0) == DEFAULT_CONTEXT_WINDOW  # unknown
    assert context_window_for("m", -5) == DEFAULT_CONTEXT_WINDOW


def test_the_target_is_the_policy_cores() -> None:
    # 60% of 333333 is 199999.8: the core floors it, like the runtime's target.
    assert _target(333_333) == 199_999
    assert main_triggers(199_998, _target(333_333), task_completed=False) == frozenset()
    assert main_triggers(199_999, _target(333_333), task_completed=False) == {MainTrigger.CONTEXT}


def test_the_slider_moves_the_target_with_the_cores_rules() -> None:
    assert _target(200_000, 45) == 90_000
    assert _target(200_000, 62.5) == 125_000
    assert _target(200_000, 5) == 20_000  # the 10% floor
    assert _target(200_000, 100) is None  # Off
    budget = main_budget(200_000, 100)
    assert budget.off
    assert budget.usable_limit == 200_000 - MAIN_OUTPUT_RESERVE


def test_off_no_context_trigger() -> None:
    assert main_triggers(10**9, None, task_completed=False) == frozenset()


def test_task_completed_trigger() -> None:
    assert main_triggers(0, 120_000, task_completed=True) == {MainTrigger.TASK_DONE}
    assert main_triggers(150_000, 120_000, task_completed=True) == {
        MainTrigger.CONTEXT,
        MainTrigger.TASK_DONE,
    }


@pytest.mark.parametrize(
    ("calls", "completed"),
    [
        ([("TaskUpdate", {"taskId": "3", "status": "completed"})], True),
        ([("TaskUpdate", {"taskId": "3", "status": "in_progress"})], False),
        ([("TaskUpdate", {"taskId": "3"})], False),
        ([("TaskCreate", {"subject": "x", "status": "completed"})], False),
        (
            [
                (
                    "TodoWrite",
                    {
                        "todos": [
                            {"content": "a", "status": "completed"},
                            {"content": "b", "status": "pending"},
                        ]
                    },
                )
            ],
            True,
        ),
        ([("TodoWrite", {"todos": [{"content": "a", "status": "in_progress"}]})], False),
        ([("TodoWrite", {"todos": "completed"})], False),
        ([("TodoWrite", {"todos": ["completed"]})], False),
        ([("TaskUpdate", "completed")], False),
        ([("TaskUpdate", None)], False),
        ([("Bash", {"command": "echo completed", "status": "completed"})], False),
        ([("Read", {"file_path": "x"}), ("TaskUpdate", {"status": "completed"})], True),
        ([], False),
    ],
)
def test_completed_task_in(calls: list[tuple[str, object]], completed: bool) -> None:
    assert completed_task_in(calls) is completed


def test_completed_task_in_takes_any_iterable() -> None:
    calls = (c for c in [("TaskUpdate", {"status": "completed"})])
    assert completed_task_in(calls)

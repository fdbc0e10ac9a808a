"""The advisory wording (three capability variants and the warning) and the row metadata
that publishes an advisory (``docs/policy.md``, "Wording and row metadata")."""

from __future__ import annotations

import json

import pytest

from ctxrelay.budget import (
    DEFAULT_NOTES_FILE,
    Budget,
    Capability,
    Stage,
    advisory_metadata,
    advisory_text,
    handoff_text,
    warning_text,
)

B = Budget(limit=200_000, output_reserve=32_000, threshold=60)
OFF = Budget(limit=200_000, output_reserve=32_000, threshold=100)


def in_order(text: str, *phrases: str) -> bool:
    """Whether every phrase occurs in ``text``, each after the previous one."""
    at = 0
    for phrase in phrases:
        found = text.find(phrase, at)
        if found < 0:
            return False
        at = found + len(phrase)
    return True


@pytest.mark.parametrize("capability", list(Capability))
def test_handoff_asks_for_the_steps_in_order(capability: Capability) -> None:
    text = handoff_text(B, 121_000, capability)
    assert in_order(
        text,
        "121,000 tokens",
        "handoff target of 120,000",
        "Finish the current small unit of work",
        f"checkpoint your notes in `{DEFAULT_NOTES_FILE}`",
        "confirm the write",
        "If the task is already complete, finish your reply instead.",
    )
    assert text.startswith("[ctxrelay] ")
    assert "168,000" in text  # the hard limit is stated too


def test_full_offers_new_context_in_a_later_step() -> None:
    text = handoff_text(B, 121_000, Capability.FULL)
    assert in_order(text, "confirm the write", "in a later step, call `new_context`")
    assert "if the `new_context` tool is available" not in text
    assert "session_history" in text


def test_conditional_says_if_the_tool_is_available() -> None:
    text = handoff_text(B, 121_000, Capability.CONDITIONAL)
    assert "in a later step, if the `new_context` tool is available to you, call it" in text
    assert "if it is not, keep working and the window will roll over at the hard limit" in text


def test_degraded_checkpoints_anyway_and_never_mentions_the_tool() -> None:
    text = handoff_text(B, 121_000, Capability.DEGRADED)
    assert "new_context" not in text
    assert "Checkpoint the notes even though you cannot start a fresh window yourself" in text
    assert "roll over when it reaches 168,000 tokens" in text


def test_no_history_recovery_degrades_the_wording() -> None:
    text = handoff_text(B, 121_000, Capability.FULL, history_available=False)
    assert "new_context" not in text
    assert "session_history" not in text
    assert "will not be retrievable" in text
    assert text == handoff_text(B, 121_000, Capability.DEGRADED, history_available=False)


def test_three_distinct_variants() -> None:
    texts = {handoff_text(B, 121_000, c) for c in Capability}
    assert len(texts) == 3


def test_warning_says_how_far_and_to_keep_notes_current() -> None:
    text = warning_text(B, 100_000)
    assert text.startswith("[ctxrelay] Context warning")
    assert "100,000 tokens" in text
    assert "20,000 tokens short of its handoff target of 120,000" in text
    assert f"Keep `{DEFAULT_NOTES_FILE}` current" in text
    assert "new_context" not in text  # a warning asks for nothing but notes


def test_warning_distance_never_negative() -> None:
    assert "0 tokens short" in warning_text(B, 125_000)


def test_notes_file_is_configurable() -> None:
    assert "`notes/NOTES.md`" in warning_text(B, 100_000, notes_file="notes/NOTES.md")
    for capability in Capability:
        text = handoff_text(B, 121_000, capability, notes_file="notes/NOTES.md")
        assert "`notes/NOTES.md`" in text
        assert DEFAULT_NOTES_FILE not in text


def test_advisory_text_dispatches_on_stage() -> None:
    assert advisory_text(B, Stage.WARNING, 100_000) == warning_text(B, 100_000)
    for capability in Capability:
        assert advisory_text(B, Stage.HANDOFF, 121_000, capability) == handoff_text(
            B, 121_000, capability
        )
    assert advisory_text(
        B, Stage.HANDOFF, 121_000, history_available=False, notes_file="n.md"
    ) == handoff_text(B, 121_000, history_available=False, notes_file="n.md")


def test_off_has_no_wording() -> None:
    with pytest.raises(ValueError, match="Off"):
        warning_text(OFF, 100_000)
    with pytest.raises(ValueError, match="Off"):
        handoff_text(OFF, 121_000)


# -- row metadata ---------------------------------------------------------------------------


def test_warning_metadata() -> None:
    meta = advisory_metadata(B, Stage.WARNING, 100_000)
    assert meta == {
        "kind": "warning",
        "stage": "warning",
        "tokens": 100_000,
        "budgetTokens": 168_000,
    }
    assert "handoff" not in meta
    assert "handoffTokens" not in meta


def test_handoff_metadata_is_a_warning_with_optional_fields() -> None:
    meta = advisory_metadata(B, Stage.HANDOFF, 121_000)
    assert meta == {
        "kind": "warning",  # an older reader shows it as an ordinary warning
        "stage": "handoff",
        "tokens": 121_000,
        "budgetTokens": 168_000,
        "handoff": True,
        "handoffTokens": 120_000,
    }


@pytest.mark.parametrize(("reserve", "threshold"), [(32_000, 60), (0, 10), (100_000, 45.5)])
def test_budget_tokens_is_always_the_usable_limit(reserve: int, threshold: float) -> None:
    budget = Budget(limit=200_000, output_reserve=reserve, threshold=threshold)
    for stage in Stage:
        meta = advisory_metadata(budget, stage, 1)
        assert meta["budgetTokens"] == budget.usable_limit
        assert meta["budgetTokens"] != budget.handoff_target or reserve == 80_000
    assert advisory_metadata(budget, Stage.HANDOFF, 1)["handoffTokens"] == budget.handoff_target


def test_metadata_is_plain_json() -> None:
    for stage in Stage:
        meta = advisory_metadata(B, stage, 121_000)
        assert json.loads(json.dumps(meta)) == meta
        assert type(meta["stage"]) is str  # not the enum: rows are read by other readers

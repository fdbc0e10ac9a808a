"""``plan_dispatch`` and its helpers, called directly: no provider, no store, no loop."""

from __future__ import annotations

import dataclasses

import pytest

from ctxrelay.budget import Action, Budget, Capability, Stage, advisory_text, handoff_text
from ctxrelay.runtime import (
    DispatchPlan,
    LastResponse,
    WindowState,
    capability_for,
    estimate_request,
    guard_request,
    plan_dispatch,
)
from ctxrelay.runtime.estimate import BytesPerTokenEstimator
from ctxrelay.runtime.plan import ADVISORY_WRAP_TOKENS

SMALL = Budget(limit=10_000, output_reserve=2_000, threshold=60)
"""usable 8,000 · target 6,000 · warning 5,000."""
OFF = Budget(limit=10_000, output_reserve=2_000, threshold=100)
W1 = WindowState("w1", 1)


def _plan(tokens: int, window: WindowState = W1, **kw: object) -> DispatchPlan:
    return plan_dispatch(SMALL, tokens, window=window, **kw)  # type: ignore[arg-type]


def test_below_the_warning_sends_as_is() -> None:
    plan = _plan(4_999)
    assert plan.action is Action.CONTINUE
    assert (plan.stage, plan.skipped, plan.advisory, plan.seal_reason) == (None, None, None, None)
    assert plan.advisory_tokens == 0  # no stage can be due: the text is not even estimated
    assert plan.offer_new_context


def test_the_warning_is_worded_and_tagged_by_the_policy_core() -> None:
    plan = _plan(5_000, notes_file="notes.md")
    assert (plan.action, plan.stage) == (Action.WARN, Stage.WARNING)
    assert plan.advisory_text == advisory_text(SMALL, Stage.WARNING, 5_000, notes_file="notes.md")
    assert plan.advisory_metadata == {
        "kind": "warning",
        "stage": "warning",
        "tokens": 5_000,
        "budgetTokens": 8_000,
    }
    row = plan.advisory
    assert row is not None
    assert (row.kind, row.text, dict(row.metadata)) == (
        "warning",
        plan.advisory_text,
        plan.advisory_metadata,
    )


def test_the_handoff_request_is_a_warning_row_with_handoff_fields() -> None:
    window = WindowState("w1", 1, claimed=frozenset({"warning"}))
    plan = _plan(6_000, window, capability=Capability.CONDITIONAL, history_available=False)
    assert (plan.action, plan.stage) == (Action.WARN, Stage.HANDOFF)
    assert plan.advisory_text == handoff_text(
        SMALL, 6_000, Capability.CONDITIONAL, history_available=False
    )
    assert plan.advisory is not None
    assert plan.advisory.kind == "warning"
    assert plan.advisory_metadata == {
        "kind": "warning",
        "stage": "handoff",
        "tokens": 6_000,
        "budgetTokens": 8_000,
        "handoff": True,
        "handoffTokens": 6_000,
    }


def test_a_claimed_stage_is_never_published_again() -> None:
    both = WindowState("w1", 1, claimed=frozenset({"warning", "handoff"}))
    assert _plan(5_500, both).action is Action.CONTINUE
    assert _plan(7_000, both).action is Action.CONTINUE
    # A claim of a stage this version does not know is ignored, not an error.
    odd = WindowState("w1", 1, claimed=frozenset({"warning", "someday"}))
    assert _plan(6_500, odd).stage is Stage.HANDOFF


def test_an_advisory_without_headroom_is_skipped_not_pulled_earlier() -> None:
    calls: list[str] = []

    def huge(text: str) -> int:
        calls.append(text)
        return 10_000

    window = WindowState("w1", 1, claimed=frozenset({"warning"}))
    plan = _plan(7_900, window, estimate_text=huge)
    assert (plan.action, plan.skipped, plan.advisory) == (Action.CONTINUE, Stage.HANDOFF, None)
    assert plan.advisory_tokens == ADVISORY_WRAP_TOKENS + 10_000
    assert len(calls) == 1
    assert "new_context" in calls[0]  # room for the longer text, the handoff request's


def test_over_the_usable_limit_rolls_over_forced_or_emergency() -> None:
    assert _plan(8_001).seal_reason == "forced"
    assert _plan(8_001).action is Action.ROLLOVER
    # The provider already counted a request of this window above the limit: the window
    # overflowed after admission.
    overflowed = WindowState("w1", 1, max_context_tokens=8_050)
    assert _plan(8_100, overflowed).seal_reason == "emergency"
    assert _plan(8_000).action is not Action.ROLLOVER  # the limit itself still fits


def test_off_blocks_with_a_sentence_and_never_advises() -> None:
    assert plan_dispatch(OFF, 7_999, window=W1).action is Action.CONTINUE
    plan = plan_dispatch(OFF, 8_001, window=W1)
    assert plan.action is Action.BLOCK
    assert plan.message is not None
    assert "8,001" in plan.message
    assert "nothing was sent" in plan.message
    assert not plan.offer_new_context


def test_an_inactive_session_gets_no_advisory_but_the_limit_holds() -> None:
    assert _plan(6_500, active=False).action is Action.CONTINUE
    assert _plan(8_001, active=False).action is Action.ROLLOVER


def test_the_plan_is_a_frozen_value_and_the_function_is_pure() -> None:
    window = WindowState("w1", 1, claimed=frozenset({"warning"}))
    first = _plan(6_200, window)
    assert first == _plan(6_200, window)
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.tokens = 0  # type: ignore[misc]


@pytest.mark.parametrize(
    ("policy", "tool", "history", "expected"),
    [
        ("offered", True, True, Capability.FULL),
        ("conditional", True, True, Capability.CONDITIONAL),
        ("forbidden", True, True, Capability.DEGRADED),
        ("offered", False, True, Capability.DEGRADED),
        ("offered", True, False, Capability.DEGRADED),
        ("conditional", True, False, Capability.DEGRADED),
    ],
)
def test_capability_for(policy: str, tool: bool, history: bool, expected: Capability) -> None:
    got = capability_for(policy, new_context_tool=tool, session_history=history)  # type: ignore[arg-type]
    assert got is expected


def test_a_degraded_capability_offers_no_new_context() -> None:
    plan = _plan(6_000, capability=Capability.DEGRADED)
    assert plan.stage is Stage.HANDOFF
    assert plan.advisory_text == handoff_text(SMALL, 6_000, Capability.DEGRADED)
    assert not plan.offer_new_context


def test_estimate_request_adds_what_was_appended_to_the_provider_count() -> None:
    est = BytesPerTokenEstimator(4.0)
    # A fresh window: everything is estimated.
    assert estimate_request(4_000, None, est.estimate_bytes) == est.estimate_bytes(4_000)
    last = LastResponse(
        context_tokens=1_000, output_tokens=50, request_bytes=4_000, message_bytes=300
    )
    # Nothing appended since but the reply: the count plus the larger of the reply's
    # exact output and its estimate.
    got = estimate_request(4_300, last, est.estimate_bytes)
    assert got == 1_000 + max(50, est.estimate_bytes(300))
    # A large tool result after the reply: its estimate on top of the reply's output.
    got = estimate_request(14_300, last, est.estimate_bytes)
    assert got == 1_000 + max(50 + est.estimate_bytes(10_000), est.estimate_bytes(10_300))
    assert got >= 1_000 + 50
    # A request smaller than the last one (nothing appended) never counts below it.
    assert estimate_request(100, last, est.estimate_bytes) == 1_000 + 50


def test_guard_request_never_sends_above_the_usable_limit() -> None:
    assert guard_request(SMALL, 8_000, answered=False) == "send"
    assert guard_request(SMALL, 8_001, answered=True) == "rollover"
    assert guard_request(SMALL, 8_001, answered=False) == "pause"


def test_last_response_reads_the_metadata_the_runtime_writes() -> None:
    meta = {
        "context_tokens": 900,
        "output_tokens": 40,
        "request_bytes": 3_000,
        "message_bytes": 120,
    }
    assert LastResponse.from_metadata(meta) == LastResponse(900, 40, 3_000, 120)
    assert LastResponse.from_metadata({"context_tokens": 900, "request_bytes": 3_000}) == (
        LastResponse(900, 0, 3_000, 0)
    )
    # An older history's row without the counts: the whole request is estimated.
    assert LastResponse.from_metadata({"usage": {"input_tokens": 900}}) is None

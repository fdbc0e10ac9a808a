"""Every rule and consequence of ``docs/policy.md``, one example each, on the budget of the docs
(limit 200000, reserve 32000, threshold 60: usable 168000, target 120000, warning 100000)."""

from __future__ import annotations

import copy
import math
import pickle
from decimal import Decimal

import pytest

from ctxrelay.budget import (
    DEFAULT_WARNING_LEAD,
    MIN_EFFECTIVE_THRESHOLD,
    OFF_THRESHOLD,
    Action,
    Budget,
    BudgetValueError,
    Capability,
    Decision,
    Stage,
    evaluate,
    simulate,
)

B = Budget(limit=200_000, output_reserve=32_000, threshold=60)
OFF = Budget(limit=200_000, output_reserve=32_000, threshold=100)
W, H = Stage.WARNING, Stage.HANDOFF


def warn(stage: Stage) -> Decision:
    return Decision(Action.WARN, stage)


CONTINUE = Decision(Action.CONTINUE)

# -- the budget and its derived points -------------------------------------------------


def test_derived_points() -> None:
    assert B.usable_limit == 168_000
    assert B.handoff_target == 120_000
    assert B.warning_at == 100_000
    assert B.effective_threshold == 60
    assert not B.off
    assert B.warning_lead == DEFAULT_WARNING_LEAD == 10


def test_off_is_threshold_100() -> None:
    assert OFF_THRESHOLD == 100
    assert OFF.off
    assert OFF.handoff_target is None
    assert OFF.warning_at is None
    assert OFF.usable_limit == 168_000  # Off still has its forced point
    assert not Budget(200_000, 32_000, threshold=99.99).off


@pytest.mark.parametrize("threshold", [0, 0.5, 5, 9.99, 10])
def test_ten_percent_floor(threshold: float) -> None:
    budget = Budget(limit=200_000, output_reserve=32_000, threshold=threshold)
    assert MIN_EFFECTIVE_THRESHOLD == 10
    assert budget.effective_threshold == 10
    assert budget.handoff_target == 20_000
    assert budget.threshold == threshold  # the slider as set is kept for display


def test_floor_only_raises() -> None:
    budget = Budget(limit=200_000, output_reserve=32_000, threshold=10.5)
    assert budget.effective_threshold == 10.5
    assert budget.handoff_target == 21_000


def test_target_is_not_clamped_to_the_usable_limit() -> None:
    # A target past the usable limit is kept as is: the handoff is then unreachable and
    # the window only ever rolls over.
    budget = Budget(limit=200_000, output_reserve=100_000, threshold=90)
    assert budget.handoff_target == 180_000
    assert budget.usable_limit == 100_000
    assert budget.warning_at == 160_000
    assert evaluate(budget, 100_001).action is Action.ROLLOVER
    assert all(evaluate(budget, n) == CONTINUE for n in range(0, 100_001, 1_000))


@pytest.mark.parametrize(
    ("limit", "threshold", "target", "naive"),
    [
        # floor(limit x threshold / 100) in binary floating point lands one token low.
        (200_000, 16.4, 32_800, 32_799),
        (200_000, 10.2, 20_400, 20_399),
        (1_000, 32.3, 323, 322),
        (1_000, 64.1, 641, 640),
    ],
)
def test_decimal_thresholds_floor_exactly(
    limit: int, threshold: float, target: int, naive: int
) -> None:
    assert math.floor(limit * threshold / 100) == naive  # the trap
    assert Budget(limit, 0, threshold=threshold).handoff_target == target


def test_decimal_warning_lead_floors_exactly() -> None:
    # 200000 x 10.2% = 20400 exactly (naively 20399.999999999996).
    budget = Budget(limit=200_000, output_reserve=0, threshold=60, warning_lead=10.2)
    assert budget.warning_at == 120_000 - 20_400


def test_decimal_values_are_exact() -> None:
    # Callers holding the user's text may pass a Decimal; it is honoured to the digit.
    lead = Decimal("0.1")
    budget = Budget(200_000, 0, threshold=Decimal("16.4"), warning_lead=lead)  # type: ignore[arg-type]
    assert budget.handoff_target == 32_800
    assert budget.warning_at == 32_800 - 200


def test_budget_is_a_frozen_value() -> None:
    # A frozen dataclass: no assignment or deletion of any
    # attribute, equality and hashing by the four values it was built from, their repr.
    with pytest.raises(AttributeError, match="cannot assign to field 'limit'"):
        B.limit = 1  # type: ignore[misc]
    with pytest.raises(AttributeError, match="cannot assign to field '_target'"):
        B._target = 1  # type: ignore[misc]
    with pytest.raises(AttributeError, match="cannot delete field 'threshold'"):
        del B.threshold
    assert B.handoff_target == 120_000  # untouched
    assert Budget(200_000, 32_000, 60) == B == Budget(200_000, 32_000, 60.0, 10)
    assert hash(Budget(200_000, 32_000, 60)) == hash(B) == hash((200_000, 32_000, 60, 10))
    assert Budget(200_000, 32_000, 61) != B
    assert Budget(200_000, 32_000, 60, 9) != B
    assert B != (200_000, 32_000, 60, 10)  # type: ignore[comparison-overlap]
    assert len({B, Budget(200_000, 32_000, 60), OFF}) == 2
    assert repr(B) == "Budget(limit=200000, output_reserve=32000, threshold=60, warning_lead=10)"
    lead = Decimal("7.5")
    shown = repr(Budget(200_000, 0, 62.5, lead))  # type: ignore[arg-type]
    assert (
        shown
        == "Budget(limit=200000, output_reserve=0, threshold=62.5, warning_lead=Decimal('7.5'))"
    )


def test_budget_copies_pickles_and_matches_by_its_fields() -> None:
    budget = Budget(limit=200_000, output_reserve=32_000, threshold=16.4, warning_lead=7.5)
    for copied in (copy.copy(budget), copy.deepcopy(budget), pickle.loads(pickle.dumps(budget))):
        assert copied == budget
        assert (copied.handoff_target, copied.warning_at) == (32_800, 17_800)
    match budget:
        case Budget(limit, reserve, threshold, lead):
            assert (limit, reserve, threshold, lead) == (200_000, 32_000, 16.4, 7.5)
        case _:
            pytest.fail("no match")


def test_decision_is_a_frozen_value() -> None:
    decision = Decision(Action.WARN, H, offer_new_context=False)
    assert decision == Decision(action=Action.WARN, stage=H, skipped=None, offer_new_context=False)
    assert decision != Decision(Action.WARN, H)
    assert decision != Decision(Action.WARN, W, offer_new_context=False)
    assert hash(decision) == hash((Action.WARN, H, None, False))
    assert repr(decision) == (
        "Decision(action=<Action.WARN: 'warn'>, stage=<Stage.HANDOFF: 'handoff'>, "
        "skipped=None, offer_new_context=False)"
    )
    with pytest.raises(AttributeError, match="cannot assign to field 'action'"):
        decision.action = Action.BLOCK  # type: ignore[misc]
    with pytest.raises(AttributeError, match="cannot delete field 'stage'"):
        del decision.stage
    assert pickle.loads(pickle.dumps(decision)) == decision == copy.deepcopy(decision)
    match evaluate(B, 120_000):
        case Decision(Action.WARN, stage, skipped=None, offer_new_context=True):
            assert stage is H
        case _:
            pytest.fail("no match")


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"limit": 0, "output_reserve": 0}, "limit"),
        ({"limit": -1, "output_reserve": 0}, "limit"),
        ({"limit": 1.5, "output_reserve": 0}, "limit"),
        ({"limit": True, "output_reserve": 0}, "limit"),
        ({"limit": 100, "output_reserve": -1}, "output_reserve"),
        ({"limit": 100, "output_reserve": 100}, "output_reserve"),
        ({"limit": 100, "output_reserve": 101}, "output_reserve"),
        ({"limit": 100, "output_reserve": 1.0}, "output_reserve"),
        ({"limit": 100, "output_reserve": 0, "threshold": -0.01}, "threshold"),
        ({"limit": 100, "output_reserve": 0, "threshold": 100.01}, "threshold"),
        ({"limit": 100, "output_reserve": 0, "threshold": math.nan}, "threshold"),
        ({"limit": 100, "output_reserve": 0, "threshold": math.inf}, "threshold"),
        ({"limit": 100, "output_reserve": 0, "threshold": True}, "threshold"),
        ({"limit": 100, "output_reserve": 0, "threshold": "sixty"}, "threshold"),
        ({"limit": 100, "output_reserve": 0, "threshold": Decimal("1e-999999999")}, "threshold"),
        ({"limit": 100, "output_reserve": 0, "warning_lead": -1}, "warning_lead"),
        ({"limit": 100, "output_reserve": 0, "warning_lead": 101}, "warning_lead"),
    ],
)
def test_budget_rejects_bad_values(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(BudgetValueError) as info:
        Budget(**kwargs)  # type: ignore[arg-type]
    assert info.value.field == field
    assert str(info.value).startswith(f"{field} must be ")
    assert isinstance(info.value, ValueError)


# -- evaluate: rule by rule ----------------------------------------------------------------


def test_rule1_over_the_usable_limit_rolls_over() -> None:
    assert evaluate(B, 168_000) != Decision(Action.ROLLOVER)
    assert evaluate(B, 168_001) == Decision(Action.ROLLOVER)
    # Even with every stage claimed and the mode paused: never an oversized dispatch.
    assert evaluate(B, 168_001, claimed={W, H}, active=False).action is Action.ROLLOVER


def test_rule1_off_blocks_instead() -> None:
    decision = evaluate(OFF, 168_001)
    assert decision.action is Action.BLOCK
    assert decision.stage is None
    assert not decision.offer_new_context
    assert evaluate(OFF, 168_000).action is Action.CONTINUE


def test_rule2_off_never_warns_nor_offers_new_context() -> None:
    for tokens in (0, 99_999, 100_000, 120_000, 168_000):
        decision = evaluate(OFF, tokens)
        assert decision == Decision(Action.CONTINUE, offer_new_context=False)


def test_rule2_inactive_continues_but_keeps_new_context() -> None:
    for tokens in (100_000, 120_000, 168_000):
        assert evaluate(B, tokens, active=False) == CONTINUE
    assert evaluate(B, 120_000, active=False).offer_new_context


def test_rule3_handoff_at_the_target() -> None:
    assert evaluate(B, 119_999) == warn(W)
    assert evaluate(B, 120_000) == warn(H)
    assert evaluate(B, 168_000) == warn(H)
    assert evaluate(B, 120_000).claims is H


def test_rule3_handoff_once_per_window() -> None:
    assert evaluate(B, 130_000, claimed={H}) == CONTINUE
    assert evaluate(B, 130_000, claimed={W, H}) == CONTINUE


def test_rule3_headroom_counts_the_advisory() -> None:
    # 120000 + 48000 = 168000 fits exactly; one more token does not.
    assert evaluate(B, 120_000, advisory_tokens=48_000) == warn(H)
    skipped = evaluate(B, 120_000, advisory_tokens=48_001)
    assert skipped == Decision(Action.CONTINUE, skipped=H)
    assert skipped.claims is None


def test_rule3_a_skipped_handoff_is_never_pulled_earlier() -> None:
    # 161000 + 8000 > 168000: the handoff is skipped. A smaller estimate next (the host
    # trimmed a tool result) is below the target: only the warning may come there.
    steps = simulate(B, [161_000, 119_999, 119_000, 159_000], advisory_tokens=8_000)
    assert [s.decision for s in steps] == [
        Decision(Action.CONTINUE, skipped=H),
        warn(W),
        CONTINUE,
        warn(H),  # 159000 + 8000 fits: the first dispatch past the target with headroom
    ]


def test_rule4_warning_between_warning_point_and_target() -> None:
    assert evaluate(B, 99_999) == CONTINUE
    assert evaluate(B, 100_000) == warn(W)
    assert evaluate(B, 119_999) == warn(W)
    assert evaluate(B, 100_000).claims is W


def test_rule4_warning_needs_headroom() -> None:
    assert evaluate(B, 110_000, advisory_tokens=58_000) == warn(W)
    assert evaluate(B, 110_000, advisory_tokens=58_001) == Decision(Action.CONTINUE, skipped=W)


def test_rule5_below_the_warning_point() -> None:
    for tokens in (0, 1, 50_000, 99_999):
        assert evaluate(B, tokens) == CONTINUE


# -- the consequences ---------------------------------------------------------------------


def test_handoff_supersedes_an_undelivered_warning() -> None:
    # The window jumps from below the warning point straight past the target.
    steps = simulate(B, [90_000, 125_000, 110_000, 115_000])
    assert [s.decision for s in steps] == [CONTINUE, warn(H), CONTINUE, CONTINUE]


def test_handoff_supersedes_a_warning_skipped_for_headroom() -> None:
    # The warning is due at 105000 but its text does not fit; a skip claims nothing, so
    # the handoff comes at the target as usual (its own estimate fits there).
    first = evaluate(B, 105_000, advisory_tokens=64_000)
    assert first == Decision(Action.CONTINUE, skipped=W)
    assert first.claims is None
    assert evaluate(B, 121_000, advisory_tokens=40_000, claimed=set()) == warn(H)


def test_a_claimed_handoff_suppresses_later_warnings() -> None:
    # A host may see a smaller estimate after the handoff (e.g. a tool result trimmed).
    assert evaluate(B, 105_000, claimed={H}) == CONTINUE


def test_a_delivered_warning_never_consumes_the_handoff() -> None:
    assert evaluate(B, 120_000, claimed={W}) == warn(H)


def test_one_of_each_stage_per_window() -> None:
    assert evaluate(B, 105_000, claimed={W}) == CONTINUE
    steps = simulate(B, [100_000, 101_000, 120_000, 121_000, 150_000])
    stages = [s.decision.stage for s in steps]
    assert stages == [W, None, H, None, None]


def test_forced_rollover_resets_claims() -> None:
    steps = simulate(B, [100_000, 120_000, 170_000, 100_000, 120_000, 130_000])
    assert [(s.decision.action, s.decision.stage, s.window) for s in steps] == [
        (Action.WARN, W, 1),
        (Action.WARN, H, 1),
        (Action.ROLLOVER, None, 1),  # a rollover reports the window it seals
        (Action.WARN, W, 2),
        (Action.WARN, H, 2),
        (Action.CONTINUE, None, 2),
    ]


def test_off_blocks_in_place() -> None:
    steps = simulate(OFF, [150_000, 170_000, 170_000, 10_000])
    assert [s.decision.action for s in steps] == [
        Action.CONTINUE,
        Action.BLOCK,
        Action.BLOCK,
        Action.CONTINUE,
    ]
    assert {s.window for s in steps} == {1}  # a block seals nothing


@pytest.mark.parametrize("lead", [10, 15, 60])
def test_no_warning_stage_when_the_lead_reaches_the_target(lead: float) -> None:
    # Threshold 10 -> target 20000; a lead of 10 points puts the warning at 0.
    budget = Budget(limit=200_000, output_reserve=32_000, threshold=10, warning_lead=lead)
    assert budget.warning_at is None
    for tokens in range(0, 20_000, 997):
        assert evaluate(budget, tokens) == CONTINUE
    assert evaluate(budget, 20_000) == warn(H)


def test_zero_lead_means_no_warning_either() -> None:
    budget = Budget(limit=200_000, output_reserve=32_000, threshold=60, warning_lead=0)
    assert budget.warning_at == 120_000  # equal to the target: an empty range
    assert evaluate(budget, 119_999) == CONTINUE
    assert evaluate(budget, 120_000) == warn(H)


@pytest.mark.parametrize(
    ("limit", "reserve", "threshold", "advisory"),
    [
        (1_000, 500, 60, 100),  # target 600 is past the usable 500; the warning has no room
        (10, 0, 10, 20),  # an advisory longer than the whole window
        (300, 100, 50, 90),  # warning at 120, but 120 + 90 is past the usable 200
    ],
)
def test_tiny_windows_get_no_advisories(
    limit: int, reserve: int, threshold: float, advisory: int
) -> None:
    budget = Budget(limit=limit, output_reserve=reserve, threshold=threshold)
    for tokens in range(limit + 2):
        decision = evaluate(budget, tokens, advisory_tokens=advisory)
        assert decision.action is not Action.WARN
        assert decision.action is (Action.ROLLOVER if tokens > limit - reserve else Action.CONTINUE)


# -- capabilities and the new_context offer ------------------------------------------------


@pytest.mark.parametrize(
    ("capability", "offered"),
    [(Capability.FULL, True), (Capability.CONDITIONAL, True), (Capability.DEGRADED, False)],
)
def test_capability_changes_only_the_offer(capability: Capability, offered: bool) -> None:
    for tokens in (50_000, 100_000, 120_000, 170_000):
        decision = evaluate(B, tokens, capability=capability)
        plain = evaluate(B, tokens)
        assert (decision.action, decision.stage, decision.skipped) == (
            plain.action,
            plain.stage,
            plain.skipped,
        )
        assert decision.offer_new_context is offered
    for tokens in (50_000, 170_000):
        assert not evaluate(OFF, tokens, capability=capability).offer_new_context


# -- inputs ------------------------------------------------------------------------------


@pytest.mark.parametrize("tokens", [-1, 1.5, True, "5", None])
def test_evaluate_rejects_bad_tokens(tokens: object) -> None:
    with pytest.raises(BudgetValueError) as info:
        evaluate(B, tokens)  # type: ignore[arg-type]
    assert info.value.field == "tokens"


@pytest.mark.parametrize("advisory", [-1, 2.0, False])
def test_evaluate_rejects_bad_advisory_tokens(advisory: object) -> None:
    with pytest.raises(BudgetValueError) as info:
        evaluate(B, 1, advisory_tokens=advisory)  # type: ignore[arg-type]
    assert info.value.field == "advisory_tokens"


def test_claims_may_be_any_iterable() -> None:
    assert evaluate(B, 105_000, claimed=[W]) == CONTINUE
    assert evaluate(B, 105_000, claimed=iter([H])) == CONTINUE
    assert evaluate(B, 125_000, claimed=(W,)) == warn(H)
    # Stage values read back from stored rows are plain strings; they match too.
    assert evaluate(B, 125_000, claimed={"handoff"}) == CONTINUE  # type: ignore[arg-type]


def test_decision_claims_only_with_warn() -> None:
    assert Decision(Action.WARN, H).claims is H
    assert Decision(Action.CONTINUE, skipped=H).claims is None
    assert Decision(Action.ROLLOVER).claims is None

"""Properties of the policy over random budgets and token sequences (hypothesis).

``evaluate`` is checked against a second, literal transcription of ``docs/policy.md`` written
for this test with exact fractions and no shortcuts, and ``simulate`` (a host that
publishes every advisory) against the consequences the issue lists.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxrelay.budget import (
    Action,
    Budget,
    BudgetValueError,
    Capability,
    Stage,
    Step,
    evaluate,
    simulate,
)

# The shared machine is loaded; a slow example is not a failure.
PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

W, H = Stage.WARNING, Stage.HANDOFF


# -- strategies ------------------------------------------------------------------------------


def percents(top: int) -> st.SearchStrategy[float]:
    """Whole and decimal percentages from 0 to ``top`` (as a user would type them)."""
    return st.one_of(
        st.integers(0, top).map(float),
        st.integers(0, top * 1000).map(lambda k: k / 1000),
        st.integers(0, top * 100).map(lambda k: k / 100),
    )


@st.composite
def budgets(draw: st.DrawFn) -> Budget:
    """Budgets of every size, mostly active, with the warning stage usually present."""
    limit = draw(st.one_of(st.integers(1, 400), st.integers(1_000, 2_000_000)))
    reserve = draw(
        st.one_of(st.just(0), st.integers(0, (limit - 1) // 4), st.integers(0, limit - 1))
    )
    off = draw(st.integers(0, 7)) == 0
    threshold = 100.0 if off else draw(percents(99))
    lead = draw(st.one_of(st.just(10.0), st.integers(0, 30).map(float), percents(100)))
    return Budget(limit=limit, output_reserve=reserve, threshold=threshold, warning_lead=lead)


def _interesting(budget: Budget) -> list[int]:
    points = [0, budget.usable_limit, budget.limit]
    for p in (budget.handoff_target, budget.warning_at):
        if p is not None:
            points.append(p)
    return points


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[Budget, list[int], int]:
    """A budget, request sizes that mostly land near its points, an advisory size."""
    budget = draw(budgets())
    near = st.builds(
        lambda p, d: max(0, p + d),
        st.sampled_from(_interesting(budget)),
        st.one_of(st.integers(-2, 2), st.integers(-budget.limit // 20 - 1, budget.limit // 20)),
    )
    anywhere = st.integers(0, budget.limit + budget.limit // 5 + 2)
    tokens = draw(st.lists(st.one_of(near, near, anywhere), min_size=1, max_size=40))
    advisory = draw(
        st.one_of(st.just(0), st.integers(0, 50), st.integers(0, max(1, budget.limit // 3)))
    )
    return budget, tokens, advisory


# -- docs/policy.md, transcribed literally -----------------------------------------------


@dataclass(frozen=True)
class Points:
    off: bool
    usable: int
    target: int | None
    warning_at: int | None


def points(budget: Budget) -> Points:
    threshold = Fraction(str(budget.threshold))
    lead = Fraction(str(budget.warning_lead))
    usable = budget.limit - budget.output_reserve
    if threshold >= 100:
        return Points(True, usable, None, None)
    effective = max(threshold, Fraction(10))
    target = math.floor(budget.limit * effective / 100)
    warning_at = target - math.floor(budget.limit * lead / 100)
    return Points(False, usable, target, warning_at if warning_at > 0 else None)


def reference(
    budget: Budget, tokens: int, advisory: int, claimed: frozenset[Stage], active: bool
) -> tuple[Action, Stage | None, Stage | None]:
    """(action, stage, skipped) exactly as §3's numbered rules read."""
    p = points(budget)
    if tokens > p.usable:
        return (Action.BLOCK if p.off else Action.ROLLOVER, None, None)
    if p.off or not active:
        return (Action.CONTINUE, None, None)
    assert p.target is not None
    room = tokens + advisory <= p.usable
    if tokens >= p.target and H not in claimed:
        return (Action.WARN, H, None) if room else (Action.CONTINUE, None, H)
    if (
        p.warning_at is not None
        and p.warning_at <= tokens < p.target
        and W not in claimed
        and H not in claimed
    ):
        return (Action.WARN, W, None) if room else (Action.CONTINUE, None, W)
    return (Action.CONTINUE, None, None)


CLAIM_SETS = [frozenset(), frozenset({W}), frozenset({H}), frozenset({W, H})]


@PROPERTY
@given(scenario=scenarios(), capability=st.sampled_from(list(Capability)))
def test_evaluate_is_section_3(
    scenario: tuple[Budget, list[int], int], capability: Capability
) -> None:
    budget, tokens, advisory = scenario
    p = points(budget)
    assert (budget.off, budget.usable_limit, budget.handoff_target, budget.warning_at) == (
        p.off,
        p.usable,
        p.target,
        p.warning_at,
    )
    offer = not p.off and capability is not Capability.DEGRADED
    for n in tokens:
        for claimed in CLAIM_SETS:  # every claim state a window can be in
            for active in (True, False):
                d = evaluate(
                    budget,
                    n,
                    advisory_tokens=advisory,
                    claimed=claimed,
                    active=active,
                    capability=capability,
                )
                expected = reference(budget, n, advisory, claimed, active)
                assert (d.action, d.stage, d.skipped) == expected
                assert d.offer_new_context is offer


# -- consequences over whole sequences -------------------------------------------------------


def windows(steps: list[Step]) -> dict[int, list[Step]]:
    out: dict[int, list[Step]] = {}
    for step in steps:
        out.setdefault(step.window, []).append(step)
    return out


@PROPERTY
@given(scenario=scenarios(), active=st.booleans())
def test_at_most_one_of_each_stage_per_window(
    scenario: tuple[Budget, list[int], int], active: bool
) -> None:
    budget, tokens, advisory = scenario
    for in_window in windows(
        simulate(budget, tokens, advisory_tokens=advisory, active=active)
    ).values():
        stages = [s.decision.stage for s in in_window if s.decision.action is Action.WARN]
        assert stages.count(W) <= 1
        assert stages.count(H) <= 1
        if H in stages:  # a handoff request suppresses later warnings
            assert W not in stages[stages.index(H) :]


@PROPERTY
@given(scenario=scenarios(), capability=st.sampled_from(list(Capability)))
def test_never_warn_when_off_or_inactive(
    scenario: tuple[Budget, list[int], int], capability: Capability
) -> None:
    budget, tokens, advisory = scenario
    inactive = simulate(
        budget, tokens, advisory_tokens=advisory, active=False, capability=capability
    )
    assert all(s.decision.action is not Action.WARN for s in inactive)
    off = Budget(
        budget.limit, budget.output_reserve, threshold=100, warning_lead=budget.warning_lead
    )
    for step in simulate(off, tokens, advisory_tokens=advisory, capability=capability):
        assert step.decision.action in (Action.CONTINUE, Action.BLOCK)
        assert not step.decision.offer_new_context
        assert step.window == 1


@PROPERTY
@given(scenario=scenarios(), active=st.booleans())
def test_every_request_over_the_usable_limit_rolls_over_or_blocks(
    scenario: tuple[Budget, list[int], int], active: bool
) -> None:
    budget, tokens, advisory = scenario
    steps = simulate(budget, tokens, advisory_tokens=advisory, active=active)
    for step in steps:
        over = step.tokens > budget.usable_limit
        forced = step.decision.action in (Action.ROLLOVER, Action.BLOCK)
        assert over == forced
        if forced:
            assert step.decision.action is (Action.BLOCK if budget.off else Action.ROLLOVER)
    # Windows advance by one exactly after each rollover.
    window = 1
    for step in steps:
        assert step.window == window
        if step.decision.action is Action.ROLLOVER:
            window += 1


@PROPERTY
@given(scenario=scenarios())
def test_handoff_at_the_first_dispatch_past_the_target_with_headroom(
    scenario: tuple[Budget, list[int], int],
) -> None:
    budget, tokens, advisory = scenario
    target = budget.handoff_target
    for in_window in windows(simulate(budget, tokens, advisory_tokens=advisory)).values():
        handoffs = [i for i, s in enumerate(in_window) if s.decision.stage is H]
        due = [
            i
            for i, s in enumerate(in_window)
            if target is not None
            and s.tokens >= target
            and s.tokens + advisory <= budget.usable_limit
        ]
        assert handoffs == due[:1]


@PROPERTY
@given(scenario=scenarios())
def test_advisories_only_in_their_range_and_skips_only_without_headroom(
    scenario: tuple[Budget, list[int], int],
) -> None:
    budget, tokens, advisory = scenario
    for step in simulate(budget, tokens, advisory_tokens=advisory):
        d = step.decision
        fits = step.tokens + advisory <= budget.usable_limit
        if d.action is Action.WARN:
            assert fits
            assert budget.handoff_target is not None
            if d.stage is H:
                assert step.tokens >= budget.handoff_target  # never pulled earlier
            else:
                assert budget.warning_at is not None
                assert budget.warning_at <= step.tokens < budget.handoff_target
        if d.skipped is not None:
            assert not fits
            assert d.action is Action.CONTINUE


@settings(max_examples=400, deadline=None)
@given(
    limit=st.integers(1, 10**9), text=st.from_regex(r"[0-9]{1,2}\.[0-9]{1,6}|100", fullmatch=True)
)
def test_decimal_thresholds_floor_exactly(limit: int, text: str) -> None:
    budget = Budget(limit, 0, threshold=float(text))
    exact = Fraction(text)
    if exact >= 100:
        assert budget.off
        return
    assert budget.handoff_target == math.floor(limit * max(exact, Fraction(10)) / 100)


# -- the budget's exact arithmetic -------------------------------------------------------


def sliders() -> st.SearchStrategy[object]:
    """Slider and lead values of every kind a caller may pass, in range and out of it."""
    return st.one_of(
        st.integers(-5, 105),
        percents(100),
        st.floats(-5, 105),  # binary floats of 17 significant digits
        st.floats(allow_nan=True, allow_infinity=True),
        st.decimals(-5, 105, places=3),
        st.decimals(allow_nan=True, allow_infinity=True),
        # Exponents on both sides of the "ordinary size" bound.
        st.builds(lambda n, e: Decimal(f"{n}E{e}"), st.integers(0, 10**6), st.integers(-50, 3)),
        st.fractions(-5, 105),
        st.fractions(-5, 105, max_denominator=1000),
        st.booleans(),
    )


def exactly(value: object) -> Fraction | str:
    """The exact value ``docs/policy.md`` gives a slider (a float is the decimal it prints
    as), or why it is refused as a number."""
    if isinstance(value, bool):
        return "a number"
    if isinstance(value, Decimal):
        if not value.is_finite() or (value != 0 and abs(value.adjusted()) > 40):
            return "a finite number of ordinary size"
        return Fraction(value)
    if isinstance(value, (int, Fraction)):
        return Fraction(value)
    assert isinstance(value, float)
    return Fraction(repr(value)) if math.isfinite(value) else "a number"


@PROPERTY
@given(
    limit=st.one_of(st.integers(1, 400), st.integers(1, 10**12)),
    threshold=sliders(),
    lead=sliders(),
)
def test_the_points_are_floored_from_the_exact_values(
    limit: int, threshold: object, lead: object
) -> None:
    t, ld = exactly(threshold), exactly(lead)
    if isinstance(t, str) or not 0 <= t <= 100:
        refused = (
            "threshold",
            threshold,
            t if isinstance(t, str) else "a percentage from 0 to 100",
        )
    elif isinstance(ld, str) or not 0 <= ld <= 100:
        refused = ("warning_lead", lead, ld if isinstance(ld, str) else "from 0 to 100 points")
    else:
        refused = None
    if refused is not None:
        with pytest.raises(BudgetValueError) as info:
            Budget(limit, 0, threshold, lead)  # type: ignore[arg-type]
        assert (info.value.field, info.value.value, info.value.requirement) == refused
        return
    assert isinstance(t, Fraction)
    assert isinstance(ld, Fraction)
    budget = Budget(limit, 0, threshold, lead)  # type: ignore[arg-type]
    effective = max(t, Fraction(10))
    assert budget.effective_threshold == float(effective)
    assert budget.off is (t >= 100)
    if budget.off:
        assert (budget.handoff_target, budget.warning_at) == (None, None)
        return
    target = math.floor(limit * effective / 100)
    warning_at = target - math.floor(limit * ld / 100)
    assert budget.handoff_target == target
    assert budget.warning_at == (warning_at if warning_at > 0 else None)

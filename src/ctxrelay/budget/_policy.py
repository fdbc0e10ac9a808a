"""The context policy: numbers in, decisions out (DESIGN §3).

This module owns every rule that decides whether a dispatch continues, carries an
advisory, forces a rollover or blocks. It performs no I/O and imports nothing else
of ctxrelay, so both hosts (the runtime and the Claude Code plugin) and the analyzer
can call it and agree to the token.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from fractions import Fraction

__all__ = [
    "DEFAULT_WARNING_LEAD",
    "MIN_EFFECTIVE_THRESHOLD",
    "OFF_THRESHOLD",
    "Action",
    "Budget",
    "BudgetValueError",
    "Capability",
    "Decision",
    "Stage",
    "evaluate",
]

OFF_THRESHOLD = 100
"""A slider at or above this value turns the advisories off (block at the limit)."""

MIN_EFFECTIVE_THRESHOLD = 10
"""The slider is never honoured below this share: a lower target would hand off
before a window has done any useful work."""

DEFAULT_WARNING_LEAD = 10
"""Percentage points between the advance warning and the handoff target."""


class BudgetValueError(ValueError):
    """A budget parameter is out of range; ``field`` names it, ``value`` is what was given."""

    def __init__(self, field: str, value: object, requirement: str) -> None:
        self.field = field
        self.value = value
        self.requirement = requirement
        super().__init__(f"{field} must be {requirement}, got {value!r}")


class Stage(enum.StrEnum):
    """An advisory stage; each is claimed at most once per window."""

    WARNING = "warning"
    HANDOFF = "handoff"


class Action(enum.StrEnum):
    """What the host does with a dispatch."""

    CONTINUE = "continue"
    WARN = "warn"
    ROLLOVER = "rollover"
    BLOCK = "block"


class Capability(enum.StrEnum):
    """How far the agent can act on a handoff request; it only changes the wording.

    ``FULL``: ``new_context`` is offered. ``CONDITIONAL``: it may be hidden by deferred
    tools or middleware. ``DEGRADED``: tool policy forbids it, or the old transcript
    could not be recovered afterwards, so the agent only checkpoints.
    """

    FULL = "full"
    CONDITIONAL = "conditional"
    DEGRADED = "degraded"


def _exact(value: float | int | str | Fraction, name: str) -> Fraction:
    """Turn a user's decimal into an exact fraction so floor() never lands one token low."""
    if isinstance(value, bool):
        raise BudgetValueError(name, value, "a number")
    try:
        exact = Fraction(value) if isinstance(value, Fraction) else Fraction(str(value))
    except (ValueError, ZeroDivisionError):
        raise BudgetValueError(name, value, "a number") from None
    return exact


@dataclass(frozen=True, slots=True)
class Budget:
    """A window's budget and the points derived from it.

    ``threshold`` and ``warning_lead`` are percentages of ``limit`` and may be decimals.
    """

    limit: int
    output_reserve: int
    threshold: float = 60
    warning_lead: float = DEFAULT_WARNING_LEAD
    _threshold: Fraction = field(init=False, repr=False, compare=False)
    _lead: Fraction = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.limit, bool) or not isinstance(self.limit, int) or self.limit <= 0:
            raise BudgetValueError("limit", self.limit, "a positive whole number of tokens")
        reserve = self.output_reserve
        if isinstance(reserve, bool) or not isinstance(reserve, int) or reserve < 0:
            raise BudgetValueError(
                "output_reserve", reserve, "a whole number of tokens, zero or more"
            )
        if reserve >= self.limit:
            raise BudgetValueError(
                "output_reserve", reserve, f"smaller than the limit ({self.limit})"
            )
        threshold = _exact(self.threshold, "threshold")
        if not 0 <= threshold <= OFF_THRESHOLD:
            raise BudgetValueError("threshold", self.threshold, "a percentage from 0 to 100")
        lead = _exact(self.warning_lead, "warning_lead")
        if not 0 <= lead <= 100:
            raise BudgetValueError("warning_lead", self.warning_lead, "from 0 to 100 points")
        object.__setattr__(self, "_threshold", threshold)
        object.__setattr__(self, "_lead", lead)

    @property
    def usable_limit(self) -> int:
        """The forced point: no request above it is ever sent (``budgetTokens`` in rows)."""
        return self.limit - self.output_reserve

    @property
    def off(self) -> bool:
        """Off blocks at the usable limit and never advises or offers ``new_context``."""
        return self._threshold >= OFF_THRESHOLD

    @property
    def effective_threshold(self) -> float:
        """The slider as applied: never below the 10% floor."""
        return float(max(self._threshold, Fraction(MIN_EFFECTIVE_THRESHOLD)))

    @property
    def handoff_target(self) -> int | None:
        """Where the handoff request is due; ``None`` when Off."""
        if self.off:
            return None
        share = max(self._threshold, Fraction(MIN_EFFECTIVE_THRESHOLD))
        return math.floor(self.limit * share / 100)

    @property
    def warning_at(self) -> int | None:
        """Where the advance warning is due; ``None`` when Off or when it would be <= 0."""
        target = self.handoff_target
        if target is None:
            return None
        at = target - math.floor(self.limit * self._lead / 100)
        return at if at > 0 else None


@dataclass(frozen=True, slots=True)
class Decision:
    """The outcome of one dispatch-time evaluation.

    ``stage`` is set only with ``WARN``; ``skipped`` names a stage that was due but had
    no headroom under the usable limit (it is not pulled earlier, only skipped).
    ``offer_new_context`` says whether the host should expose the ``new_context`` tool.
    """

    action: Action
    stage: Stage | None = None
    skipped: Stage | None = None
    offer_new_context: bool = True

    @property
    def claims(self) -> Stage | None:
        """The stage this decision claims, once its advisory row is durably published."""
        return self.stage if self.action is Action.WARN else None


def evaluate(
    budget: Budget,
    tokens: int,
    *,
    advisory_tokens: int = 0,
    claimed: Iterable[Stage] = (),
    active: bool = True,
    capability: Capability = Capability.FULL,
) -> Decision:
    """Decide one dispatch of ``tokens`` (the counting estimate of the assembled request).

    ``advisory_tokens`` estimates the advisory text that a ``WARN`` would append;
    ``claimed`` are the stages already published in this window; ``active`` is False
    when the mode is paused or not engaged for this session.
    """
    if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
        raise BudgetValueError("tokens", tokens, "a whole number of tokens, zero or more")
    if isinstance(advisory_tokens, bool) or not isinstance(advisory_tokens, int):
        raise BudgetValueError("advisory_tokens", advisory_tokens, "a whole number of tokens")
    if advisory_tokens < 0:
        raise BudgetValueError("advisory_tokens", advisory_tokens, "zero or more")

    offer = not budget.off and capability is not Capability.DEGRADED
    usable = budget.usable_limit
    # Rule 1: never an oversized dispatch.
    if tokens > usable:
        action = Action.BLOCK if budget.off else Action.ROLLOVER
        return Decision(action, offer_new_context=offer)
    # Rule 2: Off or inactive sessions get no advisories.
    if budget.off or not active:
        return Decision(Action.CONTINUE, offer_new_context=offer)

    target = budget.handoff_target
    assert target is not None  # not Off
    stages = frozenset(claimed)
    headroom = tokens + advisory_tokens <= usable
    # Rule 3: the handoff request, once per window; never pulled earlier when skipped.
    if tokens >= target:
        if Stage.HANDOFF in stages:
            return Decision(Action.CONTINUE, offer_new_context=offer)
        if headroom:
            return Decision(Action.WARN, Stage.HANDOFF, offer_new_context=offer)
        return Decision(Action.CONTINUE, skipped=Stage.HANDOFF, offer_new_context=offer)
    # Rule 4: the advance warning; a claimed handoff suppresses it.
    warning_at = budget.warning_at
    if warning_at is not None and tokens >= warning_at and not stages & set(Stage):
        if headroom:
            return Decision(Action.WARN, Stage.WARNING, offer_new_context=offer)
        return Decision(Action.CONTINUE, skipped=Stage.WARNING, offer_new_context=offer)
    # Rule 5.
    return Decision(Action.CONTINUE, offer_new_context=offer)

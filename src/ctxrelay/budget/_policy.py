"""The context policy: numbers in, decisions out (``docs/policy.md``).

This module owns every rule that decides whether a dispatch continues, carries an
advisory, forces a rollover or blocks. It performs no I/O and imports nothing else
of ctxrelay, so both hosts (the runtime and the Claude Code plugin) and the analyzer
can call it and agree to the token.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from fractions import Fraction

from ctxrelay.budget.bounds import DEFAULT_THRESHOLD

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


class Stage(StrEnum):
    """An advisory stage; each is claimed at most once per window."""

    WARNING = "warning"
    HANDOFF = "handoff"


class Action(StrEnum):
    """What the host does with a dispatch."""

    CONTINUE = "continue"
    WARN = "warn"
    ROLLOVER = "rollover"
    BLOCK = "block"


class Capability(StrEnum):
    """How far the agent can act on a handoff request; it only changes the wording.

    ``FULL``: ``new_context`` is offered. ``CONDITIONAL``: it may be hidden by deferred
    tools or middleware. ``DEGRADED``: tool policy forbids it, or the old transcript
    could not be recovered afterwards, so the agent only checkpoints.
    """

    FULL = "full"
    CONDITIONAL = "conditional"
    DEGRADED = "degraded"


def _ratio(value: object, name: str) -> tuple[int, int]:
    """A user's decimal as an exact ratio (numerator, positive denominator), so floor()
    never lands one token low.

    A float goes through its shortest repr (``60.1`` -> ``601/10``), which is the decimal
    the user wrote whenever it has at most 15 significant digits.
    """
    if type(value) is int:
        return value, 1
    if type(value) is float:
        text = repr(value)
        if not text[-1].isdigit():  # inf, -inf, nan
            raise BudgetValueError(name, value, "a number")
        mantissa, _, exponent = text.partition("e")
        whole, _, decimals = mantissa.partition(".")
        digits = int(whole + decimals)
        power = (int(exponent) if exponent else 0) - len(decimals)
        return (digits * 10**power, 1) if power >= 0 else (digits, 10**-power)
    return _other_ratio(value, name)


def _other_ratio(value: object, name: str) -> tuple[int, int]:
    """The ratio of anything but an int or a float: a ``Decimal``, a ``Fraction``, or a
    value whose ``str()`` is a number."""
    if isinstance(value, bool):
        raise BudgetValueError(name, value, "a number")
    if isinstance(value, Decimal) and (
        not value.is_finite() or (value != 0 and abs(value.adjusted()) > 40)
    ):
        # Exponents this large would make the exact ratio a huge integer.
        raise BudgetValueError(name, value, "a finite number of ordinary size")
    try:
        exact = Fraction(value) if isinstance(value, Fraction) else Fraction(str(value))
    except (ValueError, ZeroDivisionError):
        raise BudgetValueError(name, value, "a number") from None
    return exact.numerator, exact.denominator


@dataclass(frozen=True, slots=True)
class Budget:
    """A window's budget and the points derived from it.

    ``threshold`` and ``warning_lead`` are percentages of ``limit`` and may be decimals.
    The points are floored from the decimal a float prints as (``60.1`` is 601/10, not
    the binary value just below it), so a typed decimal of up to 15 significant digits
    is honoured exactly. Equal and hashed by the four values it was built from.
    """

    limit: int
    output_reserve: int
    threshold: float = DEFAULT_THRESHOLD
    warning_lead: float = DEFAULT_WARNING_LEAD
    # Derived once, in __post_init__: evaluate() runs at every dispatch and must not redo
    # exact arithmetic each time.
    _off: bool = field(init=False, repr=False, compare=False)
    _effective: float = field(init=False, repr=False, compare=False)
    _usable: int = field(init=False, repr=False, compare=False)
    _target: int | None = field(init=False, repr=False, compare=False)
    _warning_at: int | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        limit, threshold, warning_lead = self.limit, self.threshold, self.warning_lead
        if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
            raise BudgetValueError("limit", limit, "a positive whole number of tokens")
        reserve = self.output_reserve
        if isinstance(reserve, bool) or not isinstance(reserve, int) or reserve < 0:
            raise BudgetValueError(
                "output_reserve", reserve, "a whole number of tokens, zero or more"
            )
        if reserve >= limit:
            raise BudgetValueError("output_reserve", reserve, f"smaller than the limit ({limit})")
        # Exact ratios n/d (d > 0): every comparison and floor below is integer arithmetic.
        tn, td = _ratio(threshold, "threshold")
        if not 0 <= tn <= OFF_THRESHOLD * td:
            raise BudgetValueError("threshold", threshold, "a percentage from 0 to 100")
        ln, ld = _ratio(warning_lead, "warning_lead")
        if not 0 <= ln <= 100 * ld:
            raise BudgetValueError("warning_lead", warning_lead, "from 0 to 100 points")
        off = tn >= OFF_THRESHOLD * td
        if tn < MIN_EFFECTIVE_THRESHOLD * td:
            tn, td = MIN_EFFECTIVE_THRESHOLD, 1
        target: int | None = None
        warning_at: int | None = None
        if not off:
            target = limit * tn // (100 * td)
            at = target - limit * ln // (100 * ld)
            warning_at = at if at > 0 else None
        init = object.__setattr__  # the fields are frozen once built
        init(self, "_off", off)
        init(self, "_effective", tn / td)  # int / int is correctly rounded, as float(Fraction)
        init(self, "_usable", limit - reserve)
        init(self, "_target", target)
        init(self, "_warning_at", warning_at)

    @property
    def usable_limit(self) -> int:
        """The forced point: no request above it is ever sent (``budgetTokens`` in rows)."""
        return self._usable

    @property
    def off(self) -> bool:
        """Off blocks at the usable limit and never advises or offers ``new_context``."""
        return self._off

    @property
    def effective_threshold(self) -> float:
        """The slider as applied: never below the 10% floor."""
        return self._effective

    @property
    def handoff_target(self) -> int | None:
        """Where the handoff request is due; ``None`` when Off."""
        return self._target

    @property
    def warning_at(self) -> int | None:
        """Where the advance warning is due; ``None`` when Off or when it would be <= 0."""
        return self._warning_at


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
        return self.stage if self.action is _WARN else None


def _pair(
    action: Action, stage: Stage | None = None, skipped: Stage | None = None
) -> tuple[Decision, Decision]:
    """The decision without and with ``offer_new_context``, indexed by that bool."""
    return (Decision(action, stage, skipped, False), Decision(action, stage, skipped, True))


# Decisions are immutable and few, so evaluate() hands out shared instances instead of
# building one at every dispatch; the members evaluate() reads are bound to module
# names, a global read being cheaper than a class attribute's.
_WARN = Action.WARN
_WARNING = Stage.WARNING
_HANDOFF = Stage.HANDOFF
_DEGRADED = Capability.DEGRADED
_CONTINUE = _pair(Action.CONTINUE)
_BLOCK = _pair(Action.BLOCK)
_ROLLOVER = _pair(Action.ROLLOVER)
_WARN_HANDOFF = _pair(Action.WARN, Stage.HANDOFF)
_WARN_WARNING = _pair(Action.WARN, Stage.WARNING)
_SKIP_HANDOFF = _pair(Action.CONTINUE, skipped=Stage.HANDOFF)
_SKIP_WARNING = _pair(Action.CONTINUE, skipped=Stage.WARNING)


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
    ``claimed`` are the stages already published in this window (derive them from the
    durable advisory rows, never from memory); ``active`` is False when the mode is
    paused or not engaged for this session.
    """
    # ``type(...) is int`` first: the common case skips the slower checks.
    if type(tokens) is not int and (isinstance(tokens, bool) or not isinstance(tokens, int)):
        raise BudgetValueError("tokens", tokens, "a whole number of tokens, zero or more")
    if tokens < 0:
        raise BudgetValueError("tokens", tokens, "a whole number of tokens, zero or more")
    if type(advisory_tokens) is not int and (
        isinstance(advisory_tokens, bool) or not isinstance(advisory_tokens, int)
    ):
        raise BudgetValueError("advisory_tokens", advisory_tokens, "a whole number of tokens")
    if advisory_tokens < 0:
        raise BudgetValueError("advisory_tokens", advisory_tokens, "zero or more")

    off = budget._off
    offer = not off and capability is not _DEGRADED
    usable = budget._usable
    # Rule 1: never an oversized dispatch.
    if tokens > usable:
        return (_BLOCK if off else _ROLLOVER)[offer]
    # Rule 2: Off (no target) or inactive sessions get no advisories.
    target = budget._target
    if target is None or not active:
        return _CONTINUE[offer]

    if not isinstance(claimed, (set, frozenset)):
        claimed = frozenset(claimed)
    headroom = tokens + advisory_tokens <= usable
    # Rule 3: the handoff request, once per window; never pulled earlier when skipped.
    if tokens >= target:
        if _HANDOFF in claimed:
            return _CONTINUE[offer]
        if headroom:
            return _WARN_HANDOFF[offer]
        return _SKIP_HANDOFF[offer]
    # Rule 4: the advance warning; a claimed handoff suppresses it, a claimed warning
    # never consumes the handoff (rule 3 does not look at it).
    warning_at = budget._warning_at
    if (
        warning_at is not None
        and tokens >= warning_at
        and _WARNING not in claimed
        and _HANDOFF not in claimed
    ):
        if headroom:
            return _WARN_WARNING[offer]
        return _SKIP_WARNING[offer]
    # Rule 5.
    return _CONTINUE[offer]

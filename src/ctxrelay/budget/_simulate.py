"""Replay a sequence of dispatches through the policy, carrying claims within a window.

Pure: the CLI's ``policy simulate``, the pre-runtime demo and the property tests use it
to see what a host following the policy would do, without a store.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ctxrelay.budget._policy import Action, Budget, Capability, Decision, Stage, evaluate

__all__ = ["Step", "simulate"]


@dataclass(frozen=True, slots=True)
class Step:
    """One simulated dispatch; ``window`` is 1-based (a rollover reports the window it seals)."""

    tokens: int
    decision: Decision
    window: int


def simulate(
    budget: Budget,
    tokens: Iterable[int],
    *,
    advisory_tokens: int = 0,
    active: bool = True,
    capability: Capability = Capability.FULL,
) -> list[Step]:
    """Evaluate each dispatch in order as a host that publishes every advisory would."""
    steps: list[Step] = []
    window = 1
    claimed: set[Stage] = set()
    rollover = Action.ROLLOVER  # bound once: a local read, not a class attribute's
    for n in tokens:
        decision = evaluate(
            budget,
            n,
            advisory_tokens=advisory_tokens,
            claimed=claimed,
            active=active,
            capability=capability,
        )
        steps.append(Step(n, decision, window))
        if decision.claims is not None:
            claimed.add(decision.claims)
        elif decision.action is rollover:
            window += 1
            claimed.clear()
    return steps

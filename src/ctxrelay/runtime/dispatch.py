"""The dispatch step every host runs before a model request, beside the pure
:func:`~ctxrelay.runtime.plan.plan_dispatch`: ask the policy, then act on its plan the
one way ctxrelay acts on it — publish the advisory with its claim (a durable ``warning``
row, committed before the request that carries it), or tell the host to roll the window
over or to block — emitting the dispatch's events as it goes.

The runtime's session and the framework integrations both call :func:`dispatch_step`;
each keeps only how its request is assembled, sent and re-measured, and what a rollover
or a block means in its loop (the runtime pauses, an integration raises).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from ctxrelay.budget import DEFAULT_NOTES_FILE, Action, Budget, Capability
from ctxrelay.runtime.events import AdvisoryEvent, DispatchEvent, Event
from ctxrelay.runtime.plan import DispatchPlan, WindowState, plan_dispatch
from ctxrelay.runtime.windows import publish_advisory
from ctxrelay.store import Row, SealReason, Store

__all__ = ["DispatchTarget", "Dispatched", "dispatch_step"]


@dataclass(frozen=True, slots=True)
class DispatchTarget:
    """Where a host's dispatch steps act, the same for each step of a session: the store
    and session an advisory is published to, the sink of the step's events, the notes
    file its advisories name and the host's text estimator (``None``: the policy's)."""

    store: Store
    session_id: str
    emit: Callable[[Event], None]
    notes_file: str = DEFAULT_NOTES_FILE
    estimate_text: Callable[[str], int] | None = None


@dataclass(frozen=True, slots=True)
class Dispatched:
    """What a dispatch step decided: ``send`` (after the advisory it published, if
    any), ``rollover`` (with ``reason``: the host seals and plans the fresh window's
    request, or blocks when even that would not fit) or ``block`` (nothing is sent;
    ``plan.message`` says why)."""

    action: Literal["send", "rollover", "block"]
    plan: DispatchPlan
    published: Row | None = None
    """The advisory row this step appended to the window (``None``: none)."""
    reason: SealReason | None = None


def dispatch_step(
    budget: Budget,
    tokens: int,
    target: DispatchTarget,
    window: WindowState,
    capability: Capability,
    *,
    history_available: bool = True,
    active: bool = True,
) -> Dispatched:
    """Plan the request of ``tokens`` in ``window`` and act on the plan (see the module
    docstring). A ``rollover`` emits nothing: the host emits the rollover (or, when
    not even a fresh window holds the request, the block) once it knows which."""
    plan = plan_dispatch(
        budget,
        tokens,
        window=window,
        capability=capability,
        history_available=history_available,
        notes_file=target.notes_file,
        active=active,
        **({} if target.estimate_text is None else {"estimate_text": target.estimate_text}),
    )
    index, emit = window.window_index, target.emit
    if plan.action is Action.ROLLOVER:
        return Dispatched("rollover", plan, reason=plan.seal_reason or "forced")
    if plan.action is Action.BLOCK:
        emit(DispatchEvent(index, tokens, "block", None))
        return Dispatched("block", plan)
    if plan.stage is not None and plan.advisory_text is not None:
        stage = plan.stage.value
        added = publish_advisory(target.store, target.session_id, window.window_id, plan)
        if added is None:  # claimed by an earlier attempt: the advisory exists once
            emit(DispatchEvent(index, tokens, "continue", None))
            return Dispatched("send", plan)
        emit(DispatchEvent(index, tokens, "warn", stage))
        emit(AdvisoryEvent(index, stage, tokens, plan.advisory_text))
        return Dispatched("send", plan, published=added)
    skipped = plan.skipped.value if plan.skipped else None
    emit(DispatchEvent(index, tokens, "continue", None, skipped))
    return Dispatched("send", plan)

"""Planning one dispatch: the pure step between an assembled request and sending it.

Every host that puts ctxrelay's policy in front of a model call does the same thing
before each request: estimate the request, ask the policy with the window's durable
claims and the capability at hand, and then either publish an advisory (a ``warning``
row and its claim, committed before the request), roll the window over, block, or just
send. :func:`plan_dispatch` is that decision with everything it needs to publish, and
nothing else: no provider, no store, no clock. The runtime's loop calls it at every
dispatch, and so do the framework integrations, so they word, claim and roll over
exactly as the runtime does.

    window, state = window_state(store, session_id)
    plan = plan_dispatch(
        budget,
        estimate_request(request_bytes, last, estimator.estimate_bytes),
        window=state,
        capability=capability_for("offered", new_context_tool=True, session_history=True),
        estimate_text=estimator.estimate,
    )
    if plan.action is Action.WARN:       # publish_advisory(store, ..., plan), then send
        ...

Two rules the host keeps, because they need the request itself:

- A retried dispatch (the process died after publishing this dispatch's advisory and
  before recording the answer) is planned on the request *without* the advisories
  published since the last response, so it decides exactly as the first attempt did.
- After appending the advisory, re-estimate and pass the final size to
  :func:`guard_request`: nothing is ever sent above the usable limit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ctxrelay.budget import (
    DEFAULT_NOTES_FILE,
    Action,
    AdvisoryMetadata,
    Budget,
    Capability,
    Decision,
    Stage,
    advisory_metadata,
    advisory_text,
    evaluate,
)
from ctxrelay.runtime._config import NewContextPolicy
from ctxrelay.runtime.estimate import BytesPerTokenEstimator
from ctxrelay.store import NewRow, SealReason

__all__ = [
    "ADVISORY_WRAP_TOKENS",
    "DispatchPlan",
    "GuardAction",
    "LastResponse",
    "WindowState",
    "capability_for",
    "estimate_request",
    "guard_request",
    "plan_dispatch",
]

ADVISORY_WRAP_TOKENS = 32
"""Tokens allowed for an advisory's wrapping in the request (a text block in a
message), on top of the estimate of its text."""

_STAGES = frozenset(s.value for s in Stage)

_UNCALIBRATED = BytesPerTokenEstimator()
"""The default text estimate: the conservative ratio used before any provider report
(never observed, so it never changes)."""


@dataclass(frozen=True, slots=True)
class WindowState:
    """What a dispatch needs to know of the open window, all derived from durable rows.

    ``claimed``: the advisory stages already published in this window (from its
    ``warning`` rows or ``Store.claims``, never from memory). ``max_context_tokens``: the
    largest request of this window the provider counted (input + cache writes + cache
    reads); above the usable limit it means the window overflowed after admission, so its
    rollover is an ``emergency`` rather than ``forced``."""

    window_id: str
    window_index: int
    claimed: frozenset[str] = frozenset()
    max_context_tokens: int = 0


@dataclass(frozen=True, slots=True)
class LastResponse:
    """The window's last model response, as the provider reported it.

    ``context_tokens``: what its request held by the provider's count; ``output_tokens``:
    what the reply added; ``request_bytes``: the size of that request in the host's own
    rendering; ``message_bytes``: the size of the reply message in the same rendering."""

    context_tokens: int
    output_tokens: int
    request_bytes: int
    message_bytes: int = 0

    @classmethod
    def from_metadata(cls, meta: Mapping[str, Any]) -> LastResponse | None:
        """Read an ``assistant`` row's metadata as the runtime writes it
        (``context_tokens``, ``output_tokens``, ``request_bytes``, ``message_bytes``);
        ``None`` for a row without them (an older history), so the whole request is
        estimated."""
        if "request_bytes" not in meta or "context_tokens" not in meta:
            return None
        return cls(
            int(meta["context_tokens"]),
            int(meta.get("output_tokens", 0)),
            int(meta["request_bytes"]),
            int(meta.get("message_bytes", 0)),
        )


@dataclass(frozen=True, slots=True)
class DispatchPlan:
    """What to do with one request, and what to publish for it.

    ``action`` is the policy's: ``continue`` (send), ``warn`` (publish ``advisory`` with
    its claim for ``stage``, inject its text, then send), ``rollover`` (seal the window
    with ``seal_reason`` and send the request in a fresh one) or ``block`` (send nothing;
    ``message`` says why in one sentence). ``tokens`` is the estimate the plan was made
    on; ``advisory_tokens`` what the policy allowed for an advisory's text.
    ``offer_new_context`` says whether the request should carry the ``new_context``
    tool; ``skipped`` names a stage that was due but had no headroom."""

    decision: Decision
    tokens: int
    advisory_tokens: int
    advisory_text: str | None = None
    """The advisory's text as the model is to read it (``warn`` only)."""
    advisory_metadata: AdvisoryMetadata | None = None
    """The advisory row's metadata (``warn`` only): kind ``warning``, the stage, the
    tokens and usable limit, and ``handoff``/``handoffTokens`` for a handoff request."""
    seal_reason: SealReason | None = None
    message: str | None = None

    @property
    def action(self) -> Action:
        return self.decision.action

    @property
    def stage(self) -> Stage | None:
        return self.decision.stage

    @property
    def skipped(self) -> Stage | None:
        return self.decision.skipped

    @property
    def offer_new_context(self) -> bool:
        return self.decision.offer_new_context

    @property
    def advisory(self) -> NewRow | None:
        """The ``warning`` row to publish with its claim (``Store.append_advisory``)."""
        if self.advisory_text is None or self.advisory_metadata is None:
            return None
        return NewRow("warning", self.advisory_text, self.advisory_metadata)


def capability_for(
    new_context: NewContextPolicy, *, new_context_tool: bool, session_history: bool
) -> Capability:
    """How far the agent can act on a handoff request.

    ``degraded`` when ``new_context`` is forbidden, or the host offers no ``new_context``
    tool, or no ``session_history`` to recover the old window with; ``conditional`` when
    the tool may be hidden (deferred tools, middleware); ``full`` otherwise."""
    if new_context == "forbidden" or not new_context_tool or not session_history:
        return Capability.DEGRADED
    if new_context == "conditional":
        return Capability.CONDITIONAL
    return Capability.FULL


def estimate_request(
    request_bytes: int,
    last: LastResponse | None,
    estimate_bytes: Callable[[int], int],
) -> int:
    """Tokens of a request of ``request_bytes``: the provider's count of the window's last
    request, plus that response's output, plus an estimate of what was appended since.

    Without a last response (a fresh window), the whole request is estimated. The reply
    is counted exactly (its output tokens) plus an estimate of the rest, or entirely by
    the estimate, whichever is larger: the estimate errs high, never low."""
    if last is None:
        return estimate_bytes(request_bytes)
    delta = max(0, request_bytes - last.request_bytes)
    exact = last.output_tokens + estimate_bytes(max(0, delta - last.message_bytes))
    return last.context_tokens + max(exact, estimate_bytes(delta))


def plan_dispatch(
    budget: Budget,
    tokens: int,
    *,
    window: WindowState,
    capability: Capability = Capability.FULL,
    history_available: bool = True,
    notes_file: str = DEFAULT_NOTES_FILE,
    active: bool = True,
    estimate_text: Callable[[str], int] = _UNCALIBRATED.estimate,
) -> DispatchPlan:
    """Plan the dispatch of a request estimated at ``tokens`` in ``window``.

    ``capability`` and ``history_available`` word the handoff request (see
    :func:`capability_for`); ``notes_file`` is the file the advisories name; ``active``
    is False when the policy is paused for this session (nothing is published; the
    limit still holds). ``estimate_text`` counts an advisory's text (the session's
    calibrated estimator, or the conservative default); it is called only when a stage
    can be due.
    """
    claimed = frozenset(Stage(s) for s in window.claimed if s in _STAGES)
    advisory_tokens = 0
    first_stage = budget.warning_at or budget.handoff_target
    if first_stage is not None and tokens >= first_stage:
        # Room for the longer of the two texts, so the policy never admits a request that
        # the advisory would then push over the limit.
        advisory_tokens = ADVISORY_WRAP_TOKENS + estimate_text(
            advisory_text(
                budget,
                Stage.HANDOFF,
                tokens,
                capability,
                notes_file=notes_file,
                history_available=history_available,
            )
        )
    decision = evaluate(
        budget,
        tokens,
        advisory_tokens=advisory_tokens,
        claimed=claimed,
        active=active,
        capability=capability,
    )
    action = decision.action
    if action is Action.WARN and decision.stage is not None:
        stage = decision.stage
        text = advisory_text(
            budget,
            stage,
            tokens,
            capability,
            notes_file=notes_file,
            history_available=history_available,
        )
        meta = advisory_metadata(budget, stage, tokens)
        return DispatchPlan(
            decision, tokens, advisory_tokens, advisory_text=text, advisory_metadata=meta
        )
    if action is Action.ROLLOVER:
        overflowed = window.max_context_tokens > budget.usable_limit
        reason: SealReason = "emergency" if overflowed else "forced"
        return DispatchPlan(decision, tokens, advisory_tokens, seal_reason=reason)
    if action is Action.BLOCK:
        message = (
            f"the request needs about {tokens:,} tokens, over the usable limit of "
            f"{budget.usable_limit:,}, and the policy is Off (it blocks instead of "
            "rolling over); nothing was sent"
        )
        return DispatchPlan(decision, tokens, advisory_tokens, message=message)
    return DispatchPlan(decision, tokens, advisory_tokens)


GuardAction = Literal["send", "rollover", "pause"]


def guard_request(budget: Budget, final_tokens: int, *, answered: bool) -> GuardAction:
    """The size guard on the request as finally assembled (after any advisory).

    ``send`` when it fits the usable limit. Otherwise never send it: ``rollover`` (an
    ``emergency`` seal) when the window has a model response (``answered``), ``pause``
    when it has none, since a fresh window would only open another one like it."""
    if final_tokens <= budget.usable_limit:
        return "send"
    return "rollover" if answered else "pause"

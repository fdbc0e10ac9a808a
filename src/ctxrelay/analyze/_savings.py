"""What a stored session's handoffs saved: its cost against the same work in one window.

Both sides are priced by the analyzer (:func:`~ctxrelay.analyze.replay` over the session
read from the store as a chain, every response priced as one model of
:mod:`ctxrelay.pricing`); ``ctxrelay demo`` prints the result:

* **with handoff** is the session as recorded (the ``none`` replay: its usage, to the
  token);
* **without handoff** is the same work in one window under the policy Off. Each request
  adds what it added in its own window (a window's first request adds nothing: without
  a handoff there is no restart), so the one window grows until it reaches the usable
  limit, where the requests that no longer fit are priced at the limit (a lower bound:
  in truth that work could not be sent at all). The analyzer's cache rules apply: a
  request reads its predecessor from the cache and writes what it added.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ctxrelay.analyze._policies import Policy
from ctxrelay.analyze._replay import Assumptions, replay
from ctxrelay.analyze._store import store_transcript
from ctxrelay.budget import OFF_THRESHOLD, Budget
from ctxrelay.pricing import DEFAULT_PRICES, PriceTable
from ctxrelay.transcripts import Response, Usage

__all__ = ["Savings", "handoff_savings"]


@dataclass(frozen=True, slots=True)
class Savings:
    """A session's cost with its handoffs against the same work without them."""

    cost_usd: float
    cost_without_handoff_usd: float
    peak_context_tokens: int
    peak_context_without_handoff_tokens: int
    needed_without_handoff_tokens: int
    """The context the one window would have needed for all of the work."""
    at_limit: int
    """Requests of the one window priced at the usable limit (their work did not fit)."""
    windows: int

    @property
    def saved_usd(self) -> float:
        return self.cost_without_handoff_usd - self.cost_usd

    def as_json(self) -> dict[str, Any]:
        return {
            "cost_usd": round(self.cost_usd, 6),
            "cost_without_handoff_usd": round(self.cost_without_handoff_usd, 6),
            "peak_context_tokens": self.peak_context_tokens,
            "peak_context_without_handoff_tokens": self.peak_context_without_handoff_tokens,
        }


def _one_window(responses: tuple[Response, ...], usable: int) -> tuple[list[Response], int, int]:
    """The chain as one window: each request at the context it would have had, capped
    at ``usable``; returns the chain, the context all of the work needed, and how many
    requests were capped."""
    out: list[Response] = []
    needed = 0
    capped = 0
    for i, r in enumerate(responses):
        same = i > 0 and r.segment == responses[i - 1].segment
        if i == 0:
            needed = r.context_tokens
        elif same:
            needed += r.context_tokens - responses[i - 1].context_tokens
        tokens = min(needed, usable)
        capped += needed > usable
        u = r.usage
        fresh = min(u.input_tokens, tokens)
        # A window's first request was sent to a cold cache only because of the restart.
        wrote = u.cache_creation_input_tokens if same or i == 0 else 0
        written = min(wrote, tokens - fresh)
        one_hour = min(u.cache_creation_1h_tokens, written)
        usage = Usage(fresh, written, tokens - fresh - written, u.output_tokens, one_hour)
        out.append(Response(r.message_id, r.model, usage, segment=0, timestamp=r.timestamp))
    return out, needed, capped


def handoff_savings(
    store: Any,
    session_id: str,
    budget: Budget,
    priced_as: str,
    prices: PriceTable = DEFAULT_PRICES,
) -> Savings:
    """What the handoffs of stored session ``session_id`` saved, every response priced as
    model ``priced_as`` of ``prices`` (the analyzer prices each response at its model's).

    ``store`` is a :class:`ctxrelay.store.Store`; ``budget`` the session's (its usable
    limit caps the one window). Raises what the store raises for an unknown session."""
    transcript, _ = store_transcript(store, session_id, "")
    responses = tuple(replace(r, model=priced_as) for r in transcript.responses)
    assumptions = Assumptions(
        limit=budget.limit,
        output_reserve=budget.output_reserve,
        base_tokens=responses[0].context_tokens if responses else 0,
    )
    recorded = replay(responses, assumptions, Policy("none"), prices)
    one, needed, capped = _one_window(responses, budget.usable_limit)
    alone = replay(one, assumptions, Policy("handoff", OFF_THRESHOLD), prices)
    return Savings(
        cost_usd=recorded.cost_usd or 0.0,
        cost_without_handoff_usd=alone.cost_usd or 0.0,
        peak_context_tokens=recorded.peak_context_tokens,
        peak_context_without_handoff_tokens=alone.peak_context_tokens,
        needed_without_handoff_tokens=needed,
        at_limit=capped,
        windows=len({r.segment for r in responses}),
    )

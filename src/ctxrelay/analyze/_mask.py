"""Observation masking in the replay: tool results older than the newest N requests
replaced by a one-line placeholder (``mask:N``, ``handoff:P+mask:N``).

A mask changes the context where the oldest result it replaces sits, so the cache holds
only what comes before it: everything after is written again. Masking at every request
rewrites the recent context each time. So results are masked **in batches**: at every
N-th request of a window, every result older than the newest N requests is replaced at
once (a result is masked when it is N to 2N requests old); between batches nothing
changes and the cache stays whole. N is the one knob: it is both how much recent work
stays whole and how often the recent context is written again (``docs/analyze.md``,
"Observation masking").

A result's size is measured from the recording: the growth of the request after a
response that called tools, less that response's output (the results and any words of
the user's in the same turn, which a host would keep; a known overstatement).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ctxrelay.transcripts import Touches

__all__ = ["MASK_PLACEHOLDER_TOKENS", "Masking", "result_tokens"]

MASK_PLACEHOLDER_TOKENS = 20
"""The one-line placeholder a masked result leaves (what it was, and how to get it
back)."""


def result_tokens(
    touches: Touches,
    message_ids: Sequence[str],
    context: Sequence[int],
    outputs: Sequence[int],
    segments: Sequence[int],
) -> tuple[int, ...]:
    """The tokens of tool results each recorded request brought (module docstring)."""
    out = [0]
    for i in range(1, len(message_ids)):
        if segments[i] != segments[i - 1] or not touches.called(message_ids[i - 1]):
            out.append(0)
        else:
            out.append(max(0, context[i] - context[i - 1] - outputs[i - 1]))
    return tuple(out[: len(message_ids)])


class _Held(NamedTuple):
    """A result in the context, not masked yet: the request that brought it, its
    tokens, the context before it when it came, and the window's savings then."""

    at: int
    tokens: int
    before: int
    saved_then: int


class Batch(NamedTuple):
    """One batch of masks: the tokens it took out, and the context before the oldest
    result it replaced (what the cache still holds)."""

    saved: int
    prefix: int


class Masking:
    """One replay's masks: fed each replayed request (:meth:`record`), asked at each
    request whether a batch falls there (:meth:`batch`), told of each restart."""

    __slots__ = ("count", "held", "keep", "results", "saved", "since", "tokens")

    def __init__(self, results: Sequence[int], keep: int) -> None:
        self.results = results
        self.keep = keep
        self.held: list[_Held] = []
        self.saved = 0  # taken out of this window so far
        self.since = 0  # requests of this window since its last batch
        self.count = 0  # batches in the whole replay
        self.tokens = 0  # taken out in the whole replay

    def restart(self) -> None:
        self.held.clear()
        self.saved = self.since = 0

    def batch(self, i: int) -> Batch | None:
        """Mask, before request ``i``, the results older than the newest ``keep``
        requests, if a batch falls here."""
        self.since += 1
        if self.since < self.keep:
            return None
        old = [h for h in self.held if h.at <= i - self.keep]
        if not old:
            return None
        self.since = 0
        first = old[0]
        prefix = first.before - (self.saved - first.saved_then)
        taken = sum(max(0, h.tokens - MASK_PLACEHOLDER_TOKENS) for h in old)
        self.held = self.held[len(old) :]
        self.saved += taken
        self.count += 1
        self.tokens += taken
        return Batch(taken, prefix)

    def record(self, i: int, tokens: int) -> None:
        """Request ``i`` was replayed at ``tokens``: its results are in the context."""
        brought = self.results[i] if i < len(self.results) else 0
        if brought > MASK_PLACEHOLDER_TOKENS:
            self.held.append(_Held(i, brought, tokens - brought, self.saved))

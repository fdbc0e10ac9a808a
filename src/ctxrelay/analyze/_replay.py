"""What-if replay: the requests a recorded session would have sent under another policy.

The model (every number is in :class:`Assumptions` and printed with the results):

* The work is fixed. Each recorded request adds ``growth`` tokens to the context (its
  context minus the previous request's); a policy only changes where the context
  restarts. The first request after a recorded compaction adds nothing of its own: its
  extra tokens are what the compaction reloaded (``reload_tokens``).
* ``none`` is the recording itself, including its compactions and the summarizer's
  requests: its usage is the recorded usage, to the token.
* ``compact``: Claude Code's auto-compaction. When the last request's context plus its
  output reaches ``compact_at`` (or the next request would not fit), one summary request
  reads the whole conversation and writes ``summary_tokens``; the chain restarts at
  ``base + summary + reload``.
* ``handoff:P``: ctxrelay's slider. Every request goes through the policy core
  (:func:`ctxrelay.budget.evaluate`) at dispatch; its advisories add ``advisory_tokens``.
  After the handoff request the agent works ``handoff_lag`` more requests, writes its
  notes (one request, ``notes_tokens`` of output), calls ``new_context`` (one request),
  and the next window starts at ``base + notes + reload``. A request over the usable
  limit is a forced rollover to the same start.
* Cache: a continuing request reads the previous request from the cache and writes what
  the recording wrote (capped by its size); the first request after a rollover or a
  compaction finds the cache cold and writes its whole input, unless ``warm_prefix_tokens``
  says the shared prefix (system prompt, tools) stays cached, as the recorded compactions
  show (``--warm-prefix``). Writes keep the recorded request's 5-minute/1-hour split.
* Output tokens are the recorded ones. Each replayed request is priced at the model that
  made it: a recorded request at its recorded model, a request the policy adds (a
  summary, the notes, the ``new_context`` call) at the model of the recorded request it
  follows, a recorded summary at the summarizer's model.
"""

from __future__ import annotations

from ctxrelay._frozen import field, frozen
from ctxrelay.analyze._bill import Pricer, total_usage
from ctxrelay.analyze._policies import Policy
from ctxrelay.budget import Action, Budget, Stage, evaluate
from ctxrelay.budget.bounds import (
    CLAUDE_CODE_COMPACT_BUFFER,
    CLAUDE_CODE_RESPONSE_RESERVE,
    LONG_CONTEXT_WINDOW,
    MAIN_OUTPUT_RESERVE,
    NOTES_MAX_BYTES,
)
from ctxrelay.budget.triggers import context_window_for
from ctxrelay.pricing import PriceTable
from ctxrelay.transcripts import Compaction, Response, Usage

TYPE_CHECKING = False  # annotations only; mypy reads any constant named TYPE_CHECKING as true
if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "CHARS_PER_TOKEN",
    "Assumptions",
    "ReplayResult",
    "SimRequest",
    "measure_assumptions",
    "replay",
]

CHARS_PER_TOKEN = 4
"""Characters per token when a size is known only as text (a compaction summary)."""

DEFAULT_SUMMARY_TOKENS = 3_500
"""A compaction summary when the session recorded none (the corpus's measure 3,000-3,900)."""

DEFAULT_RELOAD_TOKENS = 8_000
"""What a fresh chain reloads beyond its base and summary or notes (files re-read, task
lists) when the session recorded no compaction to measure it (the corpus's mean ~7,900)."""

NOTES_TOKENS = NOTES_MAX_BYTES // CHARS_PER_TOKEN
"""The notes checkpoint: the runtime's notes cap at ``CHARS_PER_TOKEN``, the figure the
summary a compaction writes is measured with, so the two policies' checkpoints weigh
alike. The cap counts bytes: notes are prose, a byte a character, and any other
character only shortens what the cap holds."""

ADVISORY_TOKENS = 200
"""An advisory (warning or handoff request) added to the context."""

COMPACT_PROMPT_TOKENS = 2_200
"""The compaction request's instructions over the conversation (the corpus's summarizer
requests were 2,154-3,263 tokens above their preTokens)."""

HANDOFF_LAG = 2
"""Recorded requests the agent spends finishing its unit of work after the handoff request."""

NEW_CONTEXT_TOKENS = 100
"""The write confirmation and the ``new_context`` call."""


@frozen
class Assumptions:
    """The numbers the replay rests on; ``measured`` names the ones taken from the session."""

    limit: int
    base_tokens: int
    summary_tokens: int = DEFAULT_SUMMARY_TOKENS
    reload_tokens: int = DEFAULT_RELOAD_TOKENS
    output_reserve: int = MAIN_OUTPUT_RESERVE
    """The handoff policy's reserve: the plugin's usable limit, as it ships."""
    compact_buffer: int = CLAUDE_CODE_COMPACT_BUFFER
    notes_tokens: int = NOTES_TOKENS
    advisory_tokens: int = ADVISORY_TOKENS
    compact_prompt_tokens: int = COMPACT_PROMPT_TOKENS
    handoff_lag: int = HANDOFF_LAG
    one_hour_writes: bool = False
    """Cache writes with no recorded split use the 1-hour time to live (the session's
    majority)."""
    warm_prefix_tokens: int = 0
    """Tokens the first request after a restart still reads from the cache (0: cold)."""
    prefix_measured: int = 0
    """The session's cached prefix: what its first request read from the cache (the
    system prompt and tools, cached by earlier sessions); what ``--warm-prefix`` uses."""
    measured: tuple[str, ...] = field(default=())

    @property
    def usable_limit(self) -> int:
        return self.limit - self.output_reserve

    @property
    def compact_at(self) -> int:
        """Claude Code's own auto-compaction point, whatever the handoff policy reserves."""
        return self.limit - CLAUDE_CODE_RESPONSE_RESERVE - self.compact_buffer

    def as_dict(self) -> dict[str, object]:
        return {
            "limit": self.limit,
            "usable_limit": self.usable_limit,
            "compact_at": self.compact_at,
            "base_tokens": self.base_tokens,
            "summary_tokens": self.summary_tokens,
            "reload_tokens": self.reload_tokens,
            "notes_tokens": self.notes_tokens,
            "advisory_tokens": self.advisory_tokens,
            "compact_prompt_tokens": self.compact_prompt_tokens,
            "handoff_lag_requests": self.handoff_lag,
            "cache_ttl_default": "1h" if self.one_hour_writes else "5m",
            "warm_prefix_tokens": self.warm_prefix_tokens,
            "measured": list(self.measured),
        }

    def sentences(self) -> list[str]:
        """The assumptions in words, printed next to the results."""
        m = set(self.measured)

        def src(name: str) -> str:
            return "measured in the session" if name in m else "default"

        return [
            f"Window {self.limit:,} tokens; usable {self.usable_limit:,} (a "
            f"{self.output_reserve:,}-token output reserve); no replayed request exceeds it.",
            "The work is fixed: each recorded request adds the tokens it added in the "
            "recording; a policy only changes where the context restarts.",
            f"A fresh chain starts at the session's first request ({self.base_tokens:,} "
            f"tokens) plus {self.reload_tokens:,} reloaded ({src('reload_tokens')}).",
            f"compact: at {self.compact_at:,} tokens one summary request reads the "
            f"conversation (+{self.compact_prompt_tokens:,} of instructions) and writes "
            f"{self.summary_tokens:,} tokens ({src('summary_tokens')}); the chain restarts "
            "at base + summary + reload.",
            f"handoff:P: the policy core decides each dispatch (advisories "
            f"{self.advisory_tokens} tokens); {self.handoff_lag} more requests finish the "
            f"unit, one writes {self.notes_tokens:,} tokens of notes, one calls "
            "new_context; the next window starts at base + notes + reload.",
            "Cache: a continuing request reads its predecessor from the cache; the first "
            "request after a rollover or compaction writes its whole input (cold cache)"
            + (
                f" except a {self.warm_prefix_tokens:,}-token prefix still cached."
                if self.warm_prefix_tokens
                else "."
            ),
            "Output tokens and prices are the recorded ones; the quality of the work and "
            "anything lost in a summary or a handoff are not priced.",
        ]


def measure_assumptions(
    responses: Sequence[Response],
    compactions: Sequence[Compaction],
    *,
    model: str | None,
    limit: int | None = None,
) -> Assumptions:
    """The session's assumptions: its window, its base, and what its own compactions
    measured (summary size, reload) where it has any."""
    window = context_window_for(model, limit)
    base = responses[0].context_tokens if responses else 0
    measured: list[str] = ["base_tokens"]
    peak = max((r.context_tokens for r in responses), default=0)
    if limit is None and peak > window:
        # Transcripts name the model, not the 1M-context beta: a recorded request above
        # the default window proves the session ran with the long one.
        window = LONG_CONTEXT_WINDOW
        measured.append("limit")
    summary = DEFAULT_SUMMARY_TOKENS
    chars = [c.summary_chars for c in compactions if c.summary_chars > 0]
    if chars:
        summary = round(sum(chars) / len(chars) / CHARS_PER_TOKEN)
        measured.append("summary_tokens")
    reload = DEFAULT_RELOAD_TOKENS
    reloads = [
        max(0, responses[c.after_requests].context_tokens - base - summary)
        for c in compactions
        if 0 < c.after_requests < len(responses)
    ]
    if reloads:
        reload = round(sum(reloads) / len(reloads))
        measured.append("reload_tokens")
    written = sum(r.usage.cache_creation_input_tokens for r in responses)
    one_hour = sum(r.usage.cache_creation_1h_tokens for r in responses)
    return Assumptions(
        limit=window,
        base_tokens=base,
        summary_tokens=summary,
        reload_tokens=reload,
        one_hour_writes=written > 0 and one_hour * 2 > written,
        prefix_measured=responses[0].usage.cache_read_input_tokens if responses else 0,
        measured=tuple(measured),
    )


if TYPE_CHECKING:
    from typing import Literal

    RequestKind = Literal["recorded", "summary", "notes", "new_context"]


_set = object.__setattr__


@frozen
class SimRequest:
    """One request of a replay; ``recorded`` is the index of the recorded request it
    stands for (``None`` for requests the policy added)."""

    tokens: int
    usage: Usage
    window: int
    kind: RequestKind = "recorded"
    recorded: int | None = None
    model: str | None = None
    """The model that makes the request (priced at its prices)."""
    timestamp: str | None = None
    """When the recorded request it stands for (or follows) was made."""

    def __init__(  # noqa: PLR0917 - written out: one per request (``ctxrelay._frozen``)
        self,
        tokens: int,
        usage: Usage,
        window: int,
        kind: RequestKind = "recorded",
        recorded: int | None = None,
        model: str | None = None,
        timestamp: str | None = None,
    ) -> None:
        _set(self, "tokens", tokens)
        _set(self, "usage", usage)
        _set(self, "window", window)
        _set(self, "kind", kind)
        _set(self, "recorded", recorded)
        _set(self, "model", model)
        _set(self, "timestamp", timestamp)


@frozen
class ReplayResult:
    """A policy's replay of one session."""

    policy: Policy
    requests: tuple[SimRequest, ...]
    rollovers: int = 0
    forced_rollovers: int = 0
    compactions: int = 0
    warnings: int = 0
    handoff_requests: int = 0
    clamped: int = 0
    """Requests that would not fit even in a fresh window (clamped to the usable limit)."""
    cost_usd: float | None = None

    @property
    def usage(self) -> Usage:
        return total_usage(request.usage for request in self.requests)

    @property
    def peak_context_tokens(self) -> int:
        return max((r.tokens for r in self.requests), default=0)

    @property
    def restarts(self) -> list[int]:
        """Positions (indexes into ``requests``) where a new window begins."""
        return [
            i
            for i in range(1, len(self.requests))
            if self.requests[i].window != self.requests[i - 1].window
        ]

    def as_dict(self) -> dict[str, object]:
        extra = sum(1 for r in self.requests if r.kind != "recorded")
        return {
            "policy": str(self.policy),
            "threshold": self.policy.threshold,
            "requests": len(self.requests),
            "added_requests": extra,
            "peak_context_tokens": self.peak_context_tokens,
            "rollovers": self.rollovers,
            "forced_rollovers": self.forced_rollovers,
            "compactions": self.compactions,
            "warnings": self.warnings,
            "usage": self.usage.as_dict(),
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
        }


def _split(written: int, like: Usage | None, one_hour_default: bool) -> int:
    """The 1-hour share of ``written`` cache tokens, following the recorded request."""
    if like is not None and like.cache_creation_input_tokens > 0:
        return written * like.cache_creation_1h_tokens // like.cache_creation_input_tokens
    return written if one_hour_default else 0


def _recorded(
    response: Response,
    index: int,
    tokens: int,
    window: int,
    a: Assumptions,
    *,
    cold: bool,
    added: int,
) -> SimRequest:
    """The replayed stand-in for recorded request ``index`` at ``tokens`` of context: the
    recording's fresh input and output, its cache writes (plus ``added`` tokens the policy
    put in), the rest read from the cache."""
    u = response.usage
    fresh = min(u.input_tokens, tokens)
    # A cold cache writes everything but a still-cached prefix; a warm one writes what
    # the recording wrote.
    room = tokens - fresh
    if cold:
        written = room - min(a.warm_prefix_tokens, room)
    else:
        written = min(u.cache_creation_input_tokens + added, room)
    read = tokens - fresh - written
    one_hour = _split(written, u, a.one_hour_writes)
    usage = Usage(fresh, written, read, u.output_tokens, one_hour)
    return SimRequest(tokens, usage, window, "recorded", index, response.model, response.timestamp)


def _added_usage(tokens: int, cached: int, output: int, one_hour_default: bool) -> Usage:
    read = min(cached, tokens)
    written = tokens - read
    return Usage(0, written, read, output, written if one_hour_default else 0)


def _growth(responses: Sequence[Response]) -> list[int]:
    growth = [0] * len(responses)
    for i in range(1, len(responses)):
        if responses[i].segment == responses[i - 1].segment:
            growth[i] = responses[i].context_tokens - responses[i - 1].context_tokens
    return growth


def _price(requests: Sequence[SimRequest], pricer: Pricer | None) -> float | None:
    """Each request at its own model's prices; ``None`` when one of them has none."""
    if pricer is None:
        return None
    return pricer.total((r.model, r.usage) for r in requests)


def _pricer(prices: PriceTable | Pricer | None) -> Pricer | None:
    if prices is None or isinstance(prices, Pricer):
        return prices
    return Pricer(prices)


def replay(
    responses: Sequence[Response],
    assumptions: Assumptions,
    policy: Policy,
    prices: PriceTable | Pricer | None,
    *,
    compactions: Sequence[Compaction] = (),
    summarizer: Sequence[Sequence[Response]] = (),
) -> ReplayResult:
    """Replay the main chain ``responses`` under ``policy``.

    For ``none``, ``compactions`` place the recorded summarizer requests (``summarizer[k]``
    holds the responses of the k-th compaction's ``agent-acompact-*`` file, if found).
    ``prices`` is the table each request's model is looked up in (``None``: no costs).
    """
    pricer = _pricer(prices)
    if policy.kind == "none":
        return _replay_none(responses, policy, pricer, compactions, summarizer)
    if policy.kind == "compact":
        return _replay_compact(responses, assumptions, policy, pricer)
    return _replay_handoff(responses, assumptions, policy, pricer)


def _replay_none(
    responses: Sequence[Response],
    policy: Policy,
    prices: Pricer | None,
    compactions: Sequence[Compaction],
    summarizer: Sequence[Sequence[Response]],
) -> ReplayResult:
    out: list[SimRequest] = []
    at = {c.after_requests: k for k, c in enumerate(compactions)}
    for i, response in enumerate(responses):
        k = at.get(i)
        if k is not None and k < len(summarizer):
            for s in summarizer[k]:
                out.append(
                    SimRequest(
                        s.context_tokens,
                        s.usage,
                        response.segment,
                        "summary",
                        None,
                        s.model,
                        s.timestamp,
                    )
                )
        out.append(
            SimRequest(
                response.context_tokens,
                response.usage,
                response.segment + 1,
                "recorded",
                i,
                response.model,
                response.timestamp,
            )
        )
    return ReplayResult(
        policy, tuple(out), compactions=len(compactions), cost_usd=_price(out, prices)
    )


def _replay_compact(
    responses: Sequence[Response], a: Assumptions, policy: Policy, prices: Pricer | None
) -> ReplayResult:
    growth = _growth(responses)
    out: list[SimRequest] = []
    window = 1
    start = a.base_tokens
    prev: int | None = None  # context of the previous request in this window
    prev_out = 0
    cold = False  # the first window's cache is as recorded
    compactions = clamped = 0
    for i, response in enumerate(responses):
        tokens = max(start, (start if prev is None else prev) + growth[i])
        if prev is not None and (prev + prev_out >= a.compact_at or tokens > a.usable_limit):
            summary_in = min(prev + prev_out + a.compact_prompt_tokens, a.usable_limit)
            last = responses[i - 1]
            out.append(
                SimRequest(
                    summary_in,
                    _added_usage(summary_in, prev, a.summary_tokens, a.one_hour_writes),
                    window,
                    "summary",
                    None,
                    last.model,
                    last.timestamp,
                )
            )
            compactions += 1
            window += 1
            start = a.base_tokens + a.summary_tokens + a.reload_tokens
            tokens = max(start, start + growth[i])
            prev, cold = None, True
        if tokens > a.usable_limit:
            tokens, clamped = a.usable_limit, clamped + 1
        out.append(_recorded(response, i, tokens, window, a, cold=cold, added=0))
        prev, prev_out, cold = tokens, response.usage.output_tokens, False
    return ReplayResult(
        policy,
        tuple(out),
        compactions=compactions,
        clamped=clamped,
        cost_usd=_price(out, prices),
    )


def _replay_handoff(
    responses: Sequence[Response], a: Assumptions, policy: Policy, prices: Pricer | None
) -> ReplayResult:
    assert policy.threshold is not None
    budget = Budget(a.limit, a.output_reserve, policy.threshold)
    growth = _growth(responses)
    fresh_start = a.base_tokens + a.notes_tokens + a.reload_tokens
    out: list[SimRequest] = []
    window = 1
    start = a.base_tokens
    prev: int | None = None
    prev_out = 0
    cold = False
    claimed: set[Stage] = set()
    due: int | None = None  # recorded requests left before the agent writes its notes
    rollovers = forced = warnings = handoffs = clamped = 0

    def new_window() -> None:
        nonlocal window, start, prev, cold, due
        window += 1
        start, prev, cold, due = fresh_start, None, True, None
        claimed.clear()

    for i, response in enumerate(responses):
        if due is not None and prev is not None:
            if due > 0:
                due -= 1
            else:
                # The agent checkpoints its notes, confirms, and calls new_context.
                notes_in = prev + prev_out
                last = responses[i - 1]
                if notes_in + a.notes_tokens + NEW_CONTEXT_TOKENS <= a.usable_limit:
                    out.append(
                        SimRequest(
                            notes_in,
                            _added_usage(notes_in, prev, a.notes_tokens, a.one_hour_writes),
                            window,
                            "notes",
                            None,
                            last.model,
                            last.timestamp,
                        )
                    )
                    call_in = notes_in + a.notes_tokens + NEW_CONTEXT_TOKENS
                    out.append(
                        SimRequest(
                            call_in,
                            _added_usage(call_in, notes_in, NEW_CONTEXT_TOKENS, a.one_hour_writes),
                            window,
                            "new_context",
                            None,
                            last.model,
                            last.timestamp,
                        )
                    )
                    rollovers += 1
                    new_window()
        tokens = max(start, (start if prev is None else prev) + growth[i])
        decision = evaluate(budget, tokens, advisory_tokens=a.advisory_tokens, claimed=claimed)
        if decision.action is Action.ROLLOVER:
            forced += 1
            new_window()
            tokens = max(start, start + growth[i])
            if tokens > a.usable_limit:
                tokens, clamped = a.usable_limit, clamped + 1
            decision = evaluate(budget, tokens, advisory_tokens=a.advisory_tokens, claimed=claimed)
        added = 0
        if decision.action is Action.WARN and decision.stage is not None:
            claimed.add(decision.stage)
            tokens += a.advisory_tokens
            added = a.advisory_tokens
            if decision.stage is Stage.HANDOFF:
                handoffs += 1
                due = a.handoff_lag
            else:
                warnings += 1
        out.append(_recorded(response, i, tokens, window, a, cold=cold, added=added))
        prev, prev_out, cold = tokens, response.usage.output_tokens, False
    return ReplayResult(
        policy,
        tuple(out),
        rollovers=rollovers,
        forced_rollovers=forced,
        warnings=warnings,
        handoff_requests=handoffs,
        clamped=clamped,
        cost_usd=_price(out, prices),
    )

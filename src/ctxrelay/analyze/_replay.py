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

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

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

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence

__all__ = [
    "CHARS_PER_TOKEN",
    "Assumptions",
    "Chain",
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


@dataclass(frozen=True, slots=True)
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


class Chain:
    """What every replay of one recorded chain reads of its responses, read once: the
    session's three replays and each point of its sweep share it (built per replay,
    each would walk the responses' properties again).

    ``context`` and ``growth`` are the chain's curve and what each request added (its
    context minus the previous request's, 0 after a compaction: the reload is not
    work); ``counts[i]`` is response ``i``'s usage counts in :class:`Usage`'s order
    (input, cache writes, cache reads, output, 1-hour writes), its model and its
    timestamp; ``usage`` is their sum, ``peak`` the largest context, ``models`` the
    models that made them, ``first`` and ``last`` the earliest and latest time."""

    __slots__ = (
        "context",
        "counts",
        "first",
        "growth",
        "last",
        "models",
        "peak",
        "responses",
        "segments",
        "usage",
    )

    def __init__(self, responses: Sequence[Response]) -> None:
        self.responses = responses
        context: list[int] = []
        counts: list[_Counts] = []
        segments: list[int] = []
        growth: list[int] = []
        # One pass, everything taken at once: this reads every response of the run.
        add_context, add_counts = context.append, counts.append
        add_segment, add_growth = segments.append, growth.append
        before = 0
        previous: int | None = None  # the segment of the response before
        for r in responses:
            u = r.usage
            fresh = u.input_tokens
            written = u.cache_creation_input_tokens
            read = u.cache_read_input_tokens
            tokens = fresh + written + read  # = Usage.context_tokens
            segment = r.segment
            add_growth(tokens - before if segment == previous else 0)
            add_context(tokens)
            add_segment(segment)
            add_counts(
                (
                    fresh,
                    written,
                    read,
                    u.output_tokens,
                    u.cache_creation_1h_tokens,
                    r.model,
                    r.timestamp,
                )
            )
            before, previous = tokens, segment
        self.context = context
        self.counts = counts
        self.segments = segments
        self.growth = growth
        self.usage = Usage()
        self.peak = 0
        self.models: set[str | None] = set()
        self.first: str | None = None
        self.last: str | None = None
        if counts:
            columns = tuple(zip(*counts, strict=True))
            fresh_sum, written_sum, read_sum, output_sum, one_hour_sum = map(sum, columns[:5])
            self.usage = Usage(fresh_sum, written_sum, read_sum, output_sum, one_hour_sum)
            self.models = set(columns[5])
            self.peak = max(context)
            stamps = list(filter(None, columns[6]))
            if stamps:
                self.first, self.last = min(stamps), max(stamps)


def measure_assumptions(
    responses: Sequence[Response],
    compactions: Sequence[Compaction],
    *,
    model: str | None,
    limit: int | None = None,
    chain: Chain | None = None,
) -> Assumptions:
    """The session's assumptions: its window, its base, and what its own compactions
    measured (summary size, reload) where it has any. ``chain`` is ``responses`` read
    already (:class:`Chain`)."""
    chain = _chain_of(responses, chain)
    curve = chain.context
    window = context_window_for(model, limit)
    base = curve[0] if curve else 0
    measured: list[str] = ["base_tokens"]
    if limit is None and chain.peak > window:
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
        max(0, curve[c.after_requests] - base - summary)
        for c in compactions
        if 0 < c.after_requests < len(curve)
    ]
    if reloads:
        reload = round(sum(reloads) / len(reloads))
        measured.append("reload_tokens")
    written = chain.usage.cache_creation_input_tokens
    one_hour = chain.usage.cache_creation_1h_tokens
    return Assumptions(
        limit=window,
        base_tokens=base,
        summary_tokens=summary,
        reload_tokens=reload,
        one_hour_writes=written > 0 and one_hour * 2 > written,
        prefix_measured=chain.counts[0][2] if chain.counts else 0,
        measured=tuple(measured),
    )


def _chain_of(responses: Sequence[Response], chain: Chain | None) -> Chain:
    if chain is None:
        return Chain(responses)
    if chain.responses is not responses:
        raise ValueError("the chain given was read from other responses than the ones replayed")
    return chain


if TYPE_CHECKING:
    from typing import Literal

    RequestKind = Literal["recorded", "summary", "notes", "new_context"]
    _Counts = tuple[int, int, int, int, int, str | None, str | None]
    """A recorded response's input, cache writes, cache reads, output, 1-hour writes,
    model and timestamp (:class:`Chain`)."""
    _Row = tuple[int, int, int, int, int, int, int, RequestKind, int | None, str | None, str | None]
    """A replayed request: context, input, cache writes, cache reads, output, 1-hour
    writes, window, kind, recorded index, model, timestamp (:class:`SimRequest`'s fields,
    its usage spelled out)."""


@dataclass(frozen=True, slots=True)
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


class _Rows:
    """A replay's requests as the rows the replay writes (:data:`_Row`), made
    :class:`SimRequest` values the first time someone asks for them: the ``--json``
    report reads only their sums, and a sweep point not even those. The rows of
    ``none`` (the recording itself) are written only then too."""

    __slots__ = ("_build", "_built", "_rows", "count")

    def __init__(
        self, rows: tuple[_Row, ...], count: int, build: Callable[[], tuple[_Row, ...]] | None
    ) -> None:
        self._rows = rows
        self._build = build
        self._built: tuple[SimRequest, ...] | None = None
        self.count = count

    @property
    def rows(self) -> tuple[_Row, ...]:
        if self._build is not None:
            self._rows, self._build = self._build(), None
            assert len(self._rows) == self.count
        return self._rows

    def requests(self) -> tuple[SimRequest, ...]:
        built = self._built
        if built is None:
            built = self._built = tuple(
                SimRequest(tokens, Usage(f, w, r, o, h), window, kind, recorded, model, stamp)
                for tokens, f, w, r, o, h, window, kind, recorded, model, stamp in self.rows
            )
        return built

    def items(self) -> Iterator[tuple[str | None, Usage]]:
        """Each request's model and usage, for the pricing rule."""
        for _, f, w, r, o, h, _, _, _, model, _ in self.rows:
            yield model, Usage(f, w, r, o, h)

    def __eq__(self, other: object) -> bool:
        return self.rows == other.rows if isinstance(other, _Rows) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.rows)

    def __repr__(self) -> str:
        return f"<{self.count} requests>"


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """A policy's replay of one session: its counts and sums, and its ``requests``."""

    policy: Policy
    rows: _Rows = field(repr=False)
    """The requests, as rows (:attr:`requests` holds them as values)."""
    rollovers: int = 0
    forced_rollovers: int = 0
    compactions: int = 0
    warnings: int = 0
    handoff_requests: int = 0
    clamped: int = 0
    """Requests that would not fit even in a fresh window (clamped to the usable limit)."""
    cost_usd: float | None = None
    usage: Usage = field(default_factory=Usage)
    """The sum of the requests' usage."""
    peak_context_tokens: int = 0
    added_requests: int = 0
    """Requests the policy added (summaries, notes, ``new_context`` calls)."""

    @property
    def requests(self) -> tuple[SimRequest, ...]:
        return self.rows.requests()

    @property
    def restarts(self) -> list[int]:
        """Positions (indexes into ``requests``) where a new window begins."""
        rows = self.rows.rows
        return [i for i in range(1, len(rows)) if rows[i][6] != rows[i - 1][6]]

    def as_dict(self) -> dict[str, object]:
        return {
            "policy": str(self.policy),
            "threshold": self.policy.threshold,
            "requests": self.rows.count,
            "added_requests": self.added_requests,
            "peak_context_tokens": self.peak_context_tokens,
            "rollovers": self.rollovers,
            "forced_rollovers": self.forced_rollovers,
            "compactions": self.compactions,
            "warnings": self.warnings,
            "usage": self.usage.as_dict(),
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
        }


def _result(
    policy: Policy,
    rows: list[_Row],
    pricer: Pricer | None,
    models: set[str | None],
    *,
    rollovers: int = 0,
    forced_rollovers: int = 0,
    compactions: int = 0,
    warnings: int = 0,
    handoff_requests: int = 0,
    clamped: int = 0,
) -> ReplayResult:
    """The result of ``rows`` (made by ``models``): their sums, their peak and their
    price, each request at its own model's prices (``None`` when one of them has none,
    or with no ``pricer``)."""
    usage = Usage()
    peak = added = 0
    if rows:
        tokens, fresh, written, read, output, one_hour, _, kinds, _, _, _ = zip(*rows, strict=True)
        usage = Usage(sum(fresh), sum(written), sum(read), sum(output), sum(one_hour))
        peak = max(tokens)
        added = len(kinds) - kinds.count("recorded")
    held = _Rows(tuple(rows), len(rows), None)
    return ReplayResult(
        policy,
        held,
        rollovers,
        forced_rollovers,
        compactions,
        warnings,
        handoff_requests,
        clamped,
        None if pricer is None else pricer.total_of(models, usage, held.items()),
        usage,
        peak,
        added,
    )


def _recorded(  # noqa: PLR0917 - positional: one call per replayed request
    counts: _Counts,
    index: int,
    tokens: int,
    window: int,
    warm_prefix: int,
    one_hour_default: bool,
    cold: bool,
    added: int,
) -> _Row:
    """The replayed stand-in for recorded request ``index`` (its ``counts``) at ``tokens``
    of context: the recording's fresh input and output, its cache writes (plus ``added``
    tokens the policy put in), the rest read from the cache."""
    recorded_fresh, recorded_written, _, output, recorded_one_hour, model, stamp = counts
    # Conditional expressions, not min(): this runs for every request of every replay.
    fresh = recorded_fresh if recorded_fresh < tokens else tokens
    room = tokens - fresh
    # A cold cache writes everything but a still-cached prefix; a warm one writes what
    # the recording wrote.
    if cold:
        written = room - warm_prefix if warm_prefix < room else 0
    else:
        written = recorded_written + added
        written = written if written < room else room
    # The 1-hour share of the writes follows the recorded request's split.
    if recorded_written > 0:
        one_hour = written * recorded_one_hour // recorded_written
    else:
        one_hour = written if one_hour_default else 0
    return (
        tokens,
        fresh,
        written,
        room - written,
        output,
        one_hour,
        window,
        "recorded",
        index,
        model,
        stamp,
    )


def _added(  # noqa: PLR0917 - positional: one call per added request
    tokens: int,
    cached: int,
    output: int,
    one_hour_default: bool,
    window: int,
    kind: RequestKind,
    after: _Counts,
) -> _Row:
    """A request the policy adds at ``tokens``, ``cached`` of them read from the cache,
    made by the model of the recorded request it follows (``after``)."""
    read = min(cached, tokens)
    written = tokens - read
    one_hour = written if one_hour_default else 0
    return (tokens, 0, written, read, output, one_hour, window, kind, None, after[5], after[6])


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
    chain: Chain | None = None,
) -> ReplayResult:
    """Replay the main chain ``responses`` under ``policy``.

    For ``none``, ``compactions`` place the recorded summarizer requests (``summarizer[k]``
    holds the responses of the k-th compaction's ``agent-acompact-*`` file, if found).
    ``prices`` is the table each request's model is looked up in (``None``: no costs).
    ``chain`` is ``responses`` read already (:class:`Chain`), for many replays of one
    chain.
    """
    pricer = _pricer(prices)
    chain = _chain_of(responses, chain)
    if policy.kind == "none":
        return _replay_none(chain, policy, pricer, compactions, summarizer)
    if policy.kind == "compact":
        return _replay_compact(chain, assumptions, policy, pricer)
    return _replay_handoff(chain, assumptions, policy, pricer)


def _replay_none(
    chain: Chain,
    policy: Policy,
    prices: Pricer | None,
    compactions: Sequence[Compaction],
    summarizer: Sequence[Sequence[Response]],
) -> ReplayResult:
    """The recording: its sums are the chain's and the placed summaries'; its rows are
    written only when someone reads them."""
    at = {c.after_requests: k for k, c in enumerate(compactions)}
    placed = {
        i: summarizer[k]
        for i, k in at.items()
        if 0 <= i < len(chain.counts) and k < len(summarizer)
    }
    summaries = [s for i in sorted(placed) for s in placed[i]]
    usage, peak, models = chain.usage, chain.peak, chain.models
    if summaries:
        usage = total_usage((usage, *(s.usage for s in summaries)))
        peak = max(peak, *(s.context_tokens for s in summaries))
        models = models | {s.model for s in summaries}

    def build() -> tuple[_Row, ...]:
        rows: list[_Row] = []
        segments = chain.segments
        for i, (fresh, written, read, output, one_hour, model, stamp) in enumerate(chain.counts):
            for s in placed.get(i, ()):
                u = s.usage
                rows.append(
                    (
                        u.context_tokens,
                        u.input_tokens,
                        u.cache_creation_input_tokens,
                        u.cache_read_input_tokens,
                        u.output_tokens,
                        u.cache_creation_1h_tokens,
                        segments[i],
                        "summary",
                        None,
                        s.model,
                        s.timestamp,
                    )
                )
            rows.append(
                (
                    fresh + written + read,
                    fresh,
                    written,
                    read,
                    output,
                    one_hour,
                    segments[i] + 1,
                    "recorded",
                    i,
                    model,
                    stamp,
                )
            )
        return tuple(rows)

    held = _Rows((), len(chain.counts) + len(summaries), build)
    return ReplayResult(
        policy,
        held,
        compactions=len(compactions),
        cost_usd=None if prices is None else prices.total_of(models, usage, held.items()),
        usage=usage,
        peak_context_tokens=peak,
        added_requests=len(summaries),
    )


def _replay_compact(
    chain: Chain, a: Assumptions, policy: Policy, prices: Pricer | None
) -> ReplayResult:
    growth = chain.growth
    counts = chain.counts
    usable = a.usable_limit
    compact_at = a.compact_at
    warm, one_hour_default = a.warm_prefix_tokens, a.one_hour_writes
    rows: list[_Row] = []
    append = rows.append
    window = 1
    start = a.base_tokens
    prev: int | None = None  # context of the previous request in this window
    prev_out = 0
    cold = False  # the first window's cache is as recorded
    compactions = clamped = 0
    for i, recorded in enumerate(counts):
        tokens = (start if prev is None else prev) + growth[i]
        tokens = tokens if tokens > start else start
        if prev is not None and (prev + prev_out >= compact_at or tokens > usable):
            summary_in = min(prev + prev_out + a.compact_prompt_tokens, usable)
            append(
                _added(
                    summary_in,
                    prev,
                    a.summary_tokens,
                    one_hour_default,
                    window,
                    "summary",
                    counts[i - 1],
                )
            )
            compactions += 1
            window += 1
            start = a.base_tokens + a.summary_tokens + a.reload_tokens
            tokens = max(start, start + growth[i])
            prev, cold = None, True
        if tokens > usable:
            tokens, clamped = usable, clamped + 1
        append(_recorded(recorded, i, tokens, window, warm, one_hour_default, cold, 0))
        prev, prev_out, cold = tokens, recorded[3], False
    return _result(policy, rows, prices, chain.models, compactions=compactions, clamped=clamped)


# Enum members bound to module names: attribute lookups on an enum class are slow on
# Python 3.11, and the handoff replay makes two or three per request.
_ROLLOVER = Action.ROLLOVER
_WARN = Action.WARN
_HANDOFF = Stage.HANDOFF


def _replay_handoff(
    chain: Chain, a: Assumptions, policy: Policy, prices: Pricer | None
) -> ReplayResult:
    assert policy.threshold is not None
    budget = Budget(a.limit, a.output_reserve, policy.threshold)
    growth = chain.growth
    counts = chain.counts
    usable = a.usable_limit
    advisory = a.advisory_tokens
    warm, one_hour_default = a.warm_prefix_tokens, a.one_hour_writes
    fresh_start = a.base_tokens + a.notes_tokens + a.reload_tokens
    rows: list[_Row] = []
    append = rows.append
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

    for i, recorded in enumerate(counts):
        if due is not None and prev is not None:
            if due > 0:
                due -= 1
            else:
                # The agent checkpoints its notes, confirms, and calls new_context.
                notes_in = prev + prev_out
                if notes_in + a.notes_tokens + NEW_CONTEXT_TOKENS <= usable:
                    last = counts[i - 1]
                    append(
                        _added(
                            notes_in,
                            prev,
                            a.notes_tokens,
                            one_hour_default,
                            window,
                            "notes",
                            last,
                        )
                    )
                    call_in = notes_in + a.notes_tokens + NEW_CONTEXT_TOKENS
                    append(
                        _added(
                            call_in,
                            notes_in,
                            NEW_CONTEXT_TOKENS,
                            one_hour_default,
                            window,
                            "new_context",
                            last,
                        )
                    )
                    rollovers += 1
                    new_window()
        tokens = (start if prev is None else prev) + growth[i]
        tokens = tokens if tokens > start else start
        decision = evaluate(budget, tokens, advisory_tokens=advisory, claimed=claimed)
        if decision.action is _ROLLOVER:
            forced += 1
            new_window()
            tokens = max(start, start + growth[i])
            if tokens > usable:
                tokens, clamped = usable, clamped + 1
            decision = evaluate(budget, tokens, advisory_tokens=advisory, claimed=claimed)
        added = 0
        if decision.action is _WARN and decision.stage is not None:
            claimed.add(decision.stage)
            tokens += advisory
            added = advisory
            if decision.stage is _HANDOFF:
                handoffs += 1
                due = a.handoff_lag
            else:
                warnings += 1
        append(_recorded(recorded, i, tokens, window, warm, one_hour_default, cold, added))
        prev, prev_out, cold = tokens, recorded[3], False
    return _result(
        policy,
        rows,
        prices,
        chain.models,
        rollovers=rollovers,
        forced_rollovers=forced,
        warnings=warnings,
        handoff_requests=handoffs,
        clamped=clamped,
    )

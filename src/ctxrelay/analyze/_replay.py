"""What-if replay: the requests a recorded session would have sent under another policy.

The model (every number is in :class:`Assumptions` and printed with the results):

* The work is fixed. Each recorded request adds ``growth`` tokens to the context (its
  context minus the previous request's); a policy only changes where the context
  restarts. The first request after a recorded compaction adds nothing of its own: its
  extra tokens are what the compaction reloaded (``reload_tokens``).
* ``none`` is the recording itself, including its compactions and the summarizer's
  requests: its usage is the recorded usage, to the token.
* ``compact``: Claude Code's auto-compaction, where the recording compacted (manual
  compactions kept) and where the context reaches ``compact_at`` (the recording's own
  point, else the current rule; or the next request would not fit): one summary request
  reads the whole conversation and writes ``summary_tokens``; the chain restarts at
  ``base + summary + reload``. A host that compresses by a rule of its own
  (``compact_share``, the Gemini CLI's) compresses once the context reaches that share
  of the window and keeps the newest ``compact_keep`` of the conversation: the chain
  restarts at ``base + summary + reload + kept``.
* ``handoff:P``: ctxrelay's slider. Every request goes through the policy core
  (:func:`ctxrelay.budget.evaluate`) at dispatch; its advisories add ``advisory_tokens``.
  After the handoff request the agent works ``handoff_lag`` more requests, writes its
  notes (one request, ``notes_tokens`` of output), calls ``new_context`` (one request),
  and the next window starts at ``base + notes + reload``. A request over the usable
  limit is a forced rollover to the same start.
* ``mask:N`` (with ``compact``'s compaction) and ``handoff:P+mask:N``: tool results
  older than the newest N requests become placeholders, in batches
  (:mod:`ctxrelay.analyze._mask`).
* Cache: a continuing request reads the previous request from the cache and writes what
  the recording wrote (capped by its size); the first request after a rollover or a
  compaction finds the cache cold and writes its whole input, unless ``warm_prefix_tokens``
  says the shared prefix (system prompt, tools) stays cached, as the recorded compactions
  show (``--warm-prefix``); so does a request a time to live after the one before, under
  every policy; where the recording restarted and the replay did not, or a batch of
  masks changed the context, what is still cached is read and the rest written (the
  recording's rewrite is not copied). Writes keep the recorded request's 5-minute/1-hour
  split.
* Re-reads after a restart the recording did not make (:mod:`ctxrelay.analyze._rereads`)
  make each policy's range: ``cost_usd`` with re-reads on edits, ``high_cost_usd`` on any
  touch.
* Output tokens are the recorded ones. Each replayed request is priced at the model that
  made it: a recorded request at its recorded model, a request the policy adds (a
  summary, the notes, the ``new_context`` call) at the model of the recorded request it
  follows, a recorded summary at the summarizer's model.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import partial
from itertools import pairwise
from operator import ne
from typing import TYPE_CHECKING, Literal, NamedTuple

from ctxrelay.analyze._bill import Pricer, total_usage
from ctxrelay.analyze._mask import MASK_PLACEHOLDER_TOKENS, Masking
from ctxrelay.analyze._policies import Policy
from ctxrelay.analyze._rereads import REREAD_CALL_TOKENS, FileTouch, Rereads
from ctxrelay.budget import Action, Budget, Stage, evaluate
from ctxrelay.budget.bounds import (
    CLAUDE_CODE_COMPACT_BUFFER,
    CLAUDE_CODE_RESPONSE_RESERVE,
    GEMINI_COMPRESSION_KEEP,
    GEMINI_DEFAULT_COMPRESSION_THRESHOLD,
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
    "gemini_compression",
    "measure_assumptions",
    "replay",
    "replay_end",
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

FIVE_MINUTE_TTL_SECONDS = 5 * 60
ONE_HOUR_TTL_SECONDS = 60 * 60
"""The prompt cache's two times to live: a prefix no request read for that long is gone."""


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
    recorded_compact_at: int | None = None
    """Where the recording's own auto-compactions fired (the smallest ``preTokens``):
    Claude Code's threshold for the version that wrote it."""
    compact_share: float | None = None
    """The share of the window at which the host compresses by its own rule (the Gemini
    CLI: :data:`~ctxrelay.budget.bounds.GEMINI_DEFAULT_COMPRESSION_THRESHOLD`); ``None``:
    Claude Code's rule."""
    compact_keep: float = 0.0
    """The newest share of the conversation (past the base) that rule keeps as it is."""
    measured: tuple[str, ...] = field(default=())

    @property
    def usable_limit(self) -> int:
        return self.limit - self.output_reserve

    @property
    def compact_at(self) -> int:
        """Claude Code's own auto-compaction point, whatever the handoff policy reserves:
        the recording's, else the current version's rule; a host with a rule of its own
        compresses at its share of the window."""
        if self.compact_share is not None:
            return int(self.limit * self.compact_share)
        if self.recorded_compact_at is not None:
            return self.recorded_compact_at
        return self.limit - CLAUDE_CODE_RESPONSE_RESERVE - self.compact_buffer

    @property
    def compact_limit(self) -> int:
        """The largest request under ``compact``: Claude Code alone, no plugin, fills the
        window but for the response."""
        return self.limit - CLAUDE_CODE_RESPONSE_RESERVE

    @property
    def cache_ttl_seconds(self) -> int:
        """How long a cached prefix lives without a request reading it."""
        return ONE_HOUR_TTL_SECONDS if self.one_hour_writes else FIVE_MINUTE_TTL_SECONDS

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
            "cache_ttl_seconds": self.cache_ttl_seconds,
            "warm_prefix_tokens": self.warm_prefix_tokens,
            "measured": list(self.measured),
        }

    def sentences(self) -> list[str]:
        """The assumptions in words, printed next to the results."""
        m = set(self.measured)

        def src(name: str) -> str:
            return "measured in the session" if name in m else "default"

        # A compact request's room is Claude Code's response reserve; a host that
        # compresses by its own share (the Gemini CLI) keeps no such reserve.
        room = (
            f"; a compact request fits in {self.compact_limit:,} (Claude Code's own "
            "response reserve)."
            if self.compact_share is None
            else "."
        )
        return [
            f"Window {self.limit:,} tokens; usable {self.usable_limit:,} (a "
            f"{self.output_reserve:,}-token output reserve), which no handoff request "
            f"exceeds{room}",
            "The work is fixed: each recorded request adds the tokens it added in the "
            "recording; a policy only changes where the context restarts.",
            f"A fresh chain starts at the session's first request ({self.base_tokens:,} "
            f"tokens) plus {self.reload_tokens:,} reloaded ({src('reload_tokens')}).",
            f"compact: where the recording compacted (manual ones kept), else at "
            f"{self.compact_at:,} tokens ({src('compact_at')}), one summary request reads "
            f"the conversation (+{self.compact_prompt_tokens:,} of instructions) and writes "
            f"{self.summary_tokens:,} tokens ({src('summary_tokens')}); the chain restarts "
            "at base + summary + reload"
            + (
                f" + the newest {self.compact_keep:.0%} of the conversation, kept (the "
                f"host's own compression at {self.compact_share:.0%} of the window)."
                if self.compact_share is not None
                else "."
            ),
            f"handoff:P: the policy core decides each dispatch (advisories "
            f"{self.advisory_tokens} tokens); {self.handoff_lag} more requests finish the "
            f"unit, one writes {self.notes_tokens:,} tokens of notes, one calls "
            "new_context; the next window starts at base + notes + reload.",
            "Cache: a continuing request reads its predecessor from the cache; the first "
            "request after a rollover or compaction writes its whole input (cold cache)"
            + (
                f" except a {self.warm_prefix_tokens:,}-token prefix still cached;"
                if self.warm_prefix_tokens
                else ";"
            )
            + f" so does any request more than {self.cache_ttl_seconds // 60} minutes after "
            "the one before (the cache's time to live), under every policy.",
            f"mask:N: tool results older than the newest N requests become a "
            f"{MASK_PLACEHOLDER_TOKENS}-token placeholder, in batches every N requests; a "
            "batch writes the cache again from the oldest result it masks.",
            "Re-reads: after a restart the recording did not make, a file it still held is "
            "read again when edited (low end) or touched in any way (high end); the cost "
            "is the range.",
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
    models that made them, ``first`` and ``last`` the earliest and latest time;
    ``gaps[i]`` the seconds since the request before (``None`` where a time is
    missing)."""

    __slots__ = (
        "_expired",
        "_gaps",
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
                _Counts(
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
        self._gaps: list[float | None] | None = None
        self._expired: dict[int, list[bool]] = {}
        if counts:
            columns = tuple(zip(*counts, strict=True))
            fresh_sum, written_sum, read_sum, output_sum, one_hour_sum = map(sum, columns[:5])
            self.usage = Usage(fresh_sum, written_sum, read_sum, output_sum, one_hour_sum)
            self.models = set(columns[5])
            self.peak = max(context)
            stamps = list(filter(None, columns[6]))
            if stamps:
                self.first, self.last = min(stamps), max(stamps)

    @property
    def gaps(self) -> list[float | None]:
        """Seconds between each request and the one before, read on first use."""
        if self._gaps is None:
            times = [_seconds(c.timestamp) for c in self.counts]
            gaps: list[float | None] = [None]
            gaps += [None if a is None or b is None else b - a for a, b in pairwise(times)]
            self._gaps = gaps
        return self._gaps

    def expired(self, ttl: int) -> list[bool]:
        """Whether the cache had expired before each request: ``ttl`` seconds or more
        without a request reading it (taken once per ``ttl``: every replay asks)."""
        found = self._expired.get(ttl)
        if found is None:
            found = self._expired[ttl] = [g is not None and g >= ttl for g in self.gaps]
        return found

    def __reduce__(self) -> tuple[type[Chain], tuple[Sequence[Response]]]:
        """Pickled as its responses (a report crosses processes), and read again on the
        other side: faster than its columns are unpickled."""
        return Chain, (self.responses,)


def _seconds(stamp: str | None) -> float | None:
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp).timestamp()
    except ValueError:
        return None


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
    autos = [c.pre_tokens for c in compactions if c.trigger != "manual" and c.pre_tokens]
    if autos:
        measured.append("compact_at")
    written = chain.usage.cache_creation_input_tokens
    one_hour = chain.usage.cache_creation_1h_tokens
    return Assumptions(
        limit=window,
        base_tokens=base,
        summary_tokens=summary,
        reload_tokens=reload,
        one_hour_writes=written > 0 and one_hour * 2 > written,
        prefix_measured=chain.counts[0].read if chain.counts else 0,
        recorded_compact_at=min(autos) if autos else None,
        measured=tuple(measured),
    )


def gemini_compression(a: Assumptions) -> Assumptions:
    """``a`` with the Gemini CLI's own compression as the ``compact`` baseline: at
    :data:`GEMINI_DEFAULT_COMPRESSION_THRESHOLD` of the window, keeping the newest
    :data:`GEMINI_COMPRESSION_KEEP` of the conversation. The kept share is what the fresh
    context reloads, so no reload is added, and no recorded point is taken as the rule (a
    Gemini session file's history replacements are clears as well as compressions)."""
    measured = tuple(m for m in a.measured if m not in ("reload_tokens", "compact_at"))
    return replace(
        a,
        compact_share=GEMINI_DEFAULT_COMPRESSION_THRESHOLD,
        compact_keep=GEMINI_COMPRESSION_KEEP,
        reload_tokens=0,
        recorded_compact_at=None,
        measured=measured,
    )


def _chain_of(responses: Sequence[Response], chain: Chain | None) -> Chain:
    if chain is None:
        return Chain(responses)
    if chain.responses is not responses:
        raise ValueError("the chain given was read from other responses than the ones replayed")
    return chain


RequestKind = Literal["recorded", "summary", "notes", "new_context", "reread"]


class _Counts(NamedTuple):
    """A recorded response's counts, model and time (:class:`Chain`)."""

    fresh: int
    written: int
    read: int
    output: int
    one_hour: int
    model: str | None
    timestamp: str | None


class _Row(NamedTuple):
    """A replayed request as the replay writes it: :class:`SimRequest`'s fields with its
    usage spelled out (the sums are taken column by column)."""

    tokens: int
    fresh: int
    written: int
    read: int
    output: int
    one_hour: int
    window: int
    kind: RequestKind
    recorded: int | None
    model: str | None
    timestamp: str | None


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
    """A replay's requests as the rows the replay writes (:class:`_Row`), made
    :class:`SimRequest` values the first time someone asks for them: the ``--json``
    report reads only their sums, and a sweep point not even those. A report's rows are
    written only then too (``build``): ``none``'s from the recording, another policy's
    by replaying it again (``files_again`` of :func:`replay`)."""

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
                SimRequest(
                    r.tokens,
                    Usage(r.fresh, r.written, r.read, r.output, r.one_hour),
                    r.window,
                    r.kind,
                    r.recorded,
                    r.model,
                    r.timestamp,
                )
                for r in self.rows
            )
        return built

    def items(self) -> Iterator[tuple[str | None, Usage]]:
        """Each request's model and usage, for the pricing rule."""
        for r in self.rows:
            yield r.model, Usage(r.fresh, r.written, r.read, r.output, r.one_hour)

    def __eq__(self, other: object) -> bool:
        return self.rows == other.rows if isinstance(other, _Rows) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.rows)

    def __repr__(self) -> str:
        return f"<{self.count} requests>"


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """A policy's replay of one session: its counts and sums, and its ``requests``.

    ``cost_usd`` is the replay with re-reads on edits (the range's low end),
    ``high_cost_usd`` with re-reads on any touch (its high end;
    :mod:`ctxrelay.analyze._rereads`); for ``none`` both are the recording's."""

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
    """Requests the policy added (summaries, notes, ``new_context`` calls, re-reads)."""
    expired: int = 0
    """Requests that found the cache expired after a pause (and wrote their whole input)."""
    rereads: int = 0
    reread_tokens: int = 0
    """Re-reads after the replay's restarts at the low end, and the tokens they read."""
    high_cost_usd: float | None = None
    high_rereads: int = 0
    high_reread_tokens: int = 0
    """The same at the high end."""
    mask_batches: int = 0
    masked_tokens: int = 0
    """Batches of masks, and the tokens they took out of the context (``mask:N``)."""

    @property
    def requests(self) -> tuple[SimRequest, ...]:
        return self.rows.requests()

    @property
    def range_usd(self) -> tuple[float, float] | None:
        """``(low, high)``: the replay's cost with re-reads on edits and on any touch,
        the lower first (more re-reads may move a rollover and cost less, rarely)."""
        if self.cost_usd is None or self.high_cost_usd is None:
            return None
        a, b = self.cost_usd, self.high_cost_usd
        return (a, b) if a <= b else (b, a)

    @property
    def restarts(self) -> list[int]:
        """Positions (indexes into ``requests``) where a new window begins."""
        rows = self.rows.rows
        return [i for i in range(1, len(rows)) if rows[i].window != rows[i - 1].window]

    def as_dict(self) -> dict[str, object]:
        span = self.range_usd
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
            "cache_expired_requests": self.expired,
            "rereads": [self.rereads, self.high_rereads],
            "reread_tokens": [self.reread_tokens, self.high_reread_tokens],
            "mask": self.policy.mask,
            "mask_batches": self.mask_batches,
            "masked_tokens": self.masked_tokens,
            "usage": self.usage.as_dict(),
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
            "range_usd": None if span is None else [round(v, 6) for v in span],
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
    expired: int = 0,
    rereads: Rereads | None = None,
    masking: Masking | None = None,
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
    cost = None if pricer is None else pricer.total_of(models, usage, held.items())
    return ReplayResult(
        policy,
        held,
        rollovers,
        forced_rollovers,
        compactions,
        warnings,
        handoff_requests,
        clamped,
        cost,
        usage,
        peak,
        added,
        expired,
        rereads.count if rereads else 0,
        rereads.tokens if rereads else 0,
        cost,
        rereads.count if rereads else 0,
        rereads.tokens if rereads else 0,
        masking.count if masking else 0,
        masking.tokens if masking else 0,
    )


class _Cache(NamedTuple):
    """What the cache holds for a replayed recorded request: ``cold`` after the replay's
    restart, ``expired`` after a pause past the time to live, ``rebuilt`` where the
    recording restarted and the replay did not (its predecessor, ``prev`` tokens, is
    still cached: the recording's rewrite there is not the replay's)."""

    cold: bool
    expired: bool
    rebuilt: bool
    prev: int


def _recorded(  # noqa: PLR0917 - positional: one call per replayed request
    counts: _Counts,
    index: int,
    tokens: int,
    window: int,
    warm_prefix: int,
    one_hour_default: bool,
    cache: _Cache,
    added: int,
) -> _Row:
    """The replayed stand-in for recorded request ``index`` (its ``counts``) at ``tokens``
    of context: the recording's fresh input and output, its cache writes (plus ``added``
    tokens the policy put in) unless ``cache`` says otherwise, the rest read from the
    cache."""
    recorded_written = counts.written
    # Conditional expressions, not min(): this runs for every request of every replay.
    fresh = counts.fresh if counts.fresh < tokens else tokens
    room = tokens - fresh
    if cache.expired:
        written = room  # the whole prefix expired, the system prompt with it
    elif cache.cold:
        written = room - warm_prefix if warm_prefix < room else 0
    elif cache.rebuilt:
        written = room - cache.prev if cache.prev < room else 0
    else:
        written = recorded_written + added
        written = written if written < room else room
    # The 1-hour share of the writes follows the recorded request's split.
    if recorded_written > 0:
        one_hour = written * counts.one_hour // recorded_written
        one_hour = one_hour if one_hour < written else written
    else:
        one_hour = written if one_hour_default else 0
    return _Row(
        tokens,
        fresh,
        written,
        room - written,
        counts.output,
        one_hour,
        window,
        "recorded",
        index,
        counts.model,
        counts.timestamp,
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
    return _Row(
        tokens, 0, written, read, output, one_hour, window, kind, None, after.model, after.timestamp
    )


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
    files: Sequence[tuple[FileTouch, ...]] | None = None,
    results: Sequence[int] | None = None,
    files_again: Callable[[], Sequence[tuple[FileTouch, ...]] | None] | None = None,
) -> ReplayResult:
    """Replay the main chain ``responses`` under ``policy``.

    ``compactions`` are the recording's: ``none`` places the recorded summarizer
    requests there (``summarizer[k]`` holds the responses of the k-th compaction's
    ``agent-acompact-*`` file, if found), ``compact`` compacts there. ``prices`` is the
    table each request's model is looked up in (``None``: no costs). ``chain`` is
    ``responses`` read already (:class:`Chain`), for many replays of one chain.
    ``files`` are each response's file touches
    (:func:`~ctxrelay.analyze._rereads.file_touches`): with them a policy is replayed at
    both ends of its range (re-reads on edits, on any touch); without them both ends
    are the replay without re-reads. ``results`` are the tool-result tokens each
    request brought (:func:`~ctxrelay.analyze._mask.result_tokens`), which ``mask:N``
    masks (without them it masks nothing). With ``files_again`` (``files`` read
    again) the result keeps its sums alone, and its rows are replayed when read.
    """
    pricer = _pricer(prices)
    chain = _chain_of(responses, chain)
    if policy.kind == "none":
        return _replay_none(chain, policy, pricer, compactions, summarizer)
    run = partial(replay_end, chain, assumptions, policy, pricer, compactions, results)
    edits = _edits(chain, files)
    low = run(edits)
    if files_again is not None:
        # The replay's sums are kept, not its rows (a fifth of a run's peak memory at
        # 1 GB, with the touches they rest on): replayed again, unpriced, when someone
        # reads them.
        rows = partial(replay_end, chain, assumptions, policy, None, compactions, results)
        low = replace(
            low, rows=_Rows((), low.rows.count, partial(_low_rows, chain, rows, files_again))
        )
    if files is None or edits is None or not edits.differs:
        return low  # the high end would have read nothing more: it is this replay
    high = run(Rereads(files, chain.segments, "touches"))
    return replace(
        low,
        high_cost_usd=high.cost_usd,
        high_rereads=high.rereads,
        high_reread_tokens=high.reread_tokens,
    )


def _edits(chain: Chain, files: Sequence[tuple[FileTouch, ...]] | None) -> Rereads | None:
    """The re-reads of the range's low end (on edits), when the touches are known."""
    return None if files is None else Rereads(files, chain.segments, "edits")


def _low_rows(
    chain: Chain,
    run: Callable[[Rereads | None], ReplayResult],
    files_again: Callable[[], Sequence[tuple[FileTouch, ...]] | None],
) -> tuple[_Row, ...]:
    """A replay's rows at its low end, replayed again (``run``: :func:`replay_end` with
    all but its re-reads). Functions and their arguments, not closures: a report crosses
    processes."""
    return run(_edits(chain, files_again())).rows.rows


def replay_end(  # noqa: PLR0917 - the replay's inputs
    chain: Chain,
    assumptions: Assumptions,
    policy: Policy,
    pricer: Pricer | None,
    compactions: Sequence[Compaction],
    results: Sequence[int] | None,
    rereads: Rereads | None,
) -> ReplayResult:
    """One end of a restarting policy's replay, in full: its re-reads as ``rereads``
    counts them (:func:`replay` gives both ends)."""
    masking = None if policy.mask is None else Masking(results or (), policy.mask)
    if policy.kind in ("compact", "mask"):
        return _replay_compact(
            chain,
            assumptions,
            policy,
            pricer,
            recorded_compactions=compactions,
            rereads=rereads,
            masking=masking,
        )
    return _replay_handoff(chain, assumptions, policy, pricer, rereads, masking)


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

    held = _Rows((), len(chain.counts) + len(summaries), partial(_none_rows, chain, placed))
    cost = None if prices is None else prices.total_of(models, usage, held.items())
    return ReplayResult(
        policy,
        held,
        compactions=len(compactions),
        cost_usd=cost,
        high_cost_usd=cost,
        usage=usage,
        peak_context_tokens=peak,
        added_requests=len(summaries),
    )


def _none_rows(chain: Chain, placed: dict[int, Sequence[Response]]) -> tuple[_Row, ...]:
    """``none``'s rows: the recording, each placed summary before the request it
    follows."""
    rows: list[_Row] = []
    segments = chain.segments
    for i, c in enumerate(chain.counts):
        for s in placed.get(i, ()):
            u = s.usage
            rows.append(
                _Row(
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
            _Row(
                c.fresh + c.written + c.read,
                c.fresh,
                c.written,
                c.read,
                c.output,
                c.one_hour,
                segments[i] + 1,
                "recorded",
                i,
                c.model,
                c.timestamp,
            )
        )
    return tuple(rows)


def _reread_row(
    prev: int, prev_out: int, one_hour_default: bool, window: int, after: _Counts
) -> _Row:
    """The response that calls Read again, on the context before it."""
    return _added(
        prev + prev_out, prev, REREAD_CALL_TOKENS, one_hour_default, window, "reread", after
    )


class _Before(NamedTuple):
    """A recorded request about to be replayed: its index, its context so far, the
    previous request's context and output (``prev`` ``None`` at a window's start), the
    tokens to read again first, its window, whether the recording restarted before it."""

    i: int
    tokens: int
    prev: int | None
    prev_out: int
    pending: int
    window: int
    restarted: bool


def _restarts(segments: Sequence[int]) -> list[bool]:
    """Whether the recording restarted before each request (a new segment)."""
    return [False, *map(ne, segments[1:], segments[:-1])] if segments else []


def _carry(
    b: _Before, rows: list[_Row], chain: Chain, masking: Masking | None, one_hour_default: bool
) -> tuple[int, int, int, bool]:
    """What comes before a replayed request, alike under every policy: the re-reads due
    (one added request, and the files into the context), then a batch of masks if one
    falls here. Returns its context, the tokens the policy added to it, what the cache
    holds of it, and whether that is less than its predecessor (the recording restarted
    here, or a mask changed the context)."""
    i, tokens, prev = b.i, b.tokens, b.prev
    added = 0
    if b.pending and prev is not None:
        rows.append(_reread_row(prev, b.prev_out, one_hour_default, b.window, chain.counts[i - 1]))
        added = b.pending + REREAD_CALL_TOKENS
        tokens += added
    cached, rebuilt = prev or 0, b.restarted
    if masking is not None and prev is not None and (masked := masking.batch(i)):
        tokens -= masked.saved
        cached, rebuilt = min(cached, masked.prefix), True
    return tokens, added, cached, rebuilt


def _replay_compact(
    chain: Chain,
    a: Assumptions,
    policy: Policy,
    prices: Pricer | None,
    *,
    recorded_compactions: Sequence[Compaction],
    rereads: Rereads | None,
    masking: Masking | None = None,
) -> ReplayResult:
    growth = chain.growth
    counts = chain.counts
    restarted = _restarts(chain.segments)
    expired_at = chain.expired(a.cache_ttl_seconds)
    usable = a.compact_limit
    compact_at = a.compact_at
    # A recorded preTokens counts what Claude Code measured when it fired, at least the
    # context of the request before: held to the context alone, the replay never fires
    # before the recording did. Claude Code's own rule counts the output too; the Gemini
    # CLI's counts the last prompt alone.
    with_output = a.recorded_compact_at is None and a.compact_share is None
    # Where the recording compacted, manual or automatic: the replay compacts there too,
    # unless it compacted already since the recording's previous compaction. A masked
    # chain is smaller than the recording's: only the user's own compactions hold there.
    points = {
        c.after_requests
        for c in recorded_compactions
        if 0 < c.after_requests < len(counts) and (masking is None or c.trigger == "manual")
    }
    warm, one_hour_default = a.warm_prefix_tokens, a.one_hour_writes
    rows: list[_Row] = []
    append = rows.append
    window = 1
    start = a.base_tokens
    prev: int | None = None  # context of the previous request in this window
    prev_out = 0
    cold = False  # the first window's cache is as recorded
    compactions = clamped = expired = 0
    since_point = False  # the replay compacted since the recording's last compaction
    pending = 0  # tokens to read again before the next request
    for i, recorded in enumerate(counts):
        at_point = i in points
        tokens = (start if prev is None else prev) + growth[i]
        tokens = tokens if tokens > start else start
        if prev is not None and (
            (at_point and not since_point)
            or prev + (prev_out if with_output else 0) >= compact_at
            or tokens > usable
        ):
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
            kept = round(a.compact_keep * max(prev - a.base_tokens, 0))
            start = a.base_tokens + a.summary_tokens + a.reload_tokens + kept
            tokens = max(start, start + growth[i])
            prev, cold, pending, since_point = None, True, 0, True
            if rereads is not None:
                rereads.restart()
            if masking is not None:
                masking.restart()
        if at_point:
            since_point = False
        # Most requests carry nothing: what the cache holds, without a call.
        tokens, added, cached, rebuilt = (
            _carry(
                _Before(i, tokens, prev, prev_out, pending, window, restarted[i]),
                rows,
                chain,
                masking,
                one_hour_default,
            )
            if pending or masking is not None
            else (tokens, 0, prev or 0, restarted[i])
        )
        if tokens > usable:
            tokens, clamped = usable, clamped + 1
        late = expired_at[i]
        expired += late
        cache = _Cache(cold, late, rebuilt, cached)
        append(_recorded(recorded, i, tokens, window, warm, one_hour_default, cache, added))
        prev, prev_out, cold = tokens, recorded.output, False
        pending = rereads.after(i) if rereads is not None else 0
        if masking is not None:
            masking.record(i, tokens)
    return _result(
        policy,
        rows,
        prices,
        chain.models,
        compactions=compactions,
        clamped=clamped,
        expired=expired,
        rereads=rereads,
        masking=masking,
    )


# Enum members bound to module names: attribute lookups on an enum class are slow on
# Python 3.11, and the handoff replay makes two or three per request.
_ROLLOVER = Action.ROLLOVER
_WARN = Action.WARN
_HANDOFF = Stage.HANDOFF


def _replay_handoff(  # noqa: PLR0917 - the replay's inputs, one call per policy
    chain: Chain,
    a: Assumptions,
    policy: Policy,
    prices: Pricer | None,
    rereads: Rereads | None,
    masking: Masking | None = None,
) -> ReplayResult:
    assert policy.threshold is not None
    budget = Budget(a.limit, a.output_reserve, policy.threshold)
    growth = chain.growth
    counts = chain.counts
    restarted = _restarts(chain.segments)
    expired_at = chain.expired(a.cache_ttl_seconds)
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
    rollovers = forced = warnings = handoffs = clamped = expired = 0
    pending = 0  # tokens to read again before the next request

    def new_window() -> None:
        nonlocal window, start, prev, cold, due, pending
        window += 1
        start, prev, cold, due, pending = fresh_start, None, True, None, 0
        claimed.clear()
        if rereads is not None:
            rereads.restart()
        if masking is not None:
            masking.restart()

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
        # Most requests carry nothing: what the cache holds, without a call.
        tokens, added, cached, rebuilt = (
            _carry(
                _Before(i, tokens, prev, prev_out, pending, window, restarted[i]),
                rows,
                chain,
                masking,
                one_hour_default,
            )
            if pending or masking is not None
            else (tokens, 0, prev or 0, restarted[i])
        )
        decision = evaluate(budget, tokens, advisory_tokens=advisory, claimed=claimed)
        if decision.action is _ROLLOVER:
            forced += 1
            new_window()
            added = cached = 0
            tokens = max(start, start + growth[i])
            if tokens > usable:
                tokens, clamped = usable, clamped + 1
            decision = evaluate(budget, tokens, advisory_tokens=advisory, claimed=claimed)
        if decision.action is _WARN and decision.stage is not None:
            claimed.add(decision.stage)
            tokens += advisory
            added += advisory
            if decision.stage is _HANDOFF:
                handoffs += 1
                due = a.handoff_lag
            else:
                warnings += 1
        late = expired_at[i]
        expired += late
        cache = _Cache(cold, late, rebuilt, cached)
        append(_recorded(recorded, i, tokens, window, warm, one_hour_default, cache, added))
        prev, prev_out, cold = tokens, recorded.output, False
        pending = rereads.after(i) if rereads is not None else 0
        if masking is not None:
            masking.record(i, tokens)
    return _result(
        policy,
        rows,
        prices,
        chain.models,
        masking=masking,
        rollovers=rollovers,
        forced_rollovers=forced,
        warnings=warnings,
        handoff_requests=handoffs,
        clamped=clamped,
        expired=expired,
        rereads=rereads,
    )

"""Sessions found on disk, measured, priced and replayed; the ``--json`` of ``docs/contracts.md``.

What is counted where (``docs/analyze.md`` has the same in words):

* A **session** is a session file (``<project>/<id>.jsonl``) with the files of its
  folder (``<project>/<id>/subagents/agent-*.jsonl``): its main chain, its subagents (their
  own files, or the inline sidechain lines of old transcripts) and its compaction
  summaries (``agent-acompact-*.jsonl``).
* A ``subagents/`` folder whose session file is missing is its own row (kind
  ``orphan_subagents``); a file holding sidechain lines only is one too
  (``sidechain_only``). Both are priced like any other.
* A response (``message.id`` with its ``requestId``) present in several files of one run
  counts once, in the earliest session that holds it; ``duplicate_responses`` counts
  those left out of a later one. Synthetic responses are no requests and are
  counted apart (``synthetic_responses``).
* Every response is priced at its own model's prices (:mod:`ctxrelay.analyze._bill`).
* A **Codex rollout** (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``) is a session
  of its own, as ccusage counts it: a thread's later segment (after a revert) and each
  subagent's rollout are separate rows (a subagent's names its ``parent_session_id``),
  its ``project`` is its working directory, and its responses are never deduplicated
  against other files (Codex's response ids are unique to a file only).
"""

from __future__ import annotations

import gc
import heapq
import os
import re
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, NamedTuple

from ctxrelay import transcripts
from ctxrelay.analyze._bill import Bill, Pricer, total_usage
from ctxrelay.analyze._discover import agent_files
from ctxrelay.analyze._mask import result_tokens
from ctxrelay.analyze._parallel import Files, Reader, Reading, read_session, start_reading
from ctxrelay.analyze._policies import DEFAULT_POLICIES, Policy, Sweep
from ctxrelay.analyze._replay import (
    Assumptions,
    Chain,
    ReplayResult,
    gemini_compression,
    measure_assumptions,
    replay,
)
from ctxrelay.analyze._rereads import FileTouch, file_touches
from ctxrelay.analyze._skips import line_skips
from ctxrelay.errors import TranscriptError
from ctxrelay.pricing import DEFAULT_PRICES, PriceTable
from ctxrelay.transcripts import (
    COMPACT_AGENT_PREFIX,
    Compaction,
    Response,
    Touches,
    Transcript,
    Usage,
    read_touches,
    scan_file,
    unpack_touches,
)
from ctxrelay.transcripts._opencode_paths import is_database

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence, Set
    from typing import Any, Literal

    SessionKind = Literal["session", "orphan_subagents", "sidechain_only"]
    """A session file, a ``subagents/`` folder without one, or a file of sidechain lines
    only (a stored ``--db`` session is a ``session``)."""

__all__ = [
    "SWEEP_MARGIN",
    "FlatRegion",
    "SessionReport",
    "SubagentReport",
    "SweepPoint",
    "analyze_paths",
    "analyze_session",
    "analyze_transcript",
    "flat_region",
    "recommend",
    "report_json",
    "short_name",
    "sweep_totals",
    "totals_json",
]

_UUID = re.compile(r"([0-9a-f]{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)


def short_name(name: str) -> str:
    """``name`` with each UUID in it cut to its first 8 characters, as the text report
    shows a session (``258c7280``; a Codex segment keeps its ``_2``)."""
    return _UUID.sub(r"\1", name)


def _total_usage(responses: Iterable[Response]) -> Usage:
    return total_usage(r.usage for r in responses)


def _bill(responses: Iterable[Response], pricer: Pricer) -> Bill:
    return Bill.of(((r.model, r.usage) for r in responses), pricer)


@dataclass(frozen=True, slots=True)
class SubagentReport:
    """One subagent of a session: its own file, or an old transcript's inline lines."""

    agent_id: str
    requests: int
    peak_context_tokens: int
    final_context_tokens: int
    usage: Usage
    model: str | None
    """The model of its latest response (``bill`` has every model it ran)."""
    cost_usd: float | None
    path: str | None = None
    bill: Bill = field(default_factory=Bill)
    responses: tuple[Response, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {
            "agent_id": self.agent_id,
            "requests": self.requests,
            "peak_context_tokens": self.peak_context_tokens,
            "usage": self.usage.as_dict(),
            "model": self.model,
            "cost_usd": _round(self.cost_usd),
        }


@dataclass(frozen=True, slots=True)
class SweepPoint:
    """One slider of a sweep: its cost's range (``cost_usd`` the low end, ``high_usd``
    the high end), its rollovers and its peak."""

    threshold: float
    cost_usd: float | None
    rollovers: int
    forced_rollovers: int
    peak_context_tokens: int
    high_usd: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "cost_usd": _round(self.cost_usd),
            "range_usd": (
                None
                if self.cost_usd is None or self.high_usd is None
                else [_round(self.cost_usd), _round(self.high_usd)]
            ),
            "rollovers": self.rollovers,
            "forced_rollovers": self.forced_rollovers,
            "peak_context_tokens": self.peak_context_tokens,
        }


@dataclass(frozen=True, slots=True)
class SessionReport:
    """One session: what it cost as recorded and under each policy replayed."""

    transcript: Transcript
    subagents: tuple[SubagentReport, ...]
    summarizer: tuple[tuple[Response, ...], ...]
    """The summarizer's requests matched to the main chain's compactions (the replay's)."""
    assumptions: Assumptions
    replays: tuple[ReplayResult, ...]
    main: Bill = field(default_factory=Bill)
    """The bill of ``transcript.responses``."""
    summaries: Bill = field(default_factory=Bill)
    """Every compaction summary request of the session, matched to a compaction or not."""
    summary_responses: tuple[Response, ...] = ()
    loose_summaries: Bill = field(default_factory=Bill)
    """Summary requests matched to no compaction of the chain (the replays leave them as
    recorded)."""
    sweep: tuple[SweepPoint, ...] = ()
    sweep_spec: Sweep | None = None
    kind: SessionKind = "session"
    project: str | None = None
    synthetic_responses: int = 0
    duplicate_responses: int = 0
    label: str | None = None
    """The session's name when another session of the run has the same id (an old-style
    ``agent-*.jsonl`` carries its parent's id): its file's name, else its project and
    file. ``None``: the id names it alone."""
    chain: Chain | None = field(default=None, repr=False, compare=False)
    """``transcript.responses`` as the replays read them (:class:`Chain`: their peak and
    times, taken once)."""
    total: Bill = field(init=False, repr=False, compare=False)
    """Main chain + compaction summaries + subagents, per model (derived once: the
    report and the totals read it several times)."""

    def __post_init__(self) -> None:
        bill = self.main + self.summaries
        for agent in self.subagents:
            bill = bill + agent.bill
        object.__setattr__(self, "total", bill)

    @property
    def empty(self) -> bool:
        """Nothing was ever sent: no request, no compaction, no subagent (a file Claude
        Code left with snapshots only, or a JSONL file that is not a transcript)."""
        t = self.transcript
        return not (t.requests or t.compactions or self.subagents or self.summaries.requests)

    @property
    def session_id(self) -> str:
        name = os.path.basename(self.transcript.path)
        return self.transcript.session_id or os.path.splitext(name)[0]

    @property
    def name(self) -> str:
        """The session's name, unique in the run: its id, or :attr:`label`."""
        return self.label or self.session_id

    @property
    def main_cost_usd(self) -> float | None:
        return self.main.cost_usd

    @property
    def summarizer_usage(self) -> Usage:
        """The usage of the summaries matched to compactions (what ``none`` replays)."""
        return _total_usage(r for group in self.summarizer for r in group)

    @property
    def subagents_cost_usd(self) -> float | None:
        total = 0.0
        for agent in self.subagents:
            if agent.cost_usd is None:
                return None
            total += agent.cost_usd
        return total

    @property
    def summarizer_cost_usd(self) -> float | None:
        return self.summaries.cost_usd

    @property
    def cost_usd(self) -> float | None:
        """Everything the session spent, each response at its own model's prices;
        ``None`` when a model of it has no price (``unpriced_models`` names it)."""
        return self.total.cost_usd

    @property
    def unpriced_models(self) -> tuple[str, ...]:
        return self.total.unpriced_models

    @property
    def outside_chain_cost_usd(self) -> float | None:
        """What no main-chain policy changes: the subagents, and summaries not matched to
        a compaction of the chain. A policy's whole-session cost is its replay plus this."""
        agents = self.subagents_cost_usd
        loose = self.loose_summaries.cost_usd
        return None if agents is None or loose is None else agents + loose

    def policy_total(self, result: ReplayResult) -> float | None:
        """A replayed policy's cost for the whole session (its main chain replayed, the
        rest as recorded)."""
        outside = self.outside_chain_cost_usd
        if result.cost_usd is None or outside is None:
            return None
        return result.cost_usd + outside

    def _chain(self) -> Chain | None:
        """:attr:`chain`, when it was read from this report's transcript."""
        chain = self.chain
        return chain if chain is not None and chain.responses is self.transcript.responses else None

    @property
    def timestamps(self) -> tuple[str | None, str | None]:
        """The first and last response time over every part of the session."""
        chain = self._chain()
        main = self.transcript.responses if chain is None else ()
        stamps = [
            r.timestamp
            for r in (
                *main,
                *self.summary_responses,
                *(r for a in self.subagents for r in a.responses),
            )
            if r.timestamp
        ]
        if chain is not None:
            stamps += [s for s in (chain.first, chain.last) if s]
        return (min(stamps), max(stamps)) if stamps else (None, None)

    @property
    def affected(self) -> bool:
        """Whether any slider swept reached its handoff target in this session (if none
        did, every slider costs the same, a forced rollover at the usable limit too, and
        none is recommended)."""
        return any(p.rollovers for p in self.sweep)

    def region(self) -> FlatRegion | None:
        """The sweep's flat region for this session; ``None`` when it is not affected."""
        return flat_region(self.sweep) if self.affected else None

    def recommended(self) -> SweepPoint | None:
        found = self.region()
        return None if found is None else found.middle

    def as_json(self) -> dict[str, Any]:
        t = self.transcript
        chain = self._chain()
        first, last = self.timestamps
        whatif: dict[str, Any] = {
            "assumptions": self.assumptions.as_dict(),
            "policies": [
                {**r.as_dict(), "session_cost_usd": _round(self.policy_total(r))}
                for r in self.replays
            ],
            "cost_breakdown_usd": {
                "main": _round(self.main_cost_usd),
                "compaction_summaries": _round(self.summarizer_cost_usd),
                "subagents": _round(self.subagents_cost_usd),
            },
            "unpriced_models": list(self.unpriced_models),
        }
        if self.sweep_spec is not None:
            whatif["sweep"] = {
                "from": self.sweep_spec.start,
                "to": self.sweep_spec.stop,
                "step": self.sweep_spec.step,
                "points": [p.as_dict() for p in self.sweep],
                "affected": self.affected,
                **_region_json(self.region()),
            }
        return {
            "session_id": self.session_id,
            "name": self.name,
            "kind": self.kind,
            "format": t.format,
            "parent_session_id": t.parent_id,
            "project": self.project,
            "path": t.path,
            "first_timestamp": first,
            "last_timestamp": last,
            "model": t.model,
            "requests": t.requests,
            "peak_context_tokens": t.peak_context_tokens if chain is None else chain.peak,
            "final_context_tokens": (
                t.final_context_tokens if chain is None else (chain.context or [0])[-1]
            ),
            "compactions": [{"pre_tokens": c.pre_tokens} for c in t.compactions],
            "usage": self.main.usage.as_dict(),  # = t.usage, summed per model once
            "total": self.total.as_json(),
            "cost_usd": _round(self.cost_usd),
            # what the agent priced it at itself, where it records that (OpenCode)
            "recorded_cost_usd": _round(t.recorded_cost_usd),
            "synthetic_responses": self.synthetic_responses,
            "duplicate_responses": self.duplicate_responses,
            "subagents": [s.as_json() for s in self.subagents],
            "whatif": whatif,
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


SWEEP_MARGIN = 0.03
"""How far above the best a slider's high estimate may be and still count as as good:
the sweep's bottom is flat and jagged (neighbouring sliders differ by a few percent per
session, and the best one moves with the step), so it names a region, not a point."""


@dataclass(frozen=True, slots=True)
class FlatRegion:
    """The sliders of a sweep as good as the best within ``margin``: ``best`` has the
    lowest high estimate, ``low``..``high`` is the run of neighbouring sliders around it
    whose high estimates are within ``margin`` of it, ``middle`` the slider in its
    middle (what ``--apply`` writes)."""

    low: float
    high: float
    middle: SweepPoint
    best: SweepPoint
    margin: float = SWEEP_MARGIN

    def __contains__(self, threshold: float) -> bool:
        return self.low <= threshold <= self.high


def _high(p: SweepPoint) -> float:
    """A priced slider's high estimate."""
    low = p.cost_usd or 0.0
    return low if p.high_usd is None else max(low, p.high_usd)


def flat_region(points: Sequence[SweepPoint], margin: float = SWEEP_MARGIN) -> FlatRegion | None:
    """The flat region of a sweep (:class:`FlatRegion`); ``None`` when no slider was
    priced. Ties go to the higher slider (fewer rollovers)."""
    priced = sorted((p for p in points if p.cost_usd is not None), key=lambda p: p.threshold)
    if not priced:
        return None
    best = min(priced, key=lambda p: (round(_high(p), 6), -p.threshold))
    bound = round(_high(best) * (1 + margin), 6)
    lo = hi = priced.index(best)
    while lo > 0 and round(_high(priced[lo - 1]), 6) <= bound:
        lo -= 1
    while hi + 1 < len(priced) and round(_high(priced[hi + 1]), 6) <= bound:
        hi += 1
    first, last = priced[lo].threshold, priced[hi].threshold
    centre = (first + last) / 2
    middle = min(priced[lo : hi + 1], key=lambda p: (abs(p.threshold - centre), -p.threshold))
    return FlatRegion(first, last, middle, best, margin)


def recommend(points: Sequence[SweepPoint]) -> SweepPoint | None:
    """The slider in the middle of the sweep's flat region (:func:`flat_region`)."""
    found = flat_region(points)
    return None if found is None else found.middle


def _region_json(found: FlatRegion | None) -> dict[str, Any]:
    middle = None if found is None else found.middle
    return {
        "recommended_threshold": None if middle is None else middle.threshold,
        "recommended_region": None if found is None else [found.low, found.high],
        "recommended_cost_usd": None if middle is None else _round(middle.cost_usd),
        "recommended_range_usd": (
            None if middle is None else [_round(middle.cost_usd), _round(_high(middle))]
        ),
        "margin": SWEEP_MARGIN,
    }


def _summarizer_groups(
    compactions: Sequence[Compaction], files: Sequence[Sequence[Response]]
) -> tuple[tuple[Response, ...], ...]:
    """Recorded summarizer requests, matched to compactions in order of time."""
    ordered = sorted(
        (f for f in files if f),
        key=lambda f: f[0].timestamp or "",
    )
    groups = [tuple(f) for f in ordered]
    return tuple(groups[: len(compactions)]) if compactions else ()


def _subagent(
    agent_id: str, responses: Sequence[Response], pricer: Pricer, path: str | None
) -> SubagentReport:
    bill = _bill(responses, pricer)
    return SubagentReport(
        agent_id=agent_id,
        requests=len(responses),
        peak_context_tokens=max((r.context_tokens for r in responses), default=0),
        final_context_tokens=responses[-1].context_tokens if responses else 0,
        usage=bill.usage,  # the responses' sum, summed per model once
        model=next((r.model for r in reversed(responses) if r.model), None),
        cost_usd=bill.cost_usd,
        path=path,
        bill=bill,
        responses=tuple(responses),
    )


class _Seen:
    """Responses already counted in this run, keyed by ``message.id`` and request id."""

    __slots__ = ("keys",)

    def __init__(self) -> None:
        self.keys: set[str] = set()

    def fresh(self, transcript: Transcript) -> tuple[Transcript, int]:
        """``transcript`` without the responses an earlier file of the run holds (its
        compactions re-counted against the chain that remains), and how many left."""
        ids = transcript.request_ids
        keys = self.keys
        dropped = 0

        def keep(responses: Sequence[Response]) -> Sequence[Response]:
            nonlocal dropped
            get = ids.get
            new = [f"{r.message_id}:{get(r.message_id, '')}" for r in responses]
            unique = set(new)
            if len(unique) == len(new) and keys.isdisjoint(unique):
                keys.update(unique)  # the common case: nothing seen before, no repeat
                return responses
            kept = []
            for r, key in zip(responses, new, strict=True):
                if key in keys:
                    dropped += 1
                    continue
                keys.add(key)
                kept.append(r)
            return kept

        main = keep(transcript.responses)
        side = keep(transcript.sidechain_responses)
        if not dropped:
            return transcript, 0
        kept_ids = {r.message_id for r in main}
        before = [0]
        for r in transcript.responses:
            before.append(before[-1] + (r.message_id in kept_ids))
        compactions = tuple(
            replace(c, after_requests=before[min(c.after_requests, len(transcript.responses))])
            for c in transcript.compactions
        )
        return (
            replace(
                transcript,
                responses=tuple(main),
                sidechain_responses=tuple(side),
                compactions=compactions,
            ),
            dropped,
        )


def _project(path: str) -> str | None:
    parent = os.path.basename(os.path.dirname(path))
    return parent or None


def _empty_transcript(folder: str) -> Transcript:
    return Transcript(path=folder, session_id=os.path.basename(folder), version=None, responses=())


def analyze_session(
    path: str | os.PathLike[str],
    *,
    policies: Sequence[Policy] = DEFAULT_POLICIES,
    sweep: Sweep | None = None,
    prices: PriceTable = DEFAULT_PRICES,
    limit: int | None = None,
    warm_prefix: bool = False,
    scanned: dict[str, Transcript] | None = None,
    seen: _Seen | None = None,
    pricer: Pricer | None = None,
    skip: frozenset[str] = frozenset(),
    agents: Sequence[str] | None = None,
) -> SessionReport:
    """Measure, price and replay one session file (with its subagent files), or an
    orphan session folder (its subagent files alone).

    ``scanned`` holds files already read (a parallel pass); ``seen`` the responses
    earlier sessions of the run counted; agent files in ``skip`` could not be read;
    ``agents`` are the session's agent files when they are listed already
    (:func:`~ctxrelay.analyze._discover.agent_files`)."""
    session = os.fspath(path)
    pricer = pricer or Pricer(prices)
    seen = seen if seen is not None else _Seen()
    scanned = scanned or {}

    def read(file: str, agent: bool) -> Transcript:
        found = scanned.get(file)
        return found if found is not None else scan_file(file, agent=agent)

    orphan = os.path.isdir(session)
    transcript = _empty_transcript(session) if orphan else read(session, False)
    codex = transcript.format == "codex"
    # A Codex response id is unique to its file only (a revert's segment repeats ids of
    # the thread's first file for other responses): each rollout counts as written.
    transcript, dropped = (transcript, 0) if codex else seen.fresh(transcript)
    # The touches serve this session's replays alone: the report keeps none.
    packed = transcript.touches
    touches: Callable[[], Touches] | None = None
    if packed is not None:
        transcript = replace(transcript, touches=None)
        touches = partial(unpack_touches, packed)  # unpacked when a replay asks
    elif not (codex or orphan):  # a transcript read without them
        touches = partial(read_touches, session)
    synthetic = transcript.synthetic_responses
    subagents: list[SubagentReport] = []
    summary_files: list[tuple[Response, ...]] = []
    for file in agent_files(session) if agents is None else agents:
        if file in skip:
            continue
        agent_id = os.path.splitext(os.path.basename(file))[0][len("agent-") :]
        agent, gone = seen.fresh(read(file, True))
        dropped += gone
        synthetic += agent.synthetic_responses
        if agent_id.startswith(COMPACT_AGENT_PREFIX):
            summary_files.append(agent.responses)
            continue
        subagents.append(_subagent(agent_id, agent.responses, pricer, file))
    # Old transcripts: subagents inline, one group per agent id.
    inline: dict[str, list[Response]] = {}
    for response in transcript.sidechain_responses:
        inline.setdefault(response.agent_id or "sidechain", []).append(response)
    for agent_id, responses in inline.items():
        subagents.append(_subagent(agent_id, responses, pricer, None))
    kind: SessionKind
    if orphan:
        kind = "orphan_subagents"
    elif not transcript.responses and transcript.sidechain_responses:
        kind = "sidechain_only"
    else:
        kind = "session"
    return analyze_transcript(
        transcript,
        subagents=subagents,
        summary_files=summary_files,
        policies=policies,
        sweep=sweep,
        prices=prices,
        limit=limit,
        warm_prefix=warm_prefix,
        pricer=pricer,
        kind=kind,
        project=(transcript.cwd or None) if codex else _project(session),
        synthetic_responses=synthetic,
        duplicate_responses=dropped,
        touches=touches,
    )


def analyze_transcript(
    transcript: Transcript,
    *,
    subagents: Sequence[SubagentReport] = (),
    summary_files: Sequence[Sequence[Response]] = (),
    policies: Sequence[Policy] = DEFAULT_POLICIES,
    sweep: Sweep | None = None,
    prices: PriceTable = DEFAULT_PRICES,
    limit: int | None = None,
    output_reserve: int | None = None,
    warm_prefix: bool = False,
    pricer: Pricer | None = None,
    kind: SessionKind = "session",
    project: str | None = None,
    synthetic_responses: int = 0,
    duplicate_responses: int = 0,
    touches: Callable[[], Touches] | None = None,
) -> SessionReport:
    """Price and replay a chain already read (a transcript file or a stored session).
    ``summary_files`` holds the responses of each compaction summarizer file;
    ``touches`` gives the chain's file touches, called only when a replay may restart
    (its re-reads make each policy's range: :mod:`ctxrelay.analyze._rereads`)."""
    pricer = pricer or Pricer(prices)
    model = transcript.model
    summarizer = _summarizer_groups(transcript.compactions, summary_files)
    summary_responses = tuple(r for f in summary_files for r in f)
    chain = Chain(transcript.responses)  # read once for every replay below
    assumptions = measure_assumptions(
        transcript.responses, transcript.compactions, model=model, limit=limit, chain=chain
    )
    if transcript.format == "gemini":
        assumptions = gemini_compression(assumptions)
    if output_reserve is not None and 0 <= output_reserve < assumptions.limit:
        assumptions = replace(assumptions, output_reserve=output_reserve)
    if warm_prefix:
        assumptions = replace(assumptions, warm_prefix_tokens=assumptions.prefix_measured)
    touched = _touched(chain, assumptions, policies, sweep, touches)
    # a function and its arguments, not a closure: a report crosses processes
    files_again = partial(_touched_files, chain, assumptions, policies, sweep, touches)
    replays = tuple(
        replay(
            transcript.responses,
            assumptions,
            policy,
            pricer,
            compactions=transcript.compactions,
            summarizer=summarizer,
            chain=chain,
            files=touched.files,
            results=touched.results,
            files_again=files_again,  # the report keeps sums; rows replayed when read
        )
        for policy in policies
    )
    points: list[SweepPoint] = []
    if sweep is not None and transcript.responses:
        for threshold in sweep.thresholds():
            result = replay(
                transcript.responses,
                assumptions,
                Policy("handoff", threshold),
                pricer,
                chain=chain,
                files=touched.files,
            )
            points.append(
                SweepPoint(
                    threshold,
                    result.cost_usd,
                    result.rollovers,
                    result.forced_rollovers,
                    result.peak_context_tokens,
                    result.high_cost_usd,
                )
            )
    matched = {id(r) for group in summarizer for r in group}
    return SessionReport(
        transcript=transcript,
        subagents=tuple(subagents),
        summarizer=summarizer,
        assumptions=assumptions,
        replays=replays,
        main=Bill.of_sum(
            chain.models,
            len(chain.counts),
            chain.usage,
            ((r.model, r.usage) for r in transcript.responses),
            pricer,
        ),
        summaries=_bill(summary_responses, pricer),
        summary_responses=summary_responses,
        loose_summaries=_bill((r for r in summary_responses if id(r) not in matched), pricer),
        sweep=tuple(points),
        sweep_spec=sweep,
        kind=kind,
        project=project,
        synthetic_responses=synthetic_responses,
        duplicate_responses=duplicate_responses,
        chain=chain,
    )


class _Touched(NamedTuple):
    """What the replays read of the chain's tool calls: each response's file touches
    (the re-reads) and the tool-result tokens each request brought (the masks)."""

    files: tuple[tuple[FileTouch, ...], ...] | None = None
    results: tuple[int, ...] | None = None


def _touched(
    chain: Chain,
    assumptions: Assumptions,
    policies: Sequence[Policy],
    sweep: Sweep | None,
    touches: Callable[[], Touches] | None,
) -> _Touched:
    """The chain's tool calls, measured in tokens only when a policy masks or some replay
    may restart where the recording did not: its peak reaches a handoff target or the
    compaction point."""
    if touches is None or not chain.counts:
        return _Touched()
    masks = any(p.mask is not None for p in policies)
    sliders = [p.threshold for p in policies if p.threshold is not None]
    if sweep is not None:
        sliders += sweep.thresholds()
    lowest = min(sliders, default=100.0) * assumptions.limit / 100
    if any(p.kind in ("compact", "mask") for p in policies):
        lowest = min(lowest, assumptions.compact_at)
    restarts = chain.peak >= lowest * 0.9  # a margin for the advisories and the output
    if not (masks or restarts):
        return _Touched()
    found = touches()
    ids = [r.message_id for r in chain.responses]
    outputs = [c.output for c in chain.counts]
    return _Touched(
        file_touches(found, ids, chain.context, outputs, chain.segments) if restarts else None,
        result_tokens(found, ids, chain.context, outputs, chain.segments) if masks else None,
    )


def _touched_files(
    chain: Chain,
    assumptions: Assumptions,
    policies: Sequence[Policy],
    sweep: Sweep | None,
    touches: Callable[[], Touches] | None,
) -> tuple[tuple[FileTouch, ...], ...] | None:
    """The chain's file touches, read again (a replay's rows, when someone reads them)."""
    return _touched(chain, assumptions, policies, sweep, touches).files


def totals_json(reports: Sequence[SessionReport], sweep: Sweep | None) -> dict[str, Any]:
    """Sums over all sessions: the recorded ``total`` (every model, every part), each
    policy's cost, and the sweep's recommendation.

    ``total`` sums every response of the run; its ``cost_usd`` is ``null`` when a model
    has no price (``unpriced_models`` names them). ``cost_usd`` (and each policy's) is
    summed over the sessions that could be priced: ``unpriced_sessions`` counts the
    others, and a sum over no priced session is ``null``, never a claimed 0."""
    by_policy: dict[str, dict[str, Any]] = {}
    for report in reports:
        for result in report.replays:
            entry = by_policy.setdefault(
                str(result.policy),
                {
                    "policy": str(result.policy),
                    "cost_usd": 0.0,
                    "range_usd": [0.0, 0.0],
                    "session_cost_usd": 0.0,
                    "rollovers": 0,
                    "compactions": 0,
                    "sessions": 0,
                },
            )
            whole = report.policy_total(result)
            span = result.range_usd
            if result.cost_usd is not None and whole is not None and span is not None:
                entry["cost_usd"] += result.cost_usd
                entry["range_usd"] = [a + b for a, b in zip(entry["range_usd"], span, strict=True)]
                entry["session_cost_usd"] += whole
                entry["sessions"] += 1
            entry["rollovers"] += result.rollovers + result.forced_rollovers
            entry["compactions"] += result.compactions
    for entry in by_policy.values():
        for key in ("cost_usd", "session_cost_usd"):
            entry[key] = round(entry[key], 6) if entry["sessions"] else None
        entry["range_usd"] = (
            [round(v, 6) for v in entry["range_usd"]] if entry["sessions"] else None
        )
    priced = [r.cost_usd for r in reports if r.cost_usd is not None]
    total = Bill()
    for report in reports:
        total = total + report.total
    out: dict[str, Any] = {
        "sessions": len(reports),
        "requests": sum(r.transcript.requests for r in reports),
        "total": total.as_json(),
        "cost_usd": round(sum(priced), 6) if priced or not reports else None,
        "unpriced_sessions": len(reports) - len(priced),
        "unpriced_models": list(total.unpriced_models),
        "synthetic_responses": sum(r.synthetic_responses for r in reports),
        "duplicate_responses": sum(r.duplicate_responses for r in reports),
        "policies": list(by_policy.values()),
    }
    if sweep is not None:
        affected = [r for r in reports if r.affected]
        points = sweep_totals(affected)
        out["sweep"] = {
            "sessions": len(affected),
            "not_affected": sum(1 for r in reports if r.sweep and not r.affected),
            "points": [p.as_dict() for p in points],
            **_region_json(flat_region(points)),
        }
    return out


def sweep_totals(reports: Sequence[SessionReport]) -> list[SweepPoint]:
    """Each slider's cost summed over the sessions that could be priced."""
    sums: dict[float, list[float | int]] = {}
    for report in reports:
        for p in report.sweep:
            if p.cost_usd is None:
                continue
            acc = sums.setdefault(p.threshold, [0.0, 0, 0, 0, 0.0])
            acc[0] += p.cost_usd
            acc[1] += p.rollovers
            acc[2] += p.forced_rollovers
            acc[3] = max(acc[3], p.peak_context_tokens)
            acc[4] += p.cost_usd if p.high_usd is None else p.high_usd
    return [
        SweepPoint(t, float(v[0]), int(v[1]), int(v[2]), int(v[3]), float(v[4]))
        for t, v in sorted(sums.items())
    ]


def report_json(
    reports: Sequence[SessionReport],
    sweep: Sweep | None = None,
    skipped: Sequence[dict[str, Any]] = (),
) -> dict[str, Any]:
    """The ``ctxrelay analyze --json`` document (``docs/contracts.md``, plus ``totals``,
    and ``skipped``: what :class:`~ctxrelay.analyze._skips.Skips` collected)."""
    return {
        "sessions": [r.as_json() for r in reports],
        "totals": totals_json(reports, sweep),
        "skipped": list(skipped),
    }


def _first_time(session: str, agents: Sequence[str], scanned: dict[str, Transcript]) -> str:
    """The earliest response time of a session's files ("" when none is known)."""
    stamps: list[str] = []
    for file in ([] if os.path.isdir(session) else [session]) + list(agents):
        t = scanned.get(file)
        if t is None:
            continue
        for r in (t.responses[:1], t.sidechain_responses[:1]):
            if r and r[0].timestamp:
                stamps.append(r[0].timestamp)
    return min(stamps, default="")


class _Options(NamedTuple):
    """What every session of a run is analysed with."""

    policies: Sequence[Policy]
    sweep: Sweep | None
    prices: PriceTable
    limit: int | None
    warm_prefix: bool


class _Analysed(NamedTuple):
    """One session read and analysed whole, as if no earlier session of the run held its
    responses (what a worker sends back)."""

    session: str
    failed: dict[str, TranscriptError]
    """Its files that could not be read."""
    skips: list[TranscriptError]
    """The lines skipped in the files read (:func:`~ctxrelay.analyze._skips.line_skips`)."""
    first: str = ""
    """Its earliest response time: the run's order."""
    report: SessionReport | TranscriptError | None = None
    """Its report, or what stopped it (an agent file gone since the listing); ``None``
    when its session file could not be read."""
    keys: Set[str] = frozenset()
    """The responses it counted (:class:`_Seen`'s keys)."""


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused, as it was after: a run's values (the
    transcripts, the reports) hold no cycles, and at 1 GB the collector's passes over
    them, as they are made and received, were about 7% of the run's CPU time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _analyse(options: _Options, session: str, files: Files, read: Reader) -> _Analysed:
    """Read one session's files and analyse it (in a worker: a module's function, so
    that it pickles)."""
    with _collector_paused():
        return _analysed(options, session, files, read)


def _analysed(options: _Options, session: str, files: Files, read: Reader) -> _Analysed:
    scanned, failed = read_session(files, read)
    skips = line_skips(scanned.values())
    if session in failed:
        return _Analysed(session, failed, skips)
    agents = [path for path, agent in files if agent]
    first = _first_time(session, agents, scanned)
    seen = _Seen()
    try:
        report = analyze_session(
            session,
            **options._asdict(),
            scanned=scanned,
            seen=seen,
            skip=frozenset(failed),
            agents=agents,
        )
    except TranscriptError as exc:  # an agent file gone since the listing
        return _Analysed(session, failed, skips, first, exc)
    return _Analysed(session, failed, skips, first, report, seen.keys)


def analyze_paths(
    paths: Iterable[str | os.PathLike[str]],
    *,
    policies: Sequence[Policy] = DEFAULT_POLICIES,
    sweep: Sweep | None = None,
    prices: PriceTable = DEFAULT_PRICES,
    limit: int | None = None,
    warm_prefix: bool = False,
    progress: Callable[[str], None] | None = None,
    named: Iterable[str] = (),
    on_skip: Callable[[str, Exception], None] | None = None,
    workers: int | None = None,
    reading: Reading | None = None,
) -> list[SessionReport]:
    """Every session under ``paths`` that sent a request (and every file in ``named``,
    even one that did not), in order of their first response.

    Each session is read and analysed whole (on every core when the run is big enough;
    ``workers`` overrides; ``reading`` is
    :func:`~ctxrelay.analyze._parallel.start_reading` of ``paths``), as if no other
    session held its responses; then, oldest first, a
    session that holds a response an earlier one counted is analysed again here
    without it, so a response present in several files counts in the earliest session
    that holds it.
    A file that cannot be read is passed to ``on_skip`` (raised when there is none or
    when it is in ``named``), and so is each file read with lines over the line cap or
    not JSON (:func:`~ctxrelay.analyze._skips.line_skips`)."""
    options = _Options(policies, sweep, prices, limit, warm_prefix)
    if reading is None:
        reading = start_reading(paths, workers=workers)
    try:
        with _collector_paused():
            found = {a.session: a for a in reading.each(partial(_analyse, options))}
    finally:
        reading.close()
    sessions = [found[s] for s in reading.files]  # in the order of the files
    keep = set(named)
    for path, exc in ((p, e) for a in sessions for p, e in a.failed.items()):
        if path in keep or on_skip is None:
            raise exc
        on_skip(path, exc)
    if on_skip is not None:
        for skip in (skip for a in sessions for skip in a.skips):
            on_skip(skip.path, skip)
    read = [a for a in sessions if a.session not in a.failed]
    pricer = Pricer(prices)
    seen = _Seen()
    reports = []
    for analysed in sorted(read, key=lambda a: (a.first, a.session)):
        session, report = analysed.session, analysed.report
        if isinstance(report, SessionReport):
            if seen.keys.isdisjoint(analysed.keys):
                seen.keys |= analysed.keys
            else:
                # An earlier session holds some of its responses (a resumed session that
                # copied them): analysed again here without them, its files read again.
                report = _again(analysed, reading.files[session], options, seen, pricer)
        if isinstance(report, TranscriptError):
            if session in keep or on_skip is None:
                raise report
            on_skip(session, report)
            continue
        if report is not None and (not report.empty or session in keep):
            reports.append(report)
        if progress is not None:
            progress(session)
    databases = [s for s in reading.sessions if is_database(s)]
    opencode = _opencode_reports(
        databases,
        on_skip=on_skip,
        policies=policies,
        sweep=sweep,
        prices=prices,
        limit=limit,
        warm_prefix=warm_prefix,
        pricer=pricer,
    )
    if opencode:
        reports = list(heapq.merge(reports, opencode, key=_first_stamp))
    return named_apart(reports)


def _again(
    analysed: _Analysed, files: Files, options: _Options, seen: _Seen, pricer: Pricer
) -> SessionReport | TranscriptError:
    """A session analysed again without the responses earlier sessions counted."""
    try:
        return analyze_session(
            analysed.session,
            **options._asdict(),
            seen=seen,
            pricer=pricer,
            skip=frozenset(analysed.failed),
            agents=[path for path, agent in files if agent],
        )
    except TranscriptError as exc:  # a file gone since
        return exc


def _first_stamp(report: SessionReport) -> str:
    return report.timestamps[0] or ""


def _opencode_reports(
    databases: Sequence[str],
    *,
    on_skip: Callable[[str, Exception], None] | None,
    pricer: Pricer,
    **replay: Any,
) -> list[SessionReport]:
    """Each session of each OpenCode database that sent a request, oldest first; a
    database that cannot be read is passed to ``on_skip`` (raised when there is none)."""
    reports = []
    for database in databases:
        try:
            # the package loads the reader (and sqlite3) on first use: a run over
            # transcripts alone never does
            sessions = transcripts.read_opencode(database)
        except TranscriptError as exc:
            if on_skip is None:
                raise
            on_skip(database, exc)
            continue
        for session in sessions:
            t = session.transcript
            report = analyze_transcript(
                t,
                summary_files=session.summaries,
                pricer=pricer,
                project=t.cwd,
                **replay,
            )
            if not report.empty:
                reports.append(report)
    return sorted(reports, key=_first_stamp)


def named_apart(reports: Sequence[SessionReport]) -> list[SessionReport]:
    """``reports`` with a :attr:`~SessionReport.label` on each session whose id another
    one shares, so that every row of a run has a name of its own: the file's name, or
    the project's and the file's when even those are alike."""

    def stem(r: SessionReport) -> str:
        return os.path.splitext(os.path.basename(r.transcript.path))[0]

    shared = {k for k, n in Counter(r.session_id for r in reports).items() if n > 1}
    if not shared:
        return list(reports)
    out = [
        r if r.session_id not in shared or stem(r) == r.session_id else replace(r, label=stem(r))
        for r in reports
    ]
    alike = {k for k, n in Counter(r.name for r in out).items() if n > 1}
    return [
        replace(r, label=f"{r.project or '?'}/{stem(r)}") if r.name in alike else r for r in out
    ]

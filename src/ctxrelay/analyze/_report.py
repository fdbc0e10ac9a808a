"""Sessions found on disk, measured, priced and replayed; the ``--json`` of docs/contracts.md."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ctxrelay.analyze._policies import DEFAULT_POLICIES, Policy, Sweep
from ctxrelay.analyze._replay import Assumptions, ReplayResult, measure_assumptions, replay
from ctxrelay.errors import ConfigError
from ctxrelay.pricing import DEFAULT_PRICES, Prices, PriceTable, cost
from ctxrelay.transcripts import (
    COMPACT_AGENT_PREFIX,
    Compaction,
    Response,
    Transcript,
    Usage,
    scan,
)

__all__ = [
    "SessionReport",
    "SubagentReport",
    "SweepPoint",
    "agent_files",
    "analyze_paths",
    "analyze_session",
    "analyze_transcript",
    "default_projects_dir",
    "discover",
    "recommend",
    "report_json",
    "sweep_totals",
    "totals_json",
]


def default_projects_dir() -> Path:
    """Where Claude Code keeps its transcripts: ``$CLAUDE_CONFIG_DIR/projects`` or
    ``~/.claude/projects``."""
    config = os.environ.get("CLAUDE_CONFIG_DIR")
    root = Path(config).expanduser() if config else Path.home() / ".claude"
    return root / "projects"


def _is_agent_file(path: Path) -> bool:
    return path.parent.name == "subagents" and path.name.startswith("agent-")


def discover(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Session transcripts under ``paths`` (files or directories, searched recursively),
    sorted, without the subagent files (they are read with their session)."""
    found: dict[Path, None] = {}
    for raw in paths:
        path = Path(raw).expanduser()
        if path.is_file():
            found[path] = None
        elif path.is_dir():
            for candidate in sorted(path.rglob("*.jsonl")):
                if candidate.is_file() and not _is_agent_file(candidate):
                    found[candidate] = None
        elif path.exists():
            raise ConfigError(f"{os.fspath(raw)!r} is not a regular file or a directory")
        else:
            raise ConfigError(f"no transcript or directory at {os.fspath(raw)!r}")
    return list(found)


def agent_files(session: Path) -> list[Path]:
    """``<dir>/<session>/subagents/agent-*.jsonl`` of a session file."""
    folder = session.parent / session.stem / "subagents"
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("agent-*.jsonl") if p.is_file())


@dataclass(frozen=True, slots=True)
class SubagentReport:
    agent_id: str
    requests: int
    peak_context_tokens: int
    final_context_tokens: int
    usage: Usage
    model: str | None
    cost_usd: float | None
    path: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "agent_id": self.agent_id,
            "requests": self.requests,
            "peak_context_tokens": self.peak_context_tokens,
            "usage": self.usage.as_dict(),
        }


@dataclass(frozen=True, slots=True)
class SweepPoint:
    threshold: float
    cost_usd: float | None
    rollovers: int
    forced_rollovers: int
    peak_context_tokens: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "threshold": self.threshold,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
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
    prices: Prices | None
    assumptions: Assumptions
    replays: tuple[ReplayResult, ...]
    sweep: tuple[SweepPoint, ...] = ()
    sweep_spec: Sweep | None = None
    unpriced_models: tuple[str, ...] = field(default=())

    @property
    def empty(self) -> bool:
        """Nothing was ever sent: no request, no compaction, no subagent (a file Claude
        Code left with snapshots only, or a JSONL file that is not a transcript)."""
        t = self.transcript
        return not (t.requests or t.compactions or self.subagents)

    @property
    def session_id(self) -> str:
        return self.transcript.session_id or Path(self.transcript.path).stem

    @property
    def main_cost_usd(self) -> float | None:
        if self.prices is None:
            return None
        return sum(cost(r.usage, self.prices) for r in self.transcript.responses)

    @property
    def summarizer_usage(self) -> Usage:
        total = Usage()
        for group in self.summarizer:
            for response in group:
                total = total + response.usage
        return total

    @property
    def subagents_cost_usd(self) -> float:
        return sum(s.cost_usd or 0.0 for s in self.subagents)

    @property
    def summarizer_cost_usd(self) -> float | None:
        if self.prices is None:
            return None
        prices = self.prices
        return sum(cost(r.usage, prices) for group in self.summarizer for r in group)

    @property
    def cost_usd(self) -> float | None:
        """Everything the session spent: its main chain, its compaction summaries and
        its subagents (each at its own model's prices)."""
        main, summaries = self.main_cost_usd, self.summarizer_cost_usd
        if main is None or summaries is None:
            return None
        return main + summaries + self.subagents_cost_usd

    def recommended(self) -> SweepPoint | None:
        return recommend(self.sweep)

    def as_json(self) -> dict[str, Any]:
        t = self.transcript
        whatif: dict[str, Any] = {
            "assumptions": self.assumptions.as_dict(),
            "policies": [r.as_dict() for r in self.replays],
            "cost_breakdown_usd": {
                "main": _round(self.main_cost_usd),
                "compaction_summaries": _round(self.summarizer_cost_usd),
                "subagents": _round(self.subagents_cost_usd),
            },
            "unpriced_models": list(self.unpriced_models),
        }
        if self.sweep_spec is not None:
            best = self.recommended()
            whatif["sweep"] = {
                "from": self.sweep_spec.start,
                "to": self.sweep_spec.stop,
                "step": self.sweep_spec.step,
                "points": [p.as_dict() for p in self.sweep],
                "recommended_threshold": None if best is None else best.threshold,
                "recommended_cost_usd": None if best is None else _round(best.cost_usd),
            }
        return {
            "session_id": self.session_id,
            "path": t.path,
            "model": t.model,
            "requests": t.requests,
            "peak_context_tokens": t.peak_context_tokens,
            "final_context_tokens": t.final_context_tokens,
            "compactions": [{"pre_tokens": c.pre_tokens} for c in t.compactions],
            "usage": t.usage.as_dict(),
            "cost_usd": _round(self.cost_usd),
            "subagents": [s.as_json() for s in self.subagents],
            "whatif": whatif,
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def recommend(points: Sequence[SweepPoint]) -> SweepPoint | None:
    """The cheapest slider; on a tie the higher one (fewer rollovers)."""
    priced = [p for p in points if p.cost_usd is not None]
    if not priced:
        return None
    return min(priced, key=lambda p: (round(p.cost_usd or 0.0, 6), -p.threshold))


def _summarizer_groups(
    compactions: Sequence[Compaction], files: Sequence[Transcript]
) -> tuple[tuple[Response, ...], ...]:
    """Recorded summarizer requests, matched to compactions in order of time."""
    ordered = sorted(
        (f for f in files if f.responses),
        key=lambda f: f.responses[0].timestamp or "",
    )
    groups = [tuple(f.responses) for f in ordered]
    return tuple(groups[: len(compactions)]) if compactions else ()


def _subagent(
    agent_id: str, responses: Sequence[Response], table: PriceTable, path: str | None
) -> SubagentReport:
    usage = Usage()
    for r in responses:
        usage = usage + r.usage
    model = next((r.model for r in reversed(responses) if r.model), None)
    prices = table.lookup(model)
    return SubagentReport(
        agent_id=agent_id,
        requests=len(responses),
        peak_context_tokens=max((r.context_tokens for r in responses), default=0),
        final_context_tokens=responses[-1].context_tokens if responses else 0,
        usage=usage,
        model=model,
        cost_usd=None if prices is None else sum(cost(r.usage, prices) for r in responses),
        path=path,
    )


def analyze_session(
    path: str | os.PathLike[str],
    *,
    policies: Sequence[Policy] = DEFAULT_POLICIES,
    sweep: Sweep | None = None,
    prices: PriceTable = DEFAULT_PRICES,
    limit: int | None = None,
    warm_prefix: bool = False,
) -> SessionReport:
    """Measure, price and replay one session file (with its subagent files)."""
    session = Path(path)
    transcript = scan(session)
    subagents: list[SubagentReport] = []
    summarizers: list[Transcript] = []
    for file in agent_files(session):
        agent_id = file.stem[len("agent-") :]
        agent = scan(file, agent=True)
        if agent_id.startswith(COMPACT_AGENT_PREFIX):
            summarizers.append(agent)
            continue
        subagents.append(_subagent(agent_id, agent.responses, prices, str(file)))
    # Old transcripts: subagents inline, one group per agent id.
    inline: dict[str, list[Response]] = {}
    for response in transcript.sidechain_responses:
        inline.setdefault(response.agent_id or "sidechain", []).append(response)
    for agent_id, responses in inline.items():
        subagents.append(_subagent(agent_id, responses, prices, None))
    return analyze_transcript(
        transcript,
        subagents=subagents,
        summarizers=summarizers,
        policies=policies,
        sweep=sweep,
        prices=prices,
        limit=limit,
        warm_prefix=warm_prefix,
    )


def analyze_transcript(
    transcript: Transcript,
    *,
    subagents: Sequence[SubagentReport] = (),
    summarizers: Sequence[Transcript] = (),
    policies: Sequence[Policy] = DEFAULT_POLICIES,
    sweep: Sweep | None = None,
    prices: PriceTable = DEFAULT_PRICES,
    limit: int | None = None,
    output_reserve: int | None = None,
    warm_prefix: bool = False,
) -> SessionReport:
    """Price and replay a chain already read (a transcript file or a stored session)."""
    model = transcript.model
    session_prices = prices.lookup(model)
    unpriced = sorted(
        {m for m in [model, *(s.model for s in subagents)] if m and prices.lookup(m) is None}
    )
    summarizer = _summarizer_groups(transcript.compactions, summarizers)
    assumptions = measure_assumptions(
        transcript.responses, transcript.compactions, model=model, limit=limit
    )
    if output_reserve is not None and 0 <= output_reserve < assumptions.limit:
        assumptions = replace(assumptions, output_reserve=output_reserve)
    if warm_prefix:
        assumptions = replace(assumptions, warm_prefix_tokens=assumptions.prefix_measured)
    replays = tuple(
        replay(
            transcript.responses,
            assumptions,
            policy,
            session_prices,
            compactions=transcript.compactions,
            summarizer=summarizer,
        )
        for policy in policies
    )
    points: list[SweepPoint] = []
    if sweep is not None and transcript.responses:
        for threshold in sweep.thresholds():
            result = replay(
                transcript.responses, assumptions, Policy("handoff", threshold), session_prices
            )
            points.append(
                SweepPoint(
                    threshold,
                    result.cost_usd,
                    result.rollovers,
                    result.forced_rollovers,
                    result.peak_context_tokens,
                )
            )
    return SessionReport(
        transcript=transcript,
        subagents=tuple(subagents),
        summarizer=summarizer,
        prices=session_prices,
        assumptions=assumptions,
        replays=replays,
        sweep=tuple(points),
        sweep_spec=sweep,
        unpriced_models=tuple(unpriced),
    )


def totals_json(reports: Sequence[SessionReport], sweep: Sweep | None) -> dict[str, Any]:
    """Sums over all sessions: each policy's cost, and the sweep's recommendation.

    A cost is summed over the sessions that could be priced, as each session sums the
    parts it could price: ``unpriced_sessions`` counts the others (``cost_usd`` null),
    ``unpriced_models`` names the models without a price, and a sum over no priced
    session is ``null``, never a claimed 0."""
    by_policy: dict[str, dict[str, Any]] = {}
    for report in reports:
        for result in report.replays:
            entry = by_policy.setdefault(
                str(result.policy),
                {
                    "policy": str(result.policy),
                    "cost_usd": 0.0,
                    "rollovers": 0,
                    "compactions": 0,
                    "sessions": 0,
                },
            )
            if result.cost_usd is not None:
                entry["cost_usd"] += result.cost_usd
                entry["sessions"] += 1
            entry["rollovers"] += result.rollovers + result.forced_rollovers
            entry["compactions"] += result.compactions
    for entry in by_policy.values():
        entry["cost_usd"] = round(entry["cost_usd"], 6) if entry["sessions"] else None
    priced = [r.cost_usd for r in reports if r.cost_usd is not None]
    out: dict[str, Any] = {
        "sessions": len(reports),
        "requests": sum(r.transcript.requests for r in reports),
        "cost_usd": round(sum(priced), 6) if priced or not reports else None,
        "unpriced_sessions": len(reports) - len(priced),
        "unpriced_models": sorted({m for r in reports for m in r.unpriced_models}),
        "policies": list(by_policy.values()),
    }
    if sweep is not None:
        points = sweep_totals(reports)
        best = recommend(points)
        out["sweep"] = {
            "points": [p.as_dict() for p in points],
            "recommended_threshold": None if best is None else best.threshold,
            "recommended_cost_usd": None if best is None else _round(best.cost_usd),
        }
    return out


def sweep_totals(reports: Sequence[SessionReport]) -> list[SweepPoint]:
    """Each slider's cost summed over the sessions that could be priced."""
    sums: dict[float, list[float | int]] = {}
    for report in reports:
        for p in report.sweep:
            if p.cost_usd is None:
                continue
            acc = sums.setdefault(p.threshold, [0.0, 0, 0, 0])
            acc[0] += p.cost_usd
            acc[1] += p.rollovers
            acc[2] += p.forced_rollovers
            acc[3] = max(acc[3], p.peak_context_tokens)
    return [
        SweepPoint(t, float(v[0]), int(v[1]), int(v[2]), int(v[3])) for t, v in sorted(sums.items())
    ]


def report_json(reports: Sequence[SessionReport], sweep: Sweep | None = None) -> dict[str, Any]:
    """The ``ctxrelay analyze --json`` document (``docs/contracts.md``, plus ``totals``)."""
    return {
        "sessions": [r.as_json() for r in reports],
        "totals": totals_json(reports, sweep),
    }


def analyze_paths(
    paths: Iterable[str | os.PathLike[str]],
    *,
    policies: Sequence[Policy] = DEFAULT_POLICIES,
    sweep: Sweep | None = None,
    prices: PriceTable = DEFAULT_PRICES,
    limit: int | None = None,
    warm_prefix: bool = False,
    progress: Callable[[Path], None] | None = None,
) -> list[SessionReport]:
    """Every session under ``paths`` that sent a request; ``progress`` is called after
    each file."""
    reports = []
    for session in discover(paths):
        report = analyze_session(
            session,
            policies=policies,
            sweep=sweep,
            prices=prices,
            limit=limit,
            warm_prefix=warm_prefix,
        )
        if not report.empty:
            reports.append(report)
        if progress is not None:
            progress(session)
    return reports

"""Reports over many sessions: by session, day, week, month or project, over a date
range, the most expensive first; each row with its recorded cost and the what-if cost of
every replayed policy beside it.

Every request is put in the row of its own time (a session that runs past midnight adds
to two days), recorded or replayed alike: a replayed request carries the time of the
recorded request it stands for, an added one the time of the request before it, and the
parts no main-chain policy changes (subagents, loose summaries) count as recorded under
every policy. Days, weeks (ISO, ``2026-W07``) and months are in the local time zone.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from ctxrelay.analyze._bill import Pricer, usage_json
from ctxrelay.analyze._report import SWEEP_MARGIN, SessionReport, flat_region, sweep_totals
from ctxrelay.errors import ConfigError
from ctxrelay.transcripts import Response, Usage

__all__ = [
    "GROUPINGS",
    "Grouping",
    "Recommendation",
    "ReportRow",
    "group_reports",
    "in_range",
    "parse_when",
    "recommendation",
]

Grouping = Literal["session", "day", "week", "month", "project"]
GROUPINGS: tuple[Grouping, ...] = ("session", "day", "week", "month", "project")
TIME_GROUPINGS = frozenset({"day", "week", "month"})

_RELATIVE = re.compile(r"(\d+)([dw])")
UNKNOWN = "unknown"


def parse_when(text: str, *, now: datetime | None = None, end: bool = False) -> datetime:
    """A ``--since``/``--until`` value: ``YYYY-MM-DD`` or ``YYYYMMDD`` (local midnight;
    with ``end`` the end of that day), an ISO time, or ``Nd``/``Nw`` (that long ago)."""
    raw = text.strip().lower()
    now = now or datetime.now().astimezone()
    relative = _RELATIVE.fullmatch(raw)
    if relative:
        count, unit = int(relative.group(1)), relative.group(2)
        return now - timedelta(days=count * (7 if unit == "w" else 1))
    day = raw.replace("-", "") if re.fullmatch(r"\d{4}-?\d{2}-?\d{2}", raw) else None
    try:
        if day is not None:
            start = datetime.strptime(day, "%Y%m%d").astimezone()
            return start + timedelta(days=1) - timedelta(microseconds=1) if end else start
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ConfigError(
            f"a date must look like 2026-02-10, 20260210, 7d or 4w, got {text!r}"
        ) from None
    return moment if moment.tzinfo else moment.astimezone()


def _moment(stamp: str | None) -> datetime | None:
    if not stamp:
        return None
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.astimezone()).astimezone()


def _key(by: Grouping, moment: datetime | None, report: SessionReport) -> str:
    if by == "session":
        return report.name
    if by == "project":
        return report.project or UNKNOWN
    if moment is None:
        return UNKNOWN
    if by == "day":
        return moment.strftime("%Y-%m-%d")
    if by == "week":
        year, week, _ = moment.isocalendar()
        return f"{year}-W{week:02d}"
    return moment.strftime("%Y-%m")


@dataclass(slots=True)
class _Sum:
    cost: float = 0.0
    priced: bool = True

    def add(self, value: float | None) -> None:
        if value is None:
            self.priced = False
        else:
            self.cost += value

    @property
    def value(self) -> float | None:
        return self.cost if self.priced else None


@dataclass(slots=True)
class ReportRow:
    """One row of a report: a session, a day, a week, a month or a project."""

    key: str
    sessions: set[str] = field(default_factory=set)
    requests: int = 0
    usage: Usage = field(default_factory=Usage)
    recorded: _Sum = field(default_factory=_Sum)
    policies: dict[str, _Sum] = field(default_factory=dict)
    first: str | None = None
    last: str | None = None

    @property
    def cost_usd(self) -> float | None:
        return self.recorded.value

    def policy_cost(self, name: str) -> float | None:
        found = self.policies.get(name)
        return None if found is None else found.value

    def as_json(self) -> dict[str, Any]:
        recorded = self.cost_usd
        policies = []
        for name, total in self.policies.items():
            value = total.value
            policies.append(
                {
                    "policy": name,
                    "cost_usd": None if value is None else round(value, 6),
                    "saved_usd": None
                    if value is None or recorded is None
                    else round(recorded - value, 6),
                }
            )
        return {
            "key": self.key,
            "sessions": len(self.sessions),
            "requests": self.requests,
            "first_timestamp": self.first,
            "last_timestamp": self.last,
            "usage": usage_json(self.usage),
            "cost_usd": None if recorded is None else round(recorded, 6),
            "policies": policies,
        }


def _in(moment: datetime | None, since: datetime | None, until: datetime | None) -> bool:
    if since is None and until is None:
        return True
    if moment is None:
        return False
    return (since is None or moment >= since) and (until is None or moment <= until)


def group_reports(
    reports: Sequence[SessionReport],
    pricer: Pricer,
    *,
    by: Grouping = "session",
    since: datetime | None = None,
    until: datetime | None = None,
    top: int | None = None,
) -> list[ReportRow]:
    """The rows of a report over ``reports``, requests between ``since`` and ``until``.

    Time rows run oldest first, sessions in order of their first request, projects most
    expensive first; with ``top`` the ``top`` most expensive rows, most expensive first.
    """
    rows: dict[str, ReportRow] = {}
    names = [str(r.policy) for r in reports[0].replays] if reports else []

    def row(key: str) -> ReportRow:
        found = rows.get(key)
        if found is None:
            found = rows[key] = ReportRow(key, policies={n: _Sum() for n in names})
        return found

    for report in reports:
        outside = [
            *(r for a in report.subagents for r in a.responses),
            *_loose(report),
        ]
        recorded = [
            *report.transcript.responses,
            *report.summary_responses,
            *(r for a in report.subagents for r in a.responses),
        ]
        for r in recorded:
            moment = _moment(r.timestamp)
            if not _in(moment, since, until):
                continue
            target = row(_key(by, moment, report))
            target.sessions.add(report.name)
            target.requests += 1
            target.usage = target.usage + r.usage
            target.recorded.add(pricer.cost(r.usage, r.model))
            if r.timestamp:
                target.first = min(target.first or r.timestamp, r.timestamp)
                target.last = max(target.last or r.timestamp, r.timestamp)
        for result in report.replays:
            name = str(result.policy)
            items: Iterable[tuple[str | None, str | None, Usage]] = [
                *((q.timestamp, q.model, q.usage) for q in result.requests),
                *((r.timestamp, r.model, r.usage) for r in outside),
            ]
            for stamp, model, usage in items:
                moment = _moment(stamp)
                if not _in(moment, since, until):
                    continue
                row(_key(by, moment, report)).policies[name].add(pricer.cost(usage, model))
    out = list(rows.values())
    if top is not None:
        out.sort(key=lambda r: -(r.cost_usd if r.cost_usd is not None else float("inf")))
        return out[:top]
    if by == "project":
        out.sort(key=lambda r: -(r.cost_usd or 0.0))
    elif by == "session":
        out.sort(key=lambda r: r.first or "")
    else:
        out.sort(key=lambda r: r.key)
    return out


def _loose(report: SessionReport) -> list[Response]:
    matched = {id(r) for group in report.summarizer for r in group}
    return [r for r in report.summary_responses if id(r) not in matched]


def in_range(
    reports: Sequence[SessionReport], since: datetime | None, until: datetime | None
) -> list[SessionReport]:
    """The sessions with at least one request between ``since`` and ``until``."""
    if since is None and until is None:
        return list(reports)
    kept = []
    for report in reports:
        stamps = [
            r.timestamp
            for r in (
                *report.transcript.responses,
                *report.summary_responses,
                *(r for a in report.subagents for r in a.responses),
            )
        ]
        if any(_in(_moment(s), since, until) for s in stamps):
            kept.append(report)
    return kept


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The slider ``--sweep`` recommends and the evidence for it: the middle of the flat
    region (``region``: every slider whose high estimate is within ``margin`` of the
    best), the sessions it affects, the time they span, what their main chains cost as
    recorded and at the slider (``cost_usd`` to ``high_cost_usd``); ``not_affected``
    counts the sessions swept that reached no slider's target."""

    threshold: float
    sessions: int
    first_timestamp: str | None
    last_timestamp: str | None
    recorded_cost_usd: float | None
    cost_usd: float | None
    region: tuple[float, float] = (0.0, 0.0)
    high_cost_usd: float | None = None
    margin: float = SWEEP_MARGIN
    not_affected: int = 0

    @property
    def saved_usd(self) -> float | None:
        if self.recorded_cost_usd is None or self.cost_usd is None:
            return None
        return self.recorded_cost_usd - self.cost_usd

    def as_json(self) -> dict[str, Any]:
        def r(v: float | None) -> float | None:
            return None if v is None else round(v, 6)

        return {
            "threshold": self.threshold,
            "sessions": self.sessions,
            "first_timestamp": self.first_timestamp,
            "last_timestamp": self.last_timestamp,
            "recorded_cost_usd": r(self.recorded_cost_usd),
            "cost_usd": r(self.cost_usd),
            "range_usd": [r(self.cost_usd), r(self.high_cost_usd)],
            "saved_usd": r(self.saved_usd),
            "region": list(self.region),
            "margin": self.margin,
            "not_affected": self.not_affected,
        }


def recommendation(reports: Sequence[SessionReport]) -> Recommendation | None:
    """The middle of the sweep's flat region over the sessions it affects (``None``
    when no session reached any slider's target, or nothing was swept).

    ``recorded_cost_usd`` is the same scope as the sweep's: the main chains with the
    summaries of their compactions, as recorded."""
    swept = [r for r in reports if r.affected]
    found = flat_region(sweep_totals(swept))
    if found is None:
        return None
    best = found.middle
    recorded = 0.0
    priced = True
    for r in swept:
        main, matched = r.main.cost_usd, r.summaries.cost_usd
        loose = r.loose_summaries.cost_usd
        if main is None or matched is None or loose is None:
            priced = False
            continue
        recorded += main + matched - loose
    spans = [r.timestamps for r in swept]
    firsts = [a for a, _ in spans if a]
    lasts = [b for _, b in spans if b]
    return Recommendation(
        threshold=best.threshold,
        sessions=len(swept),
        first_timestamp=min(firsts, default=None),
        last_timestamp=max(lasts, default=None),
        recorded_cost_usd=recorded if priced else None,
        cost_usd=best.cost_usd,
        region=(found.low, found.high),
        high_cost_usd=best.high_usd,
        margin=found.margin,
        not_affected=sum(1 for r in reports if r.sweep and not r.affected),
    )

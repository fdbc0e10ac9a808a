"""Reports: rows by session, day, week, month and project, date ranges, --top, and the
sweep's recommendation with its evidence."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ctxrelay.analyze import Policy, analyze_paths, parse_sweep
from ctxrelay.analyze._bill import Pricer
from ctxrelay.analyze._groups import group_reports, in_range, parse_when, recommendation
from ctxrelay.errors import ConfigError
from ctxrelay.pricing import DEFAULT_PRICES
from tests.conftest import corpus_path
from tests.transcripts._lines import assistant, write

POLICIES = (Policy("none"), Policy("compact"), Policy("handoff", 45))


def _line(message_id: str, stamp: str, read: int, model: str = "claude-opus-4-6") -> object:
    record = assistant(message_id, read=read, created=300, output=100, model=model)
    record["timestamp"] = stamp
    return record


def _local(day: str, hour: int) -> str:
    """An ISO time at ``hour`` o'clock local time on ``day`` (rows use local days)."""
    moment = datetime.strptime(day, "%Y-%m-%d").replace(hour=hour).astimezone()
    return moment.isoformat()


def _two_days(tmp_path: Path) -> Path:
    project = tmp_path / "-home-me-app"
    project.mkdir()
    write(
        project / "a.jsonl",
        [
            _line("a1", _local("2026-02-09", 23), 20_000),
            _line("a2", _local("2026-02-10", 1), 21_000),  # past midnight: the next day
        ],
    )
    other = tmp_path / "-home-me-lib"
    other.mkdir()
    write(other / "b.jsonl", [_line("b1", _local("2026-03-02", 12), 30_000)])
    return tmp_path


def test_every_request_counts_in_the_row_of_its_own_time(tmp_path: Path) -> None:
    reports = analyze_paths([_two_days(tmp_path)], policies=POLICIES)
    pricer = Pricer(DEFAULT_PRICES)
    days = group_reports(reports, pricer, by="day")
    assert [(d.key, d.requests, len(d.sessions)) for d in days] == [
        ("2026-02-09", 1, 1),
        ("2026-02-10", 1, 1),
        ("2026-03-02", 1, 1),
    ]
    months = group_reports(reports, pricer, by="month")
    assert [(m.key, m.requests) for m in months] == [("2026-02", 2), ("2026-03", 1)]
    weeks = group_reports(reports, pricer, by="week")
    assert [w.key for w in weeks] == ["2026-W07", "2026-W10"]
    projects = group_reports(reports, pricer, by="project")
    assert {p.key for p in projects} == {"-home-me-app", "-home-me-lib"}
    # Rows add up to the sessions' costs, recorded and replayed (none is the recording).
    for rows in (days, months, weeks, projects):
        assert sum(r.cost_usd or 0 for r in rows) == pytest.approx(
            sum(r.cost_usd or 0 for r in reports)
        )
        assert sum(r.policy_cost("none") or 0 for r in rows) == pytest.approx(
            sum(r.cost_usd or 0 for r in rows)
        )
        for name in ("compact", "handoff:45"):
            assert sum(r.policy_cost(name) or 0 for r in rows) == pytest.approx(
                sum(rep.policy_total(res) or 0 for rep in reports for res in rep.replays
                    if str(res.policy) == name)
            )  # fmt: skip


def test_a_date_range_keeps_its_requests_and_top_the_most_expensive(tmp_path: Path) -> None:
    reports = analyze_paths([_two_days(tmp_path)], policies=POLICIES)
    pricer = Pricer(DEFAULT_PRICES)
    since, until = parse_when("2026-02-10"), parse_when("2026-02-28", end=True)
    rows = group_reports(reports, pricer, by="day", since=since, until=until)
    assert [r.key for r in rows] == ["2026-02-10"]
    assert [Path(r.transcript.path).name for r in in_range(reports, since, until)] == ["a.jsonl"]
    (top,) = group_reports(reports, pricer, by="session", top=1)
    assert top.key == max(reports, key=lambda r: r.cost_usd or 0).name


def test_dates_relative_and_absolute() -> None:
    now = datetime(2026, 3, 1, 12, tzinfo=UTC)
    assert parse_when("7d", now=now) == now - timedelta(days=7)
    assert parse_when("4w", now=now) == now - timedelta(weeks=4)
    assert parse_when("20260210") == parse_when("2026-02-10")
    end = parse_when("2026-02-10", end=True)
    assert end - parse_when("2026-02-10") == timedelta(days=1, microseconds=-1)
    with pytest.raises(ConfigError, match="2026-02-10, 20260210, 7d or 4w"):
        parse_when("last tuesday")


def test_the_recommendation_carries_its_evidence() -> None:
    root = corpus_path("corpora/claude-code-transcripts")
    sweep = parse_sweep("30..90:10")
    reports = analyze_paths([root], sweep=sweep)
    found = recommendation(reports)
    assert found is not None
    assert found.threshold in sweep.thresholds()
    # The three long sessions reach a slider; the three short ones are not affected.
    assert (found.sessions, found.not_affected) == (3, 3)
    assert found.region[0] <= found.threshold <= found.region[1]
    assert found.first_timestamp is not None
    assert found.last_timestamp is not None
    assert found.first_timestamp < found.last_timestamp
    # The recorded cost is the sweep's scope: main chains with their compaction summaries.
    nones = [
        next(r for r in rep.replays if r.policy.kind == "none") for rep in reports if rep.affected
    ]
    assert found.recorded_cost_usd == pytest.approx(sum(n.cost_usd or 0 for n in nones))
    assert found.cost_usd is not None
    assert found.recorded_cost_usd is not None
    assert found.cost_usd < found.recorded_cost_usd
    assert recommendation(analyze_paths([root])) is None  # nothing swept

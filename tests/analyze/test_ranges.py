"""Each replayed policy's range: re-reads after a restart the recording did not make,
the cache's time to live under every policy, no recorded rewrite copied where the
replay did not restart, ``compact`` placed where the recording compacted."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import pytest

from ctxrelay.analyze import (
    SWEEP_MARGIN,
    Assumptions,
    Policy,
    Sweep,
    SweepPoint,
    analyze_session,
    flat_region,
    measure_assumptions,
    recommend,
    recommendation,
    replay,
)
from ctxrelay.analyze._mask import MASK_PLACEHOLDER_TOKENS
from ctxrelay.analyze._replay import FIVE_MINUTE_TTL_SECONDS, ONE_HOUR_TTL_SECONDS
from ctxrelay.analyze._rereads import REREAD_CALL_TOKENS
from ctxrelay.errors import TranscriptError
from ctxrelay.pricing import DEFAULT_PRICES
from ctxrelay.transcripts import Compaction, Response, Usage, read_touches
from tests.analyze._sessions import START, Session, file_text

BIG, OTHER = "/p/big.py", "/p/other.py"


def _read_early_edit_late(path: Path) -> Path:
    """A session that reads a 40k-token file and a 10k one first, works on to 150k, then
    edits the big file and runs a command naming the small one."""
    s = Session(path)
    s.request(
        20_000,
        tools=[
            ("Read", {"file_path": BIG}, file_text(40_000)),
            ("Read", {"file_path": OTHER}, file_text(10_000)),
        ],
    )
    context = 20_000 + 200 + 50_000
    s.request(context)
    while context < 150_000:
        context += 4_000
        s.request(context, tools=[("Bash", {"command": "ls"}, "a\nb\n")])
    s.request(context + 1_000, tools=[("Edit", {"file_path": BIG, "old_string": "x"}, "ok")])
    s.request(context + 2_000, tools=[("Bash", {"command": "pytest other.py"}, "1 passed")])
    s.request(context + 3_000)
    s.request(context + 4_000)
    return s.write()


def test_the_touches_are_read_per_response(tmp_path: Path) -> None:
    path = _read_early_edit_late(tmp_path / "p" / "s.jsonl")
    touches = read_touches(path)
    first = touches.of("msg_0000")
    assert [(t.kind, t.path) for t in first] == [("read", BIG), ("read", OTHER)]
    assert first[0].result_bytes > 3 * first[1].result_bytes
    kinds = [t.kind for v in touches.by_response.values() for t in v]
    assert kinds.count("write") == 1
    assert kinds.count("command") > 10


def test_handoff_pays_for_reading_the_edited_file_again(tmp_path: Path) -> None:
    path = _read_early_edit_late(tmp_path / "p" / "s.jsonl")
    report = analyze_session(path, policies=[Policy("none"), Policy("handoff", 50)])
    none, handoff = report.replays
    assert none.range_usd == (none.cost_usd, none.cost_usd)
    assert handoff.rollovers >= 1
    # Low end: the edit of the big file reads it again, measured from the recording
    # (the growth its result caused, shared with the other file by size).
    assert handoff.rereads == 1
    assert handoff.reread_tokens == pytest.approx(40_000, rel=0.02)
    # High end: the command naming the small file reads that one again too.
    assert handoff.high_rereads == 2
    assert handoff.high_reread_tokens == pytest.approx(50_000, rel=0.02)
    low, high = handoff.range_usd or (0.0, 0.0)
    assert low < high
    # Without the re-reads the replay would be cheaper than its low end.
    bare = replay(
        report.transcript.responses, report.assumptions, Policy("handoff", 50), DEFAULT_PRICES
    )
    assert bare.cost_usd is not None
    assert bare.cost_usd < low
    rows = [r for r in handoff.requests if r.kind == "reread"]
    assert len(rows) == 1
    assert rows[0].window > 1


def test_no_restart_no_reread(tmp_path: Path) -> None:
    path = _read_early_edit_late(tmp_path / "p" / "s.jsonl")
    report = analyze_session(path, policies=[Policy("compact"), Policy("handoff", 95)])
    for result in report.replays:
        assert result.rollovers + result.compactions == 0
        assert (result.rereads, result.high_rereads) == (0, 0)
        assert result.cost_usd == result.high_cost_usd


def _chain(
    contexts: list[int], *, segments: list[int] | None = None, minutes: Sequence[float] = ()
) -> list[Response]:
    """A recorded chain: each request reads its predecessor (a segment's first request
    rewrites everything), at the minutes given."""
    out: list[Response] = []
    prev = 0
    for i, c in enumerate(contexts):
        segment = segments[i] if segments else 0
        restart = i and segments and segments[i] != segments[i - 1]
        read = 0 if restart else min(prev, c - 1)
        minute = minutes[i] if minutes else i * 0.5
        stamp = (START + timedelta(minutes=minute)).isoformat()
        written = c - 1 - read
        usage = Usage(1, written, read, 100, written)
        out.append(Response(f"m{i}", "claude-opus-4-6", usage, segment=segment, timestamp=stamp))
        prev = c
    return out


def test_a_recorded_rewrite_is_not_copied_where_the_replay_did_not_restart() -> None:
    # The recording compacted before request 5 and rewrote its 40k-token chain there.
    contexts = [30_000, 60_000, 90_000, 120_000, 150_000, 40_000, 44_000]
    chain = _chain(contexts, segments=[0, 0, 0, 0, 0, 1, 1])
    assert chain[5].usage.cache_creation_input_tokens == 39_999
    a = Assumptions(limit=1_000_000, base_tokens=30_000)  # a window no policy restarts in
    result = replay(chain, a, Policy("handoff", 90), DEFAULT_PRICES)
    assert result.rollovers == 0
    at_five = next(r for r in result.requests if r.recorded == 5)
    # Its predecessor is still cached: nothing new to write, all of it read.
    assert at_five.usage.cache_creation_input_tokens == 0
    assert at_five.usage.cache_read_input_tokens == at_five.tokens - 1


def test_the_cache_expires_after_a_pause_under_every_policy() -> None:
    # 1-hour writes; the request 6 comes 70 minutes after the one before.
    contexts = [30_000 + 10_000 * i for i in range(8)]
    minutes = [0, 1, 2, 3, 4, 5, 75, 76]
    chain = _chain(contexts, minutes=minutes)
    a = Assumptions(limit=200_000, base_tokens=30_000, one_hour_writes=True)
    for policy in (Policy("compact"), Policy("handoff", 50)):
        result = replay(chain, a, policy, DEFAULT_PRICES)
        assert result.expired == 1
        after = next(r for r in result.requests if r.recorded == 6)
        assert after.usage.cache_read_input_tokens == 0
        assert after.usage.cache_creation_input_tokens == after.tokens - 1
    # With 5-minute writes the pauses of 1 minute keep it, the 70-minute one does not.
    assert a.cache_ttl_seconds == 3_600
    assert Assumptions(limit=200_000, base_tokens=1).cache_ttl_seconds == 300


def test_a_replayed_request_bigger_than_the_recorded_one_pays_for_the_expired_cache() -> None:
    # The recording wrote little after its pause (it read a cache this replay lost);
    # the replay, on a bigger context after a pause, writes the whole of it.
    contexts = [30_000 + 20_000 * i for i in range(8)]
    chain = _chain(contexts, minutes=[0, 1, 2, 3, 4, 5, 75, 76])
    a = Assumptions(limit=200_000, base_tokens=30_000, one_hour_writes=True, advisory_tokens=5_000)
    result = replay(chain, a, Policy("handoff", 80), DEFAULT_PRICES)
    after = next(r for r in result.requests if r.recorded == 6)
    assert after.usage.cache_creation_input_tokens == after.tokens - 1


def test_compact_fires_where_the_recording_did_manual_ones_kept() -> None:
    # A manual compaction at 100k (request 4) and an auto one at 155k (request 9).
    contexts = [30_000, 55_000, 80_000, 100_000, 40_000, 70_000, 100_000, 130_000, 155_000]
    contexts += [45_000, 60_000]
    segments = [0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2]
    chain = _chain(contexts, segments=segments)
    compactions = (Compaction(100_100, "manual", 4), Compaction(155_100, "auto", 9))
    a = measure_assumptions(chain, compactions, model="claude-opus-4-6")
    assert a.compact_at == 155_100
    assert "compact_at" in a.measured
    result = replay(chain, a, Policy("compact"), DEFAULT_PRICES, compactions=compactions)
    summaries = [i for i, r in enumerate(result.requests) if r.kind == "summary"]
    recorded_after = [result.requests[i + 1].recorded for i in summaries]
    assert recorded_after == [4, 9]
    # A session that never compacted compacts at the current version's rule.
    assert Assumptions(limit=200_000, base_tokens=1).compact_at == 167_000


def test_the_json_carries_each_range(tmp_path: Path) -> None:
    path = _read_early_edit_late(tmp_path / "p" / "s.jsonl")
    report = analyze_session(path, policies=[Policy("none"), Policy("handoff", 50)])
    none, handoff = report.as_json()["whatif"]["policies"]
    assert none["range_usd"] == [none["cost_usd"], none["cost_usd"]]
    low, high = handoff["range_usd"]
    assert low == handoff["cost_usd"] < high
    assert handoff["rereads"] == [1, 2]


def test_a_long_pause_in_the_session_file(tmp_path: Path) -> None:
    s = Session(tmp_path / "p" / "s.jsonl")
    for i in range(6):
        s.request(30_000 + 25_000 * i, after=timedelta(hours=2) if i == 4 else timedelta(seconds=9))
    report = analyze_session(s.write(), policies=[Policy("compact")])
    assert report.replays[0].expired == 1


def test_the_sweep_names_the_flat_region_by_the_high_estimates() -> None:
    points = [
        SweepPoint(30, 10.0, 6, 0, 60_000, 11.0),
        SweepPoint(35, 9.0, 5, 0, 70_000, 10.25),
        SweepPoint(40, 9.2, 4, 0, 80_000, 10.0),  # the best high estimate
        SweepPoint(45, 8.9, 3, 0, 90_000, 10.2),  # the best low one: not what decides
        SweepPoint(50, 9.5, 2, 0, 100_000, 10.29),
        SweepPoint(55, 9.9, 2, 0, 110_000, 10.5),
        SweepPoint(60, 9.4, 1, 0, 120_000, 10.1),  # within the margin, not a neighbour
    ]
    region = flat_region(points)
    assert region is not None
    assert region.best.threshold == 40
    assert (region.low, region.high) == (35, 50)  # within 3% of 10.0: up to 10.30
    assert region.middle.threshold == 45  # the middle of 35..50, ties upwards
    assert recommend(points) == region.middle
    assert 60 not in region
    assert flat_region([SweepPoint(30, None, 0, 0, 0)]) is None


def test_a_session_that_reaches_no_slider_is_not_affected(tmp_path: Path) -> None:
    s = Session(tmp_path / "p" / "short.jsonl")
    for i in range(4):
        s.request(20_000 + 1_000 * i)
    report = analyze_session(s.write(), policies=[Policy("none")], sweep=Sweep(30, 90, 10))
    assert not report.affected
    assert report.recommended() is None
    swept = report.as_json()["whatif"]["sweep"]
    assert (swept["affected"], swept["recommended_threshold"]) == (False, None)
    assert recommendation([report]) is None


def test_the_docs_state_the_margin_and_the_time_to_live() -> None:
    text = " ".join((Path(__file__).parents[2] / "docs" / "analyze.md").read_text().split())
    assert f"whose high estimate is within {SWEEP_MARGIN:.0%} of it (`SWEEP_MARGIN`)" in text
    assert "1 hour when most of the session's cache writes are 1-hour writes, else 5" in text
    assert (ONE_HOUR_TTL_SECONDS, FIVE_MINUTE_TTL_SECONDS) == (3_600, 300)
    assert f"{REREAD_CALL_TOKENS} tokens of output" in text
    assert f"placeholder ({MASK_PLACEHOLDER_TOKENS} tokens: `MASK_PLACEHOLDER_TOKENS`" in text


def test_odd_lines_are_passed_over_by_the_touch_reader(tmp_path: Path) -> None:
    path = _read_early_edit_late(tmp_path / "p" / "s.jsonl")
    text = path.read_text()
    odd = [
        '{"type":"assistant","message":{"id":"x","content":"tool_use as text"}}',
        '{"type":"assistant","message":{"id":"y","content":[{"type":"tool_use","input":7}]}}',
        '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":1}]}}',
        '{"type":"assistant","isSidechain":true,"message":{"id":"z","content":[{"type":'
        '"tool_use","id":"t","name":"Read","input":{"file_path":"/side"}}]}}',
    ]
    path.write_text(text + "\n".join(odd) + '\n{"type":"assistant","message":{"tool_use')
    touches = read_touches(path)
    assert set(touches.by_response) == set(
        read_touches(_read_early_edit_late(tmp_path / "q" / "s.jsonl")).by_response
    )
    with pytest.raises(TranscriptError):
        read_touches(tmp_path / "missing.jsonl")

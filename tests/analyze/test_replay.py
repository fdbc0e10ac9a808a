"""The what-if replay: ``none`` is the recording, no replay exceeds the limit, and the
handoff policy is decided by the policy core."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxrelay.analyze import (
    Assumptions,
    Policy,
    SweepPoint,
    analyze_session,
    measure_assumptions,
    recommend,
    replay,
)
from ctxrelay.budget import Action, Budget, Stage, simulate
from ctxrelay.pricing import DEFAULT_PRICES, cost
from ctxrelay.transcripts import Compaction, Response, Usage, scan
from tests.conftest import corpus_path

SPOTTER = "corpora/claude-code-transcripts/spotter"
SESSIONS = [
    "258c7280-ae70-4798-800f-63464d01a85d.jsonl",
    "4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
    "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl",
]
OPUS = DEFAULT_PRICES["claude-opus-4-6"]


def _chain(contexts: list[int], outputs: list[int] | None = None) -> list[Response]:
    """A recorded chain with a warm cache: each request reads its predecessor."""
    out: list[Response] = []
    prev = 0
    for i, c in enumerate(contexts):
        read = min(prev, c - 1)
        usage = Usage(1, c - 1 - read, read, outputs[i] if outputs else 100)
        out.append(Response(f"m{i}", "claude-opus-4-6", usage))
        prev = c
    return out


@pytest.mark.parametrize("name", SESSIONS)
def test_none_reproduces_the_recorded_usage_exactly(name: str) -> None:
    report = analyze_session(corpus_path(f"{SPOTTER}/{name}"))
    none = next(r for r in report.replays if r.policy.kind == "none")
    recorded = [r for r in none.requests if r.kind == "recorded"]
    assert [r.usage for r in recorded] == [r.usage for r in report.transcript.responses]
    assert [r.tokens for r in recorded] == report.transcript.context_curve
    assert none.usage == report.transcript.usage + report.summarizer_usage
    assert none.compactions == len(report.transcript.compactions) == 1
    assert none.cost_usd == pytest.approx(
        (report.main_cost_usd or 0) + (report.summarizer_cost_usd or 0)
    )


@pytest.mark.parametrize("name", SESSIONS)
def test_compact_replay_finds_the_recorded_compaction(name: str) -> None:
    report = analyze_session(corpus_path(f"{SPOTTER}/{name}"))
    compact = next(r for r in report.replays if r.policy.kind == "compact")
    (recorded,) = report.transcript.compactions
    (summary_at,) = [i for i, r in enumerate(compact.requests) if r.kind == "summary"]
    # The model compacts where Claude Code did, within two requests.
    assert abs(summary_at - recorded.after_requests) <= 2
    assert compact.peak_context_tokens <= report.assumptions.compact_limit


def test_compact_replay_matches_the_recording_where_the_point_matches() -> None:
    # In this session the modelled compaction falls on the recorded one, so the curve
    # after it is the recorded curve, to the token (base + summary + reload measured).
    report = analyze_session(corpus_path(f"{SPOTTER}/{SESSIONS[0]}"))
    compact = next(r for r in report.replays if r.policy.kind == "compact")
    ours = [r.tokens for r in compact.requests if r.kind == "recorded"]
    assert ours == report.transcript.context_curve


@pytest.mark.parametrize("name", SESSIONS)
def test_handoff_first_window_follows_the_policy_core(name: str) -> None:
    transcript = scan(corpus_path(f"{SPOTTER}/{name}"))
    a = measure_assumptions(transcript.responses, transcript.compactions, model=transcript.model)
    for threshold in (30, 45, 60, 75):
        result = replay(transcript.responses, a, Policy("handoff", threshold), DEFAULT_PRICES)
        budget = Budget(a.limit, a.output_reserve, threshold)
        curve = transcript.context_curve
        # The warning's advisory stays in the window: later requests carry it.
        steps = simulate(budget, curve, advisory_tokens=a.advisory_tokens)
        warned = next(
            (i for i, s in enumerate(steps) if s.decision.stage is Stage.WARNING), len(curve)
        )  # a jump can pass the warning point and the target at once: no warning then
        curve = curve[:warned] + [c + a.advisory_tokens for c in curve[warned:]]
        steps = simulate(budget, curve, advisory_tokens=a.advisory_tokens)
        due = next(
            i for i, s in enumerate(steps) if s.decision.action is Action.WARN
            and s.decision.stage is Stage.HANDOFF
        )  # fmt: skip
        first_notes = next(i for i, r in enumerate(result.requests) if r.kind == "notes")
        # The recorded requests before the notes are the handoff request and the lag.
        assert first_notes == due + 1 + a.handoff_lag
        assert result.requests[due].tokens == curve[due] + a.advisory_tokens
        if warned < due:
            assert result.requests[warned].tokens == curve[warned]
        assert result.requests[first_notes + 2].window == 2


def test_cold_cache_after_a_rollover() -> None:
    chain = _chain([30_000 + 4_000 * i for i in range(40)])
    a = Assumptions(limit=200_000, base_tokens=30_000, handoff_lag=0)
    result = replay(chain, a, Policy("handoff", 40), DEFAULT_PRICES)
    assert result.rollovers >= 1
    for i in result.restarts:
        first = result.requests[i]
        assert first.usage.cache_read_input_tokens == 0
        assert first.tokens == a.base_tokens + a.notes_tokens + a.reload_tokens + 4_000
    kinds = [r.kind for r in result.requests]
    assert kinds.count("notes") == kinds.count("new_context") == result.rollovers


def test_a_request_too_big_for_any_window_is_clamped_not_sent_oversized() -> None:
    chain = _chain([30_000, 60_000, 250_000, 260_000])
    a = Assumptions(limit=200_000, base_tokens=30_000)
    for policy in (Policy("compact"), Policy("handoff", 60)):
        result = replay(chain, a, policy, DEFAULT_PRICES)
        bound = a.compact_limit if policy.kind == "compact" else a.usable_limit
        assert result.peak_context_tokens <= bound
        assert result.clamped >= 1


def test_unpriced_model_has_no_cost() -> None:
    chain = _chain([30_000, 40_000])
    a = Assumptions(limit=200_000, base_tokens=30_000)
    assert replay(chain, a, Policy("compact"), None).cost_usd is None


growths = st.lists(
    st.one_of(st.integers(0, 3_000), st.integers(-2_000, 40_000), st.integers(0, 150_000)),
    min_size=1,
    max_size=120,
)


@settings(max_examples=150, deadline=None)
@given(
    growth=growths,
    base=st.integers(5_000, 60_000),
    outputs=st.integers(1, 30_000),
    threshold=st.floats(1, 99.9),
    limit=st.sampled_from([200_000, 1_000_000, 128_000]),
    lag=st.integers(0, 4),
)
def test_no_policy_replay_exceeds_the_usable_limit(  # noqa: PLR0917
    growth: list[int], base: int, outputs: int, threshold: float, limit: int, lag: int
) -> None:
    contexts = []
    c = base
    for g in growth:
        c = max(1, min(c + g, limit - 20_001))  # a real recording fits its window
        contexts.append(c)
    chain = _chain(contexts, [outputs] * len(contexts))
    a = Assumptions(limit=limit, base_tokens=contexts[0], handoff_lag=lag)
    for policy in (Policy("compact"), Policy("handoff", threshold)):
        result = replay(chain, a, policy, DEFAULT_PRICES)
        # compact is Claude Code alone: its requests fill the window but for the response
        bound = a.compact_limit if policy.kind == "compact" else a.usable_limit
        assert result.peak_context_tokens <= bound
        assert [r.recorded for r in result.requests if r.kind == "recorded"] == list(
            range(len(chain))
        )
        for r in result.requests:
            u = r.usage
            assert (
                u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens
                == r.tokens
            )
            assert (
                min(u.input_tokens, u.cache_creation_input_tokens, u.cache_read_input_tokens) >= 0
            )


@settings(max_examples=100, deadline=None)
@given(growth=growths, base=st.integers(1_000, 60_000), breaks=st.sets(st.integers(1, 119)))
def test_none_is_the_recording_for_any_chain(
    growth: list[int], base: int, breaks: set[int]
) -> None:
    contexts, c = [], base
    for g in growth:
        c = max(1, min(c + g, 179_999))
        contexts.append(c)
    segment = 0
    chain = []
    for i, r in enumerate(_chain(contexts)):
        segment += i in breaks
        chain.append(Response(r.message_id, r.model, r.usage, segment=segment))
    compactions = [Compaction(170_000, "auto", i) for i in sorted(breaks) if i < len(chain)]
    a = Assumptions(limit=200_000, base_tokens=contexts[0])
    result = replay(chain, a, Policy("none"), DEFAULT_PRICES, compactions=compactions)
    assert [r.usage for r in result.requests] == [r.usage for r in chain]
    assert OPUS is not None
    recorded: float = sum(cost(r.usage, OPUS) for r in chain)
    assert result.cost_usd == pytest.approx(recorded)


def test_recommend_takes_the_cheapest_and_breaks_ties_upwards() -> None:
    points = [
        SweepPoint(30, 5.0, 4, 0, 60_000),
        SweepPoint(40, 4.0, 3, 0, 80_000),
        SweepPoint(50, 4.0, 2, 0, 100_000),
        SweepPoint(60, None, 0, 0, 0),
    ]
    best = recommend(points)
    assert best is not None
    assert best.threshold == 50
    assert recommend([SweepPoint(30, None, 0, 0, 0)]) is None


def test_empty_session(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text('{"type":"file-history-snapshot"}\n')
    report = analyze_session(path)
    assert report.transcript.requests == 0
    assert all(r.requests == () for r in report.replays)
    assert report.as_json()["requests"] == 0


def test_warm_prefix_keeps_the_shared_prefix_cached() -> None:
    chain = _chain([30_000 + 4_000 * i for i in range(40)])
    cold = Assumptions(limit=200_000, base_tokens=30_000)
    warm = Assumptions(limit=200_000, base_tokens=30_000, warm_prefix_tokens=18_000)
    cold_result = replay(chain, cold, Policy("handoff", 40), DEFAULT_PRICES)
    warm_result = replay(chain, warm, Policy("handoff", 40), DEFAULT_PRICES)
    assert cold_result.restarts == warm_result.restarts
    for i in warm_result.restarts:
        assert warm_result.requests[i].usage.cache_read_input_tokens == 18_000
    assert (warm_result.cost_usd or 0) < (cold_result.cost_usd or 0)


def test_warm_prefix_is_measured_from_the_first_request() -> None:
    path = corpus_path(f"{SPOTTER}/{SESSIONS[0]}")
    report = analyze_session(path, warm_prefix=True)
    assert report.assumptions.warm_prefix_tokens == 17_842
    assert analyze_session(path).assumptions.warm_prefix_tokens == 0


def test_a_recorded_request_over_200k_means_the_long_window() -> None:
    chain = _chain([30_000, 150_000, 260_000])
    a = measure_assumptions(chain, [], model="claude-sonnet-4-5")
    assert a.limit == 1_000_000
    assert "limit" in a.measured
    assert measure_assumptions(chain[:2], [], model="claude-sonnet-4-5").limit == 200_000
    assert measure_assumptions(chain, [], model="claude-sonnet-4-5", limit=300_000).limit == 300_000


def test_notes_checkpoint_is_the_runtimes_cap_in_tokens() -> None:
    from ctxrelay.analyze._replay import CHARS_PER_TOKEN, NOTES_TOKENS
    from ctxrelay.runtime.tools import NOTES_MAX_BYTES

    assert NOTES_TOKENS == NOTES_MAX_BYTES // CHARS_PER_TOKEN
    assert Assumptions(limit=200_000, base_tokens=1).notes_tokens == NOTES_TOKENS


def test_the_analyzer_does_not_load_the_runtime() -> None:
    import subprocess
    import sys

    loaded = "any(m.startswith('ctxrelay.runtime') for m in sys.modules)"
    code = f"import sys, ctxrelay.analyze; print({loaded})"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "False"

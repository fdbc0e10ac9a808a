"""What the analyzer computes once must equal what it stands for, computed the long way:
a replay's sums and price against its requests one by one, the :class:`Chain` against
its responses, :meth:`Pricer.total_of` and :meth:`Bill.of_sum` against
:meth:`Pricer.total` and :meth:`Bill.of`, a report's derived fields against the
properties they replace, and the dedupe's fast path against the plain loop."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxrelay.analyze import Assumptions, Policy, analyze_transcript, replay
from ctxrelay.analyze._bill import Bill, Pricer, total_usage
from ctxrelay.analyze._replay import Chain, measure_assumptions
from ctxrelay.analyze._report import _Seen
from ctxrelay.pricing import DEFAULT_PRICES
from ctxrelay.transcripts import Compaction, Response, Transcript, Usage

# A linear model, one with a long-prompt tier (priced request by request), one the
# table does not know and none at all: every branch of the pricing rule.
MODELS = ["claude-opus-4-6", "claude-haiku-5-5", "claude-sonnet-4-5", "no-such-model", None]
PRICER = Pricer(DEFAULT_PRICES)

usages = st.builds(
    lambda fresh, written, read, output, share: Usage(
        fresh, written, read, output, written * share // 100
    ),
    st.integers(0, 5_000),
    st.integers(0, 60_000),
    st.integers(0, 180_000),
    st.integers(0, 30_000),
    st.integers(0, 100),
)


@st.composite
def chains(draw: st.DrawFn) -> tuple[list[Response], list[Compaction]]:
    """A recorded chain of mixed models and segments, with its compactions."""
    models = draw(st.sampled_from([MODELS[:1], MODELS[1:2], MODELS[:2], MODELS]))
    n = draw(st.integers(0, 60))
    out: list[Response] = []
    compactions: list[Compaction] = []
    segment = 0
    for i in range(n):
        if i and draw(st.integers(0, 30)) == 0:
            segment += 1
            compactions.append(Compaction(150_000, "auto", i, draw(st.sampled_from([0, 9_000]))))
        stamp = draw(st.sampled_from([None, "", f"2026-01-{1 + i % 28:02d}T00:00:00Z"]))
        out.append(
            Response(
                f"m{i}",
                draw(st.sampled_from(models)),
                draw(usages),
                segment=segment,
                timestamp=stamp,
            )
        )
    return out, compactions


policies = st.one_of(
    st.just(Policy("none")),
    st.just(Policy("compact")),
    st.floats(1, 99.9).map(lambda t: Policy("handoff", t)),
)


@settings(max_examples=150, deadline=None)
@given(chain=chains(), policy=policies, warm=st.integers(0, 20_000), lag=st.integers(0, 3))
def test_a_replays_sums_and_price_are_its_requests_summed_and_priced(
    chain: tuple[list[Response], list[Compaction]], policy: Policy, warm: int, lag: int
) -> None:
    responses, compactions = chain
    a = measure_assumptions(responses, compactions, model=None, limit=200_000)
    a = replace(a, warm_prefix_tokens=warm, handoff_lag=lag)
    summarizer = [[Response(f"s{k}", MODELS[k % 3], Usage(2, 300, 140_000, 3_000))] for k in
                  range(len(compactions))]  # fmt: skip
    result = replay(responses, a, policy, PRICER, compactions=compactions, summarizer=summarizer)
    requests = result.requests
    assert result.usage == total_usage(r.usage for r in requests)
    # The same float, not an approximation: the JSON rounds it to 6 places.
    assert result.cost_usd == PRICER.total((r.model, r.usage) for r in requests)
    assert result.peak_context_tokens == max((r.tokens for r in requests), default=0)
    assert result.added_requests == sum(r.kind != "recorded" for r in requests)
    assert result.as_dict()["requests"] == len(requests)
    assert result.restarts == [
        i for i in range(1, len(requests)) if requests[i].window != requests[i - 1].window
    ]
    assert replay(responses, a, policy, None, compactions=compactions).cost_usd is None
    # The rows are built once and kept.
    assert result.requests is requests


@settings(max_examples=150, deadline=None)
@given(chain=chains())
def test_the_chain_is_its_responses_read_once(
    chain: tuple[list[Response], list[Compaction]],
) -> None:
    responses, _ = chain
    c = Chain(responses)
    assert c.context == [r.context_tokens for r in responses]
    assert c.growth == [
        r.context_tokens - responses[i - 1].context_tokens
        if i and r.segment == responses[i - 1].segment
        else 0
        for i, r in enumerate(responses)
    ]
    assert c.usage == total_usage(r.usage for r in responses)
    assert c.peak == max((r.context_tokens for r in responses), default=0)
    assert c.models == {r.model for r in responses}
    stamps = [r.timestamp for r in responses if r.timestamp]
    assert (c.first, c.last) == ((min(stamps), max(stamps)) if stamps else (None, None))


@settings(max_examples=200, deadline=None)
@given(
    items=st.lists(st.tuples(st.sampled_from(MODELS), usages), max_size=40),
)
def test_total_of_a_sum_is_the_total_of_its_requests(
    items: list[tuple[str | None, Usage]],
) -> None:
    models = {m for m, _ in items}
    summed = total_usage(u for _, u in items)
    assert PRICER.total_of(models, summed, iter(items)) == PRICER.total(items)
    assert Bill.of_sum(models, len(items), summed, iter(items), PRICER) == Bill.of(items, PRICER)


def _transcript(responses: list[Response], compactions: list[Compaction]) -> Transcript:
    return Transcript(
        path="/p/project/s.jsonl",
        session_id="s",
        version=None,
        responses=tuple(responses),
        compactions=tuple(compactions),
    )


@settings(max_examples=60, deadline=None)
@given(chain=chains(), agent=st.lists(st.tuples(st.sampled_from(MODELS), usages), max_size=5))
def test_a_reports_derived_fields_are_what_they_stand_for(
    chain: tuple[list[Response], list[Compaction]], agent: list[tuple[str | None, Usage]]
) -> None:
    from ctxrelay.analyze._report import _subagent

    responses, compactions = chain
    stamped = [
        Response(f"a{i}", m, u, sidechain=True, timestamp=f"2025-12-{1 + i:02d}T00:00:00Z")
        for i, (m, u) in enumerate(agent)
    ]
    subagents = [_subagent("a", stamped, PRICER, None)] if stamped else []
    report = analyze_transcript(_transcript(responses, compactions), subagents=subagents)
    t = report.transcript
    assert report.total == report.main + report.summaries + sum(
        (a.bill for a in report.subagents), Bill()
    )
    assert report.main == Bill.of(((r.model, r.usage) for r in t.responses), PRICER)
    for agent_report in report.subagents:
        assert agent_report.usage == total_usage(r.usage for r in agent_report.responses)
    # Without its chain the report reads the transcript's own properties: same JSON.
    plain = replace(report, chain=None)
    assert plain.timestamps == report.timestamps
    assert plain.as_json() == report.as_json()
    stamps = [r.timestamp for r in (*t.responses, *stamped) if r.timestamp]
    assert report.timestamps == ((min(stamps), max(stamps)) if stamps else (None, None))
    assert report.as_json()["peak_context_tokens"] == t.peak_context_tokens
    assert report.as_json()["final_context_tokens"] == t.final_context_tokens
    assert report.as_json()["usage"] == t.usage.as_dict()


def _fresh_by_loop(
    keys: set[str], ids: dict[str, str], responses: list[Response]
) -> tuple[list[Response], int]:
    """The dedupe as a plain loop: the reference for the fast path."""
    kept, dropped = [], 0
    for r in responses:
        key = f"{r.message_id}:{ids.get(r.message_id, '')}"
        if key in keys:
            dropped += 1
            continue
        keys.add(key)
        kept.append(r)
    return kept, dropped


@settings(max_examples=150, deadline=None)
@given(
    files=st.lists(
        st.lists(st.tuples(st.sampled_from("abcdef"), st.sampled_from(["", "r1", "r2"]))),
        max_size=4,
    )
)
def test_the_dedupe_keeps_what_the_plain_loop_keeps(files: list[list[tuple[str, str]]]) -> None:
    seen = _Seen()
    reference: set[str] = set()
    for k, pairs in enumerate(files):
        responses = [Response(m, "claude-opus-4-6", Usage(1, 2, 3, 4)) for m, _ in pairs]
        ids = {m: r for m, r in pairs if r}
        t = Transcript(
            path=f"/p/{k}.jsonl",
            session_id=None,
            version=None,
            responses=tuple(responses),
            request_ids=ids,
        )
        fresh, dropped = seen.fresh(t)
        kept, expected = _fresh_by_loop(reference, ids, responses)
        assert dropped == expected
        assert list(fresh.responses) == kept
        assert seen.keys == reference


def test_the_analyzer_replays_every_policy_from_one_chain() -> None:
    chain = [Response(f"m{i}", "claude-opus-4-6", Usage(1, 4_000, 30_000 + 4_000 * i, 50))
             for i in range(40)]  # fmt: skip
    a = Assumptions(limit=200_000, base_tokens=chain[0].context_tokens)
    read = Chain(chain)
    for policy in (Policy("none"), Policy("compact"), Policy("handoff", 45)):
        assert replay(chain, a, policy, PRICER, chain=read) == replay(chain, a, policy, PRICER)
    with pytest.raises(ValueError, match="other responses"):
        replay(chain[:-1], a, Policy("compact"), PRICER, chain=read)

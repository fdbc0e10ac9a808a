"""What is counted, once, and at which price: per-response pricing, orphan and
sidechain-only files, dedupe across files, synthetic lines, unknown models, and a
``--json`` whose totals reconcile."""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxrelay.analyze import Policy, analyze_paths, analyze_session, report_json
from ctxrelay.analyze._discover import files_of as _files_of
from ctxrelay.pricing import DEFAULT_PRICES, Prices, cost
from ctxrelay.transcripts import Usage, scan
from tests.conftest import corpus_path
from tests.transcripts._lines import assistant, write

OPUS = "claude-opus-4-6"
HAIKU = "claude-haiku-4-5-20251001"


def _prices(model: str) -> Prices:
    found = DEFAULT_PRICES.lookup(model)
    assert found is not None
    return found


def _line(
    message_id: str, model: str, *, read: int, created: int = 500, stamp: str = "", **extra: Any
) -> dict[str, Any]:
    record = assistant(message_id, read=read, created=created, output=200, model=model)
    record["timestamp"] = stamp or f"2026-02-10T10:{len(message_id):02d}:00.000Z"
    record["requestId"] = f"req-{message_id}"
    record.update(extra)
    return record


def _switching(path: Path, models: list[str]) -> Path:
    return write(
        path,
        [
            _line(f"m{i}", model, read=20_000 + 1_000 * i, stamp=f"2026-02-10T10:{i:02d}:00Z")
            for i, model in enumerate(models)
        ],
    )


@pytest.mark.parametrize(
    "models",
    [
        [OPUS] * 3 + [HAIKU] * 6 + [OPUS] * 2,  # Opus, then Haiku, then Opus again
        [HAIKU] * 3 + [OPUS] * 6 + [HAIKU] * 2,  # and the other way round
    ],
)
def test_a_chain_that_switches_model_is_priced_per_response(
    tmp_path: Path, models: list[str]
) -> None:
    report = analyze_session(_switching(tmp_path / "s.jsonl", models))
    responses = report.transcript.responses
    expected = sum(cost(r.usage, _prices(r.model or "")) for r in responses)
    at_last_model = sum(cost(r.usage, _prices(models[-1])) for r in responses)
    assert report.cost_usd == pytest.approx(expected)
    assert report.cost_usd != pytest.approx(at_last_model)
    by_model = {line.model: line.requests for line in report.total.lines}
    assert by_model == {OPUS: models.count(OPUS), HAIKU: models.count(HAIKU)}
    # The what-if replay prices each request at the model that made it too.
    none, compact, handoff = report.replays
    assert none.cost_usd == pytest.approx(expected)
    for result in (compact, handoff):
        recorded = [r for r in result.requests if r.kind == "recorded"]
        assert [r.model for r in recorded] == models
        assert result.cost_usd == pytest.approx(
            sum(cost(r.usage, _prices(r.model or "")) for r in result.requests)
        )


def test_added_requests_are_priced_at_the_model_before_them(tmp_path: Path) -> None:
    # A chain that grows past the handoff target on Haiku, then switches to Opus: the
    # notes and new_context requests the policy adds are Haiku's.
    models = [HAIKU] * 14 + [OPUS] * 6
    records = [
        _line(f"m{i:02d}", m, read=20_000 + 9_000 * i, stamp=f"2026-02-10T10:{i:02d}:00Z")
        for i, m in enumerate(models)
    ]
    report = analyze_session(
        write(tmp_path / "s.jsonl", records), policies=(Policy("handoff", 40),)
    )
    (result,) = report.replays
    added = [r for r in result.requests if r.kind != "recorded"]
    assert added
    for request in added:
        index = result.requests.index(request)
        before = next(r for r in reversed(result.requests[:index]) if r.kind == "recorded")
        assert request.model == before.model


def test_orphan_subagent_folders_and_sidechain_only_files_are_priced_rows(tmp_path: Path) -> None:
    folder = tmp_path / "proj" / "gone-session" / "subagents"
    folder.mkdir(parents=True)
    write(folder / "agent-a1.jsonl", [_line("a1", HAIKU, read=9_000, isSidechain=True)])
    write(folder / "agent-acompact-1.jsonl", [_line("c1", OPUS, read=150_000, isSidechain=True)])
    side = _line("s1", OPUS, read=30_000, isSidechain=True, agentId="old")
    write(tmp_path / "proj" / "side.jsonl", [side])
    reports = {r.kind: r for r in analyze_paths([tmp_path])}
    assert set(reports) == {"orphan_subagents", "sidechain_only"}
    orphan = reports["orphan_subagents"]
    assert orphan.session_id == "gone-session"
    assert orphan.project == "proj"
    assert [a.agent_id for a in orphan.subagents] == ["a1"]
    assert orphan.summaries.requests == 1
    assert orphan.total.requests == 2
    assert orphan.cost_usd is not None
    assert orphan.cost_usd > 0
    sidechain = reports["sidechain_only"]
    assert sidechain.transcript.requests == 0
    assert sidechain.cost_usd == pytest.approx(cost(sidechain.subagents[0].usage, _prices(OPUS)))


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("names", [("first", "second"), ("b-first", "a-second")])
def test_a_response_in_several_files_counts_once(
    tmp_path: Path, workers: int, names: tuple[str, str]
) -> None:
    # Each session is analysed alone (on two workers too, and whichever file is listed
    # first), then the later one again without the earlier one's responses.
    first, second = (f"{name}.jsonl" for name in names)
    shared = [
        _line(f"m{i}", OPUS, read=20_000 + i, stamp=f"2026-02-10T10:0{i}:00Z") for i in (1, 2)
    ]
    # A resumed session's file starts with a copy of the earlier one's responses.
    write(tmp_path / first, [_line("m0", OPUS, read=9_000, stamp="2026-02-10T09:00:00Z"), *shared])
    later = [*shared, _line("m3", OPUS, read=25_000, stamp="2026-02-10T11:00:00Z")]
    write(tmp_path / second, later)
    reports = analyze_paths([tmp_path], workers=workers)
    assert [(Path(r.transcript.path).name, r.transcript.requests) for r in reports] == [
        (first, 3),
        (second, 1),
    ]
    assert [r.duplicate_responses for r in reports] == [0, 2]
    totals = report_json(reports)["totals"]
    assert (totals["total"]["requests"], totals["duplicate_responses"]) == (4, 2)
    # A different request id is a different response, even with the same message id.
    write(tmp_path / "third.jsonl", [_line("m1", OPUS, read=1, requestId="req-other")])
    doc = report_json(analyze_paths([tmp_path], workers=workers))
    assert doc["totals"]["total"]["requests"] == 5


def test_synthetic_responses_are_skipped_and_counted(tmp_path: Path) -> None:
    fake = _line("syn-1", "<synthetic>", read=0, created=0)
    path = write(tmp_path / "s.jsonl", [_line("m1", OPUS, read=10_000), fake])
    report = analyze_session(path)
    assert (report.transcript.requests, report.synthetic_responses) == (1, 1)
    assert report.as_json()["synthetic_responses"] == 1


def test_an_unknown_model_is_named_and_never_priced_at_zero(tmp_path: Path) -> None:
    main = write(tmp_path / "s.jsonl", [_line("m1", OPUS, read=10_000)])
    folder = tmp_path / "s" / "subagents"
    folder.mkdir(parents=True)
    write(folder / "agent-x.jsonl", [_line("a1", "mystery-model-9", read=5_000)])
    data = analyze_session(main).as_json()
    assert data["cost_usd"] is None
    assert data["whatif"]["unpriced_models"] == ["mystery-model-9"]
    by_model = {m["model"]: m["cost_usd"] for m in data["total"]["by_model"]}
    assert by_model["mystery-model-9"] is None
    assert isinstance(by_model[OPUS], float)


def _price_back(usage: dict[str, int], model: str) -> float:
    one_hour = usage["cache_creation_1h_input_tokens"]
    return cost(
        Usage(
            usage["input_tokens"],
            usage["cache_creation_input_tokens"],
            usage["cache_read_input_tokens"],
            usage["output_tokens"],
            one_hour,
        ),
        _prices(model),
    )


def test_json_totals_reconcile_on_the_real_corpus() -> None:
    roots = [
        corpus_path("corpora/claude-code-transcripts"),
        corpus_path("corpora/claude-code-capture/projects"),
    ]
    doc = json.loads(json.dumps(report_json(analyze_paths(roots))))
    keys = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    run_requests = 0
    for s in doc["sessions"]:
        total = s["total"]
        parts = [s["usage"], *(a["usage"] for a in s["subagents"])]
        summaries = total["requests"] - s["requests"] - sum(a["requests"] for a in s["subagents"])
        assert summaries >= 0
        for key in keys:
            assert total["usage"][key] >= sum(p[key] for p in parts)
        # The tokens of each model price back to its cost (a model with a long-prompt
        # tier is priced request by request: its sum does not), and the models to the
        # session's.
        for line in total["by_model"]:
            if _prices(line["model"]).long_prompt is not None:
                continue
            assert _price_back(line["usage"], line["model"]) == pytest.approx(
                line["cost_usd"], abs=1e-5
            )
        assert sum(m["cost_usd"] for m in total["by_model"]) == pytest.approx(
            s["cost_usd"], abs=1e-5
        )
        assert total["cost_usd"] == s["cost_usd"]
        none = s["whatif"]["policies"][0]
        assert none["policy"] == "none"
        assert none["session_cost_usd"] == pytest.approx(s["cost_usd"], abs=1e-5)
        run_requests += total["requests"]
    totals = doc["totals"]
    assert totals["total"]["requests"] == run_requests
    assert totals["total"]["cost_usd"] == pytest.approx(totals["cost_usd"], abs=1e-5)
    assert totals["cost_usd"] == pytest.approx(sum(s["cost_usd"] for s in doc["sessions"]))
    # The sessions whose main chain switched model in the corpus are priced per model.
    models = {
        s["session_id"][:8]: {m["model"] for m in s["total"]["by_model"]} for s in doc["sessions"]
    }
    assert models["8463c716"] == {OPUS, HAIKU}


def test_msgspec_typed_whole_and_json_read_the_same_records(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """msgspec (typed, the keys the rules read; or whole lines) and the standard ``json``
    (whole lines) give the same transcripts on the real corpus."""
    import ctxrelay.transcripts._scan as reader

    root = corpus_path("corpora/claude-code-transcripts")
    files = _files_of(sorted(str(p) for p in root.rglob("*.jsonl")))
    default = [scan(p, agent=a) for p, a in files]
    assert any(t.responses for t in default)
    monkeypatch.setattr(reader, "_fields", lambda line: None)
    assert [scan(p, agent=a) for p, a in files] == default
    monkeypatch.setattr(reader, "loads", json.loads)
    assert [scan(p, agent=a) for p, a in files] == default


def test_analysing_on_every_core_gives_what_one_process_gives() -> None:
    root = corpus_path("corpora/claude-code-transcripts")
    interval = sys.getswitchinterval()
    serial = analyze_paths([root], workers=1)
    spread = analyze_paths([root], workers=2)
    assert sys.getswitchinterval() == interval  # as it was before the workers
    assert report_json(spread) == report_json(serial)
    assert spread == serial  # every replay's rows too
    assert gc.isenabled()  # the collector, paused for the run, runs again


def test_summed_pricing_equals_pricing_each_request() -> None:
    from ctxrelay.analyze._bill import Pricer

    pricer = Pricer(DEFAULT_PRICES)
    # Haiku 5.5 has a long-prompt tier (per request above 100k), Opus none.
    items = [
        ("claude-haiku-5-5", Usage(10, 5_000, 150_000, 300, 1_000)),
        ("claude-haiku-5-5", Usage(10, 5_000, 20_000, 300, 0)),
        (OPUS, Usage(3, 2_000, 90_000, 500, 2_000)),
        (OPUS, Usage(1, 0, 91_000, 50, 0)),
    ]
    each = [pricer.cost(u, m) for m, u in items]
    assert pricer.total(items) == pytest.approx(sum(c or 0.0 for c in each))
    assert pricer.total([*items, ("nobody-knows-1", Usage(1, 0, 0, 1, 0))]) is None


def test_a_started_read_gives_what_one_reader_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxrelay.analyze import _parallel
    from ctxrelay.analyze._discover import discover

    root = str(corpus_path("corpora/claude-code-transcripts"))
    started = _parallel.start_reading([root])
    assert started.sessions == discover([root])
    assert [f for files in started.files.values() for f in files] == _files_of(discover([root]))
    started.close()
    monkeypatch.setattr(_parallel, "MIN_PARALLEL_BYTES", 0)  # workers even on a small corpus
    assert report_json(analyze_paths([root], reading=_parallel.start_reading([root]))) == (
        report_json(analyze_paths([root], workers=1))
    )


def test_a_read_given_up_stops_its_workers() -> None:
    from ctxrelay.analyze import _parallel
    from ctxrelay.analyze._discover import discover

    reading = _parallel.Reading(
        discover([corpus_path("corpora/claude-code-transcripts")]), workers=2
    )
    sessions = reading.each(_parallel_work)
    assert next(sessions)  # the workers started with the first session
    pool = reading._pool
    assert pool is not None
    sessions.close()  # the caller gave up
    assert reading._pool is None
    with pytest.raises(RuntimeError):
        pool.submit(print)  # shut down


def _parallel_work(session: str, files: list[tuple[str, bool]], read: Any) -> str:
    return session


def test_a_1m_sonnet_session_is_replayed_in_its_window_at_its_long_prompt_rates(
    tmp_path: Path,
) -> None:
    # A Sonnet 4.5 chain that grows past 200k ran in the 1M window: it is replayed
    # against 1,000,000 tokens, and each request above 200k is priced at the long-prompt
    # rates, request by request, in the recording and in every replay.
    model = "claude-sonnet-4-5-20250929"
    reads = [30_000, 120_000, 190_000, 260_000, 330_000]
    path = write(
        tmp_path / "s.jsonl",
        [
            _line(f"m{i}", model, read=r, stamp=f"2026-02-10T10:{i:02d}:00Z")
            for i, r in enumerate(reads)
        ],
    )
    report = analyze_session(path, policies=(Policy("none"), Policy("compact")))
    assert report.assumptions.limit == 1_000_000
    sonnet = _prices(model)
    long_prompt = sonnet.long_prompt
    assert long_prompt is not None
    expected = sum(
        cost(Usage(1, 500, r, 200), long_prompt if r + 501 > 200_000 else sonnet) for r in reads
    )
    assert report.cost_usd == pytest.approx(expected)
    none, compact = report.replays
    assert none.cost_usd == pytest.approx(expected)
    assert compact.compactions == 0  # 330k is far from the 1M window's compaction point

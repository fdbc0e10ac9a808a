"""Sessions on disk: discovery, subagents, compaction summaries, the §7 JSON shape."""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

import pytest

from ctxrelay.analyze import (
    analyze_paths,
    analyze_session,
    discover,
    parse_policies,
    parse_sweep,
    report_json,
)
from ctxrelay.analyze._bill import Pricer, total_usage
from ctxrelay.errors import ConfigError, TranscriptError
from ctxrelay.pricing import DEFAULT_PRICES, cost
from tests.conftest import corpus_path
from tests.transcripts._lines import assistant, user, write

SPOTTER = "corpora/claude-code-transcripts/spotter"
PRICER = Pricer(DEFAULT_PRICES)

SESSION_KEYS = {
    "session_id", "name", "kind", "format", "parent_session_id", "project", "path",
    "first_timestamp", "last_timestamp", "model",
    "requests", "peak_context_tokens", "final_context_tokens", "compactions", "usage",
    "total", "cost_usd", "recorded_cost_usd", "synthetic_responses", "duplicate_responses",
    "subagents", "whatif",
}  # fmt: skip
USAGE_KEYS = {
    "input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens",
}  # fmt: skip

EXPECTED = {
    # session id: (requests, [subagent id: requests])
    "258c7280-ae70-4798-800f-63464d01a85d": (152, {"a881341": 3}),
    "4d5611e5-241a-462a-8d15-5122611a9569": (139, {"a2898e3": 12}),
    "8463c716-a2ea-4c14-9efa-87158ebd9f20": (143, {"a7be2f0": 13}),
    "55604662-cf2a-4331-851a-ec234028f8ca": (1, {}),  # short.jsonl
    "491e126e-1e71-469c-ade2-fcc8af567c74": (12, {}),  # subagent.jsonl
    "d6e0bada-1959-4eec-a9d2-0bfade768d8f": (4, {}),  # tool_heavy.jsonl
}


def test_every_spotter_session_with_exact_counts_and_the_section_7_shape() -> None:
    root = corpus_path("corpora/claude-code-transcripts")
    sweep = parse_sweep("30..90")
    doc = json.loads(json.dumps(report_json(analyze_paths([root], sweep=sweep), sweep)))
    sessions = {s["session_id"]: s for s in doc["sessions"]}
    assert set(sessions) == set(EXPECTED)
    for session_id, (requests, agents) in EXPECTED.items():
        s = sessions[session_id]
        assert set(s) == SESSION_KEYS
        assert s["requests"] == requests
        assert set(s["usage"]) == USAGE_KEYS
        assert {a["agent_id"]: a["requests"] for a in s["subagents"]} == agents
        for agent in s["subagents"]:
            assert set(agent) == {
                "agent_id", "requests", "peak_context_tokens", "usage", "model", "cost_usd",
            }  # fmt: skip
            assert set(agent["usage"]) == USAGE_KEYS
        for c in s["compactions"]:
            assert set(c) == {"pre_tokens"}
        assert s["model"] == "claude-opus-4-6"
        assert isinstance(s["cost_usd"], float)
        swept = s["whatif"]["sweep"]
        if s["requests"] > 100:
            assert swept["affected"]
            assert swept["recommended_threshold"] in sweep.thresholds()
            low, high = swept["recommended_region"]
            assert low <= swept["recommended_threshold"] <= high
        else:  # a short session reaches no slider: not affected, no recommendation
            assert not swept["affected"]
            assert swept["recommended_threshold"] is None
        assert [p["policy"] for p in s["whatif"]["policies"]] == ["none", "compact", "handoff:60"]
    pre = {k: [c["pre_tokens"] for c in s["compactions"]] for k, s in sessions.items()}
    assert pre["258c7280-ae70-4798-800f-63464d01a85d"] == [167_094]
    assert pre["4d5611e5-241a-462a-8d15-5122611a9569"] == [170_251]
    assert pre["8463c716-a2ea-4c14-9efa-87158ebd9f20"] == [167_731]
    assert doc["totals"]["requests"] == sum(r for r, _ in EXPECTED.values())
    assert doc["totals"]["sweep"]["recommended_threshold"] in sweep.thresholds()


def test_usage_and_cost_add_up() -> None:
    path = corpus_path(f"{SPOTTER}/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl")
    report = analyze_session(path)
    data = report.as_json()
    assert data["usage"] == report.transcript.usage.as_dict()
    assert data["usage"]["cache_read_input_tokens"] == 15_740_561
    (agent,) = report.subagents
    assert agent.model == "claude-haiku-4-5-20251001"
    haiku = DEFAULT_PRICES.lookup(agent.model)
    assert haiku is not None
    assert agent.cost_usd == pytest.approx(cost(agent.usage, haiku))
    # One summarizer file, matched to the one compaction, priced at its own model.
    assert len(report.summarizer) == 1
    assert report.summarizer[0][0].context_tokens == 169_910
    assert agent.cost_usd is not None
    assert data["cost_usd"] == pytest.approx(
        (report.main_cost_usd or 0) + (report.summarizer_cost_usd or 0) + (agent.cost_usd or 0),
        abs=1e-5,
    )


def test_discovery_skips_subagent_files_and_takes_files(tmp_path: Path) -> None:
    root = corpus_path(SPOTTER)
    found = discover([root])
    assert len(found) == 6
    assert not any("subagents" in Path(p).parts for p in found)
    assert found == sorted(found, key=lambda p: Path(p).parts)  # in pathlib's order
    single = root / "short.jsonl"
    assert discover([single, str(single)]) == [str(single)]
    with pytest.raises(ConfigError, match="no transcript or directory"):
        discover([tmp_path / "nope"])


def test_capture_2_1_197_with_its_subagent(tmp_path: Path) -> None:
    projects = corpus_path("corpora/claude-code-capture/projects")
    (report,) = analyze_paths([projects])
    assert report.transcript.requests == 4
    assert report.transcript.model == "claude-opus-4-8"
    (agent,) = report.subagents
    assert (agent.agent_id, agent.requests, agent.peak_context_tokens) == (
        "a0ccb5802f157f5c2",
        3,
        106_005,
    )
    assert report.cost_usd is not None  # a newer Opus: priced at the family's latest


def test_inline_sidechains_become_subagents(tmp_path: Path) -> None:
    side = assistant("s1", read=50_000, sidechain=True)
    side["agentId"] = "old-agent"
    path = write(tmp_path / "old.jsonl", [assistant("m1", read=30_000), side])
    report = analyze_session(path)
    assert report.transcript.requests == 1
    (agent,) = report.subagents
    assert (agent.agent_id, agent.requests, agent.peak_context_tokens) == ("old-agent", 1, 50_001)


def test_unknown_model_is_reported_unpriced(tmp_path: Path) -> None:
    path = write(tmp_path / "local.jsonl", [assistant("m1", read=1000, model="llama-local")])
    report = analyze_session(path)
    data = report.as_json()
    assert data["cost_usd"] is None
    assert data["whatif"]["unpriced_models"] == ["llama-local"]
    assert all(p["cost_usd"] is None for p in data["whatif"]["policies"])


def test_totals_claim_no_cost_for_sessions_that_could_not_be_priced(tmp_path: Path) -> None:
    unparsable = write(tmp_path / "garbage.jsonl", [{"also": "nothing"}, b"not json at all"])
    local = write(tmp_path / "local.jsonl", [assistant("m1", read=1000, model="llama-local")])
    priced = write(tmp_path / "priced.jsonl", [assistant("m2", read=1000, output=50)])

    # A named file of neither agent's shape is refused with its reason; one of Claude
    # Code's shape with nothing in it is reported: no request was sent, so it costs a
    # true 0, not an unknown.
    with pytest.raises(TranscriptError, match="not a Claude Code transcript, a Codex"):
        analyze_session(unparsable)
    unparsable = write(tmp_path / "snapshots.jsonl", [user("hi"), b"not json at all"])
    alone = report_json([analyze_session(unparsable)])
    assert alone["sessions"][0]["cost_usd"] == 0.0
    totals = alone["totals"]
    assert (totals["cost_usd"], totals["unpriced_sessions"], totals["unpriced_models"]) == (
        0.0,
        0,
        [],
    )
    # Only priced sessions are summed, and a sum over none is null, never a claimed 0.
    unknown = report_json([analyze_session(local)])["totals"]
    assert (unknown["cost_usd"], unknown["unpriced_sessions"]) == (None, 1)
    assert all(p["cost_usd"] is None and p["sessions"] == 0 for p in unknown["policies"])

    mixed = report_json([analyze_session(p) for p in (unparsable, local, priced)])
    cost_of = {s["path"]: s["cost_usd"] for s in mixed["sessions"]}
    known = cost_of[str(priced)]
    assert isinstance(known, float)
    assert known > 0
    totals = mixed["totals"]
    # The priced session's cost, the other two counted and named, not added as 0.
    assert totals["cost_usd"] == known
    assert (totals["unpriced_sessions"], totals["unpriced_models"]) == (1, ["llama-local"])
    assert totals["total"]["cost_usd"] is None  # the run holds a model without a price
    assert all(p["sessions"] == 2 for p in totals["policies"])


def test_a_copied_session_keeps_its_subagents(tmp_path: Path) -> None:
    src = corpus_path(SPOTTER)
    name = "258c7280-ae70-4798-800f-63464d01a85d"
    shutil.copy(src / f"{name}.jsonl", tmp_path / f"{name}.jsonl")
    shutil.copytree(src / name, tmp_path / name)
    (report,) = analyze_paths([tmp_path])
    assert [a.agent_id for a in report.subagents] == ["a881341"]


def test_a_report_crosses_processes_whole() -> None:
    # The workers send reports back pickled: a replay's rows not yet written (a function
    # and its arguments, not a closure) are written on the other side, the same.
    policies = parse_policies(["none", "compact", "handoff:40", "handoff:60+mask:10"])
    sweep = parse_sweep("30..90")
    reports = analyze_paths([corpus_path(SPOTTER)], policies=policies, sweep=sweep, workers=1)
    lazy = [r for report in reports for r in report.replays if r.rows._build is not None]
    assert {str(r.policy) for r in lazy} == {str(p) for p in policies}
    for report in reports:
        back = pickle.loads(pickle.dumps(report))
        assert back.as_json() == report.as_json()
        assert back.transcript == report.transcript
        assert back.chain is not None
        assert back.chain.responses is back.transcript.responses
        assert [r.requests for r in back.replays] == [r.requests for r in report.replays]
        # the rows written later (unpriced: the sums are known) are the priced replay's
        for result in back.replays:
            assert total_usage(q.usage for q in result.requests) == result.usage
            assert PRICER.total((q.model, q.usage) for q in result.requests) == result.cost_usd

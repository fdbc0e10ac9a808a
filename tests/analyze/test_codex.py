"""``ctxrelay analyze`` on Codex rollouts: each file a session, each response priced at
its own model, the replays, the reports, and Claude Code transcripts beside them."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from ctxrelay.analyze import Policy, analyze_paths, report_json
from ctxrelay.analyze._bill import Pricer
from ctxrelay.analyze._groups import group_reports
from ctxrelay.cli import main
from ctxrelay.pricing import DEFAULT_PRICES
from tests.transcripts._codex_lines import CCUSAGE_CASES, THREAD, Rollout, write_ccusage_cases
from tests.transcripts._lines import assistant, write

if TYPE_CHECKING:
    from pathlib import Path

SUBAGENT = "01a23321-3468-7a32-a69f-4a86e8c6782d"
POLICIES = (Policy("none"), Policy("compact"), Policy("handoff", 45))


def _usd(fresh: int, cached: int, output: int, rates: tuple[float, float, float]) -> float:
    return (fresh * rates[0] + cached * rates[1] + output * rates[2]) / 1_000_000


def _home(tmp_path: Path) -> Path:
    """A Codex home with a thread on two models with a compaction, its subagent, and a
    later segment of the thread (a revert) that repeats a response id."""
    day = tmp_path / "codex" / "sessions" / "2026" / "12" / "01"
    day.mkdir(parents=True)
    main_ = Rollout(cwd="/home/u/app").turn("gpt-5.5")
    main_.response("resp_1", 25_000, 24_500, output=40, reasoning=8)
    main_.response("resp_2", 30_000, 29_500, output=60)
    main_.compaction("s" * 2_000).turn("gpt-5.4", "turn-2").response("resp_3", 9_000, 0)
    main_.write(day / f"rollout-2026-12-01T19-00-00-{THREAD}.jsonl")
    sub = Rollout(SUBAGENT, cwd="/home/u/app", parent=THREAD).turn("gpt-5.3-codex")
    sub.response("resp_1", 12_000, 11_000, output=100).write(
        day / f"rollout-2026-12-01T19-00-05-{SUBAGENT}.jsonl"
    )
    segment = "01a23329-eac5-7e13-ac5c-265f3b2457a6"
    later = Rollout(cwd="/home/u/lib", start="2026-12-02T10:00:00").turn("gpt-5.5")
    later.response("resp_1", 40_000, 39_000).write(
        day / f"rollout-2026-12-01T19-10-00-{THREAD}_{segment}.jsonl"
    )
    return tmp_path / "codex"


def test_each_rollout_is_a_session_priced_per_model(tmp_path: Path) -> None:
    home = _home(tmp_path)
    reports = analyze_paths([home / "sessions"], policies=POLICIES)
    doc = report_json(reports)
    by_id = {s["session_id"]: s for s in doc["sessions"]}
    segment = f"{THREAD}_01a23329-eac5-7e13-ac5c-265f3b2457a6"
    assert set(by_id) == {THREAD, SUBAGENT, segment}
    main_ = by_id[THREAD]
    assert (main_["format"], main_["parent_session_id"], main_["project"]) == (
        "codex",
        None,
        "/home/u/app",
    )
    assert main_["requests"] == 3
    assert main_["compactions"] == [{"pre_tokens": 30_060}]
    assert main_["usage"] == {
        "input_tokens": 500 + 500 + 9_000,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 24_500 + 29_500,
        "output_tokens": 40 + 60 + 40,
    }
    gpt55, gpt54 = (5.0, 0.5, 30.0), (2.5, 0.25, 15.0)
    expected = _usd(1_000, 54_000, 100, gpt55) + _usd(9_000, 0, 40, gpt54)
    assert main_["cost_usd"] == pytest.approx(expected, abs=1e-6)
    assert {m["model"]: m["requests"] for m in main_["total"]["by_model"]} == {
        "gpt-5.5": 2,
        "gpt-5.4": 1,
    }
    sub = by_id[SUBAGENT]
    assert sub["parent_session_id"] == THREAD
    assert sub["cost_usd"] == pytest.approx(_usd(1_000, 11_000, 100, (1.75, 0.175, 14.0)))
    # The segment's resp_1 is another response than the thread's first resp_1: counted.
    assert by_id[segment]["requests"] == 1
    assert by_id[segment]["duplicate_responses"] == 0
    assert doc["totals"]["requests"] == 5
    # none replays the recording to the cent; the others replay the chain
    for session in doc["sessions"]:
        policies = {p["policy"]: p for p in session["whatif"]["policies"]}
        assert policies["none"]["cost_usd"] == pytest.approx(session["cost_usd"], abs=1e-6)
        assert set(policies) == {"none", "compact", "handoff:45"}


def test_reports_by_project_and_day(tmp_path: Path) -> None:
    reports = analyze_paths([_home(tmp_path) / "sessions"], policies=POLICIES)
    pricer = Pricer(DEFAULT_PRICES)
    projects = {r.key: r.requests for r in group_reports(reports, pricer, by="project")}
    assert projects == {"/home/u/app": 4, "/home/u/lib": 1}  # each rollout's cwd
    days = group_reports(reports, pricer, by="day")
    assert sum(r.requests for r in days) == 5
    assert len(days) == 2  # the segment ran a day later


def test_codex_and_claude_files_in_one_run(tmp_path: Path) -> None:
    home = _home(tmp_path)
    claude = tmp_path / "projects" / "-home-me-app"
    claude.mkdir(parents=True)
    write(claude / "s.jsonl", [assistant("m1", read=5_000, output=50)])
    doc = report_json(analyze_paths([home / "sessions", tmp_path / "projects"]))
    # the same on workers: each rollout read and analysed in the process that takes it
    spread = analyze_paths([home / "sessions", tmp_path / "projects"], workers=3)
    assert report_json(spread) == doc
    formats = sorted(s["format"] for s in doc["sessions"])
    assert formats == ["claude", "codex", "codex", "codex"]
    (mine,) = (s for s in doc["sessions"] if s["format"] == "claude")
    assert (mine["project"], mine["parent_session_id"]) == ("-home-me-app", None)


def test_the_default_reads_codex_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CODEX_HOME", str(_home(tmp_path)))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "no-claude"))
    monkeypatch.setenv("OPENCODE_DB", str(tmp_path / "no-opencode.db"))
    assert main(["analyze", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["sessions"]) == 3
    assert main(["analyze", "--by", "project"]) == 0
    out = capsys.readouterr().out
    assert "/home/u/app" in out
    assert "/home/u/lib" in out


def test_msgspec_typed_whole_and_json_read_the_same_rollouts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import msgspec

    import ctxrelay.transcripts._codex as reader
    from ctxrelay.transcripts import read_rollout

    files = sorted((_home(tmp_path) / "sessions").rglob("*.jsonl"))
    default = [read_rollout(p) for p in files]
    assert all(r.responses for r in default)

    def refuse(line: bytes | bytearray) -> object:
        raise msgspec.DecodeError("refused")

    monkeypatch.setattr(reader, "_decode_line", refuse)
    assert [read_rollout(p) for p in files] == default
    monkeypatch.setattr(reader, "loads", json.loads)
    assert [read_rollout(p) for p in files] == default


def test_the_shapes_ccusage_reads_are_read_to_its_tokens_and_gpt_5_prices(tmp_path: Path) -> None:
    # Each file of ccusage's loader tests is a Codex session, told by its lines' shape
    # (not a session_meta first line); none is skipped or left out.
    sessions = tmp_path / "codex" / "sessions"
    write_ccusage_cases(sessions)
    skips: list[tuple[str, Exception]] = []
    reports = analyze_paths([sessions], on_skip=lambda p, e: skips.append((p, e)))
    assert skips == []
    doc = report_json(reports)
    got = {s["name"]: s for s in doc["sessions"]}
    assert set(got) == set(CCUSAGE_CASES)
    rates = {"gpt-5": (1.25, 0.125, 10.0), "gpt-5.4": (2.5, 0.25, 15.0)}
    for name, (model, (fresh, cached, output)) in CCUSAGE_CASES.items():
        s = got[name]
        usage = s["total"]["usage"]
        assert s["format"] == "codex", name
        assert s["model"] == model, name
        assert (
            usage["input_tokens"],
            usage["cache_read_input_tokens"],
            usage["output_tokens"],
        ) == (fresh, cached, output), name
        price = rates["gpt-5.4" if model == "gpt-5.4" else "gpt-5"]  # gpt-5-codex: gpt-5's
        assert s["cost_usd"] == pytest.approx(_usd(fresh, cached, output, price), abs=1e-6)

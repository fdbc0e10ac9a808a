"""``ctxrelay analyze --sweep --apply``: the recommended slider goes into the Claude Code
config with its evidence, ``claude config`` shows it, and the Stop hook follows it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxrelay.claude.config import EVIDENCE_KEY, load, set_value
from ctxrelay.cli import main
from tests.claude._handoff import Transcript, isolate, run_hook, stop_payload
from tests.conftest import corpus_path

CORPUS = "corpora/claude-code-transcripts"


@pytest.fixture
def project(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    return isolate(monkeypatch, tmp_path)


def test_apply_round_trip_on_the_shared_corpus(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = corpus_path(CORPUS)
    sweep = ["analyze", str(root), "--sweep", "30..90:5"]
    assert main([*sweep, "--json"]) == 0
    recommended = json.loads(capsys.readouterr().out)["totals"]["recommendation"]

    assert main([*sweep, "--apply", "--project-dir", str(project)]) == 0
    out = capsys.readouterr().out
    slider = recommended["threshold"]
    assert f"Set the Claude Code slider to {slider:g}%" in out
    assert "(was 60%, default)" in out
    assert f"{recommended['sessions']} sessions from 2026-02-11 to 2026-02-12" in out
    low, high = recommended["region"]
    assert low <= slider <= high
    assert f"the flat region {low:g}–{high:g}%" in out

    stored = json.loads((project / ".ctxrelay" / "config.json").read_text())["claude"]
    assert stored["threshold"] == slider
    evidence = stored[EVIDENCE_KEY]
    for key in (
        "sessions",
        "first_timestamp",
        "last_timestamp",
        "recorded_cost_usd",
        "region",
        "range_usd",
        "margin",
    ):
        assert evidence[key] == recommended[key]
    assert evidence["cost_usd"] == recommended["cost_usd"]
    assert evidence["cost_usd"] < evidence["recorded_cost_usd"]
    assert evidence["sweep"] == "30..90:5"

    cfg = load(project)
    assert (cfg.threshold, cfg.threshold_source) == (slider, "project")
    assert cfg.threshold_evidence == evidence
    assert main(["claude", "config", "--project-dir", str(project)]) == 0
    shown = capsys.readouterr().out
    assert f"threshold  {slider:g}% of the window (project)" in shown
    said = " ".join(shown.split())  # the evidence sentence wraps at the terminal's width
    assert "set by ctxrelay analyze --apply" in said
    assert f"${evidence['recorded_cost_usd']:,.2f} as recorded" in said

    # The Stop hook now hints at the applied slider, not at 60%.
    t = Transcript(tmp_path / "home" / ".claude" / "projects" / "p" / "t.jsonl")
    at = 200_000 * int(slider) // 100
    t.prompt("go on")
    t.assistant(context=at - 1, text="done")
    payload = {**stop_payload(t, project), "session_id": "5f0c7a2e-1111-4222-8333-9444555500aa"}
    assert run_hook(payload) is None
    t.prompt("more")
    t.assistant(context=at, text="done")
    answer = run_hook(payload)
    assert answer is not None
    assert f"(the handoff point is {slider:g}%)" in answer["systemMessage"]

    # Set by hand, the analyzer's evidence no longer holds and is dropped.
    set_value("threshold", "50", project_dir=project)
    assert load(project).threshold_evidence is None


def test_apply_to_the_user_config_in_json(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = corpus_path(CORPUS)
    assert main(["analyze", str(root), "--sweep", "40..60:10", "--apply", "--user", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    applied = doc["applied"]
    assert applied["scope"] == "user"
    assert Path(applied["path"]) == tmp_path / "config" / "ctxrelay" / "config.json"
    assert applied["threshold"] == doc["totals"]["recommendation"]["threshold"]
    cfg = load(project)
    assert (cfg.threshold, cfg.threshold_source) == (applied["threshold"], "user")


def test_apply_refuses_when_no_session_reached_any_target(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = corpus_path(CORPUS)
    # No session of the corpus gets to 85% before its usable limit: nothing to compare.
    code = main(
        ["analyze", str(root), "--sweep", "85..90", "--apply", "--project-dir", str(project)]
    )
    assert code == 1
    _, err = capsys.readouterr()
    assert "too little to go on" in err
    assert "no slider was chosen" in err
    assert not (project / ".ctxrelay" / "config.json").exists()


def test_apply_needs_a_sweep_and_where_needs_apply(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["analyze", str(project), "--apply"]) == 1
    err = capsys.readouterr().err
    assert "--apply writes the slider a sweep recommends" in err
    assert main(["analyze", str(project), "--user"]) != 0
    assert "add --apply" in capsys.readouterr().err
